package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/demo"
	"github.com/dreamkit/dream/llm/llmtest"
)

// The tests here paste what `dream` tells a user to type next — every
// "undo it: dream undo ID", "dream diff ID · dream apply ID", every command
// `dream demo` suggests and the line that removes the demo — into a real
// /bin/sh exactly as printed, and check each did what it said.

// hintStart finds where a pasteable command begins: at the start of a line
// (after indentation), or right after a label's ": " or a list's " · ".
var hintStart = regexp.MustCompile(`(?:^[ \t]*|: |· )((?:dream|rm) )`)

// hintVerbs are the commands a hint may name; "dream 2026…: completed" and
// "dream demo: a memory…" are sentences, not commands.
var hintVerbs = map[string]bool{"show": true, "undo": true, "diff": true, "apply": true, "discard": true,
	"log": true, "tasks": true, "status": true, "run": true, "maybe": true, "help": true, "kill": true, "doctor": true}

// placeholderWord is a word a person would have to replace: a hint with one is
// a template, which a user cannot paste.
var placeholderWord = regexp.MustCompile(`^(ID|DIR|PATH|N|NAME|FILE|DURATION)$`)

// hintsIn returns the commands out tells its reader to run, in order, each
// exactly as printed (quotes and all). A command ends at an unquoted " · ",
// ";", "  #" (a comment) or the end of its line.
func hintsIn(out string) []string {
	var hints []string
	for _, line := range strings.Split(out, "\n") {
		for _, m := range hintStart.FindAllStringSubmatchIndex(line, -1) {
			cmd := hintEnd(line[m[2]:])
			words := shellWords(cmd)
			if len(words) < 2 || words[0] == "dream" && !hintVerbs[words[1]] || words[0] == "rm" && words[1] != "-rf" {
				continue
			}
			hints = append(hints, cmd)
		}
	}
	return hints
}

// hintEnd cuts s at the end of the command it starts with, minding quotes.
func hintEnd(s string) string {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ';', strings.HasPrefix(s[i:], " · "), strings.HasPrefix(s[i:], "  #"):
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

// shellWords splits a command as sh would for the quoting dream uses
// (single quotes, double quotes, backslashes), to check its words.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote, escaped := false, rune(0), false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped, in = false, true
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, in = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

func TestHintParsing(t *testing.T) {
	out := "dream 20261201-120000-ab12: completed in 0.1s · 0 turn(s)\n" +
		"Improved 1 memory: prefs.md\n" +
		"see the diff: dream show 20261201-120000-ab12 --state-dir '/s/my state' · undo it: dream undo 20261201-120000-ab12 --state-dir '/s/my state'\n" +
		"dream demo: a memory with planted defects\n" +
		"  dream status --host claude            # Claude Code's memory\n" +
		"remove it with: rm -rf '/tmp/dream demo 1'\n" +
		"applied X: 1 file(s) changed; undo with: dream undo X\n"
	want := []string{
		"dream show 20261201-120000-ab12 --state-dir '/s/my state'",
		"dream undo 20261201-120000-ab12 --state-dir '/s/my state'",
		"dream status --host claude",
		"rm -rf '/tmp/dream demo 1'",
		"dream undo X",
	}
	got := hintsIn(out)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("hints:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w := shellWords(got[0]); len(w) != 5 || w[4] != "/s/my state" {
		t.Errorf("words of %q: %q", got[0], w)
	}
	if w := shellWords(`dream show 'it'\''s' "a b" c\ d`); strings.Join(w, "|") != "dream|show|it's|a b|c d" {
		t.Errorf("quoting: %q", w)
	}
}

// paster runs pasted hints through /bin/sh with the test's dream first on
// PATH, as a user's shell would.
type paster struct {
	t   *testing.T
	env []string
	dir string
}

func newPaster(t *testing.T, env []string, dir string) *paster {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to paste into")
	}
	bin := filepath.Join(t.TempDir(), "bin")
	mustMkdir(t, bin)
	if err := os.Symlink(binPath, filepath.Join(bin, "dream")); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	out = append(out, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &paster{t: t, env: out, dir: dir}
}

// paste runs one hint exactly as printed and fails the test unless it
// exits 0.
func (p *paster) paste(hint string) result {
	p.t.Helper()
	for _, w := range shellWords(hint) {
		if placeholderWord.MatchString(w) {
			p.t.Fatalf("hint %q has the placeholder %s: it cannot be pasted", hint, w)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", hint)
	cmd.Env, cmd.Dir = p.env, p.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{0, out.String(), errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("pasting %q: %v", hint, err)
	}
	if r.code != 0 {
		p.t.Fatalf("pasted %q:\n%s", hint, r)
	}
	return r
}

// verb is the dream command of a hint ("rm" for the removal line).
func verb(hint string) string {
	w := shellWords(hint)
	if w[0] == "rm" {
		return "rm"
	}
	return w[1]
}

// byVerb indexes hints by verb, failing on a verb printed twice with
// different commands.
func byVerb(t *testing.T, hints []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, h := range hints {
		if prev, ok := m[verb(h)]; ok && prev != h {
			t.Fatalf("two different %s hints: %q and %q", verb(h), prev, h)
		}
		m[verb(h)] = h
	}
	return m
}

// memoryWithDefects is a memory the offline engine improves: a duplicated
// rule in a nested section, beside a numbered procedure, code, a quote and
// Chinese text it must keep.
func memoryWithDefects(t *testing.T, w *world) {
	w.write(w.mem, "MEMORY.md", "# Memory\n\n- [Build](build.md) — how the project builds\n- [偏好](prefs.md) — 编码习惯\n")
	w.write(w.mem, "prefs.md", "# 偏好\n\n## Go\n\n### Formatting\n\n- 用 tab 缩进。\n- Run `go vet` before committing.\n- 用 tab 缩进。\n\n## Releasing\n\n1. Tag the release.\n2. Run:\n\n   ```sh\n   make release\n   ```\n\n3. Announce it.\n\n> \"Never release on a Friday.\" — the team\n")
}

// inPlaceWorld is a world whose memory and state dirs have spaces in their
// names, the state dir given by flag so that every hint must carry it.
func spacedWorld(t *testing.T) *world {
	w := newWorld(t)
	mem := filepath.Join(w.root, "my notes")
	if err := os.Rename(w.mem, mem); err != nil {
		t.Fatal(err)
	}
	w.mem, w.state = mem, filepath.Join(w.root, "state dir")
	memoryWithDefects(t, w)
	return w
}

func memorySnapshot(t *testing.T, dir string) string {
	return treeHash(t, dir, func(rel string) bool { return rel == ".consolidate-lock" })
}

func TestPastedHintsAfterRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// flags are the run's location flags: hints must repeat the ones a
		// fresh shell would not find again.
		flags func(w *world) []string
	}{
		{"state dir by flag", func(w *world) []string { return w.locFlags() }},
		{"default state dir", func(w *world) []string {
			return []string{"--memory-dir", w.mem, "--sessions-dir", w.sessions, "--repo", w.repo}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := spacedWorld(t)
			before := memorySnapshot(t, w.mem)
			r := w.dream(nil, append([]string{"run", "--provider", "offline"}, c.flags(w)...)...)
			if r.code != 0 {
				t.Fatalf("run:\n%s", r)
			}
			hints := byVerb(t, hintsIn(r.stdout+"\n"+r.stderr))
			for v, h := range hints {
				if v != "show" && v != "undo" && v != "log" {
					t.Errorf("run printed %q, which this test does not paste: teach it what that hint must do", h)
				}
			}
			if hints["log"] == "" {
				t.Errorf("the first run printed no dream log hint:\n%s", r)
			}
			p := newPaster(t, w.env, w.repo)
			show, undo := hints["show"], hints["undo"]
			if show == "" || undo == "" {
				t.Fatalf("run printed no show and undo hints:\n%s", r)
			}
			after := memorySnapshot(t, w.mem)
			if after == before {
				t.Fatalf("the dream changed nothing, so there is nothing to undo:\n%s", r)
			}
			if out := p.paste(show); !strings.Contains(out.stdout, "@@") || !strings.Contains(out.stdout, "prefs.md") {
				t.Errorf("pasted %q printed no diff of prefs.md:\n%s", show, out)
			}
			if lg := hints["log"]; lg != "" {
				if out := p.paste(lg); !strings.Contains(out.stdout, shellWords(show)[2]) {
					t.Errorf("pasted %q does not list the dream:\n%s", lg, out)
				}
			}
			p.paste(undo)
			if got := memorySnapshot(t, w.mem); got != before {
				t.Errorf("pasted %q did not restore the memory", undo)
			}
		})
	}
}

func TestPastedHintsAfterReview(t *testing.T) {
	t.Parallel()
	w := spacedWorld(t)
	before := memorySnapshot(t, w.mem)
	p := newPaster(t, w.env, w.repo)
	review := func() map[string]string {
		t.Helper()
		r := w.dream(nil, append([]string{"run", "--review", "--provider", "offline"}, w.locFlags()...)...)
		if r.code != 0 {
			t.Fatalf("run --review:\n%s", r)
		}
		hints := byVerb(t, hintsIn(r.stdout+"\n"+r.stderr))
		for _, v := range []string{"diff", "apply", "discard"} {
			if hints[v] == "" {
				t.Fatalf("run --review printed no %s hint:\n%s", v, r)
			}
		}
		if len(hints) != 3 {
			t.Errorf("run --review printed hints this test does not paste: %q", hints)
		}
		if memorySnapshot(t, w.mem) != before {
			t.Fatal("a review run changed the memory")
		}
		return hints
	}
	hints := review()
	if out := p.paste(hints["diff"]); !strings.Contains(out.stdout, "@@") || !strings.Contains(out.stdout, "用 tab 缩进") {
		t.Errorf("pasted %q printed no diff:\n%s", hints["diff"], out)
	}
	applied := p.paste(hints["apply"])
	if memorySnapshot(t, w.mem) == before {
		t.Fatalf("pasted %q landed nothing:\n%s", hints["apply"], applied)
	}
	undo := byVerb(t, hintsIn(applied.stdout+"\n"+applied.stderr))["undo"]
	if undo == "" {
		t.Fatalf("apply printed no undo hint:\n%s", applied)
	}
	p.paste(undo)
	if memorySnapshot(t, w.mem) != before {
		t.Errorf("pasted %q did not restore the memory", undo)
	}

	hints = review()
	p.paste(hints["diff"])
	p.paste(hints["discard"])
	if memorySnapshot(t, w.mem) != before {
		t.Error("discard changed the memory")
	}
	if r := w.dream(nil, append([]string{"diff"}, w.locFlags()...)...); r.code != 0 || !strings.Contains(r.stdout, "no staged") {
		t.Errorf("after discard something is still staged:\n%s", r)
	}
}

// TestPastedHintsAfterDemo: after `dream demo` its show and undo hints
// work (the demo's state outlives the command), the commands it suggests for
// the user's own agent run in a home with Claude Code's memory for the
// current repo, and the line that removes the demo removes it.
func TestPastedHintsAfterDemo(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "claude")
	tmp := filepath.Join(w.root, "tmp with space")
	mustMkdir(t, tmp)
	w.env = append(w.env, "TMPDIR="+tmp)
	r := w.dream("demo")
	if r.code != 0 {
		t.Fatalf("demo:\n%s", r)
	}
	hints := hintsIn(r.stdout + "\n" + r.stderr)
	var once []string // the demo suggests several runs; one show, undo and rm
	for _, h := range hints {
		if v := verb(h); v == "show" || v == "undo" || v == "rm" {
			once = append(once, h)
		}
	}
	byV := byVerb(t, once)
	for _, v := range []string{"show", "undo", "rm"} {
		if byV[v] == "" {
			t.Fatalf("demo printed no %s hint:\n%s", v, r)
		}
	}
	demoDir := shellWords(byV["rm"])[2]
	if !strings.HasPrefix(demoDir, tmp) {
		t.Fatalf("the demo would remove %s, outside its temp dir %s", demoDir, tmp)
	}
	pristine, err := demo.Materialize(filepath.Join(t.TempDir(), "pristine"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := newPaster(t, w.env, w.repo)
	claudeBefore := memorySnapshot(t, w.layout.MemoryDir)
	for _, h := range hints {
		switch verb(h) {
		case "show":
			if out := p.paste(h); !strings.Contains(out.stdout, "@@") {
				t.Errorf("pasted %q printed no diff:\n%s", h, out)
			}
		case "undo":
			p.paste(h)
			if got, want := memorySnapshot(t, filepath.Join(demoDir, "memory")), memorySnapshot(t, pristine.MemoryDir); got != want {
				t.Errorf("pasted %q did not restore the demo memory to the example", h)
			}
		case "run":
			out := p.paste(h)
			// A review run's own hints, pasted in turn: look, then drop.
			staged := byVerb(t, hintsIn(out.stdout+"\n"+out.stderr))
			if strings.Contains(h, "--review") {
				for _, v := range []string{"diff", "discard"} {
					if staged[v] == "" {
						t.Fatalf("%q printed no %s hint:\n%s", h, v, out)
					}
					p.paste(staged[v])
				}
				if memorySnapshot(t, w.layout.MemoryDir) != claudeBefore {
					t.Errorf("%q then discard changed Claude Code's memory", h)
				}
			}
		case "rm":
			// Last: everything above needed the demo.
		default:
			p.paste(h)
		}
	}
	p.paste(byV["rm"])
	if _, err := os.Stat(demoDir); !os.IsNotExist(err) {
		t.Errorf("pasted %q left %s: %v", byV["rm"], demoDir, err)
	}
}

// TestEvalFromAnyDirectory: `dream eval` run where there is no checkout
// scores the corpus built into the binary (every scenario of testdata/eval)
// and explains each column of its table.
func TestEvalFromAnyDirectory(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // runs in w.repo, a temp dir with no testdata/eval
	want, err := os.ReadDir(filepath.Join("..", "..", "testdata", "eval"))
	if err != nil {
		t.Fatal(err)
	}
	r := w.dream(nil, "eval", "--provider", "offline")
	if r.code != 0 {
		t.Fatalf("eval from %s:\n%s", w.repo, r)
	}
	if !strings.Contains(r.stdout, "TOTAL ("+strconv.Itoa(len(want))+")") {
		t.Errorf("eval did not score the %d scenarios of testdata/eval:\n%s", len(want), r)
	}
	header := strings.SplitN(r.stdout, "\n", 2)[0]
	for _, col := range regexp.MustCompile(`\S+(?: held| ok)?`).FindAllString(header, -1) {
		if col != "scenario" && !regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(col)+` `).MatchString(r.stdout) {
			t.Errorf("no legend line for the %q column:\n%s", col, r.stdout)
		}
	}
	if r := w.dream(nil, "eval", "--dir", filepath.Join(w.root, "nowhere")); r.code != exitUsage || !strings.Contains(r.stderr, "built-in corpus") {
		t.Errorf("eval --dir of a missing dir:\n%s", r)
	}
}

// TestDryRunThenFirstRunNotice: --dry-run prints the diff of what a dream
// would change and changes nothing (the memory, the time gate, the
// staging); under --json it is the report with the diff. The first real
// run then says, on stderr and once, that it is about to edit the memory
// and how to undo; the next run says nothing of the kind.
func TestDryRunThenFirstRunNotice(t *testing.T) {
	t.Parallel()
	w := spacedWorld(t)
	before := memorySnapshot(t, w.mem)
	status := func() string {
		r := w.dream(nil, append([]string{"status", "--json"}, w.locFlags()...)...)
		last := decodeJSON[struct {
			Last *string `json:"last_consolidated_at"`
		}](t, r).Last
		if last == nil {
			return "never"
		}
		return *last
	}
	lastBefore := status()
	r := w.dream(nil, append([]string{"run", "--dry-run", "--provider", "offline"}, w.locFlags()...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "dry run: a dream now would change 1 file(s)") ||
		!strings.Contains(r.stdout, "+++ b/prefs.md") || !strings.Contains(r.stdout, "\n-- 用 tab 缩进。") {
		t.Fatalf("dry run:\n%s", r)
	}
	if strings.Contains(r.stdout+r.stderr, "first dream") {
		t.Errorf("a dry run announced an edit it does not make:\n%s", r)
	}
	j := w.dream(nil, append([]string{"run", "--dry-run", "--json", "--provider", "offline"}, w.locFlags()...)...)
	rep := decodeJSON[struct {
		Status  string `json:"status"`
		Diff    string `json:"diff"`
		Changes []struct {
			Path string `json:"path"`
		} `json:"changes"`
	}](t, j)
	if j.code != 0 || rep.Status != "dry_run" || len(rep.Changes) != 1 || rep.Changes[0].Path != "prefs.md" || !strings.Contains(rep.Diff, "@@") {
		t.Fatalf("dry run --json: %+v\n%s", rep, j)
	}
	if memorySnapshot(t, w.mem) != before || status() != lastBefore {
		t.Fatal("a dry run changed the memory or moved the time gate")
	}
	if r := w.dream(nil, append([]string{"diff"}, w.locFlags()...)...); !strings.Contains(r.stdout, "no staged") {
		t.Errorf("a dry run left something staged:\n%s", r)
	}
	if r := w.dream(nil, append([]string{"run", "--dry-run", "--review"}, w.locFlags()...)...); r.code != exitUsage {
		t.Errorf("--dry-run with --review: %s", r)
	}

	first := w.dream(nil, append([]string{"run", "--json", "--provider", "offline"}, w.locFlags()...)...)
	if first.code != 0 {
		t.Fatalf("first run:\n%s", first)
	}
	decodeJSON[map[string]any](t, first) // stdout is the report alone
	for _, want := range []string{"first dream on " + w.mem, "about to edit", "recorded", "dream undo", "dream log --memory-dir '" + w.mem + "'"} {
		if !strings.Contains(first.stderr, want) {
			t.Errorf("the first run's notice lacks %q:\n%s", want, first.stderr)
		}
	}
	p := newPaster(t, w.env, w.repo)
	var logHint string
	for _, h := range hintsIn(first.stderr) {
		if verb(h) == "log" {
			logHint = h
		}
	}
	if logHint == "" {
		t.Fatalf("the notice has no pasteable dream log:\n%s", first.stderr)
	}
	id := decodeJSON[struct {
		TaskID string `json:"task_id"`
	}](t, first).TaskID
	if out := p.paste(logHint); !strings.Contains(out.stdout, id) {
		t.Errorf("pasted %q does not list %s:\n%s", logHint, id, out)
	}
	w.write(w.mem, "prefs.md", "# 偏好\n\n- 用 tab 缩进。\n- 用 tab 缩进。\n")
	again := w.dream(nil, append([]string{"run", "--provider", "offline"}, w.locFlags()...)...)
	if again.code != 0 || strings.Contains(again.stderr+again.stdout, "first dream") {
		t.Errorf("the notice came again on the second run:\n%s", again)
	}
}

// TestUnknownIDNamesHowToList: an id nothing records is an error that
// names the commands listing the ids there are; an id of a dream is enough
// from a directory that knows nothing of its memory.
func TestUnknownIDNamesHowToList(t *testing.T) {
	t.Parallel()
	w := spacedWorld(t)
	env := []string{"DREAM_STATE_DIR=" + w.state}
	for _, verb := range []string{"show", "undo", "diff", "apply", "discard"} {
		r := w.dream(env, verb, "20990101-000000-dead")
		if r.code == 0 || !strings.Contains(r.stderr, "dream log") || !strings.Contains(r.stderr, "dream tasks") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s of an unknown id:\n%s", verb, r)
		}
	}
	r := w.dream(nil, append([]string{"run", "--json", "--provider", "offline"}, w.locFlags()...)...)
	id := decodeJSON[struct {
		TaskID string `json:"task_id"`
	}](t, r).TaskID
	if r := w.dream(env, "show", id); r.code != 0 || !strings.Contains(r.stdout, "prefs.md") {
		t.Errorf("show by id alone:\n%s", r)
	}
	// With the memory dir named, an id its records lack says how to list
	// the ones they have.
	for _, verb := range []string{"show", "undo", "diff", "apply", "discard"} {
		r := w.dream(nil, append([]string{verb, "20990101-000000-dead"}, w.locFlags()...)...)
		if r.code == 0 || !strings.Contains(r.stderr, "dream log --memory-dir '"+w.mem+"'") || !strings.Contains(r.stderr, "dream tasks") {
			t.Errorf("%s of an id unknown to --memory-dir:\n%s", verb, r)
		}
	}
	// A memory dir given by flag decides, as before: this one never dreamt.
	other := filepath.Join(w.root, "other")
	w.write(other, "MEMORY.md", "# Memory\n")
	if r := w.dream(env, "show", id, "--memory-dir", other); r.code == 0 || !strings.Contains(r.stderr, "worked on "+w.mem) || !strings.Contains(r.stderr, "an id is enough") {
		t.Errorf("show with another --memory-dir:\n%s", r)
	}
	// The same memory dir spelled through a symlink is the same memory.
	link := filepath.Join(w.root, "link")
	if err := os.Symlink(w.mem, link); err != nil {
		t.Fatal(err)
	}
	if r := w.dream(env, "show", id, "--memory-dir", link); r.code != 0 {
		t.Errorf("show with the memory dir through a symlink:\n%s", r)
	}
}

// TestPastedHintsAfterNanobotDream: nanobot's history dream, driven by the
// scripted model, prints show and undo lines that work pasted from another
// directory: the id finds the workspace the dream changed.
func TestPastedHintsAfterNanobotDream(t *testing.T) {
	t.Parallel()
	nw := newNanobotWorld(t, 5)
	srv := llmtest.NewServer(
		edit("USER.md", "- Replies in Chinese, short\n", "- Replies in Chinese, short; no emoji\n"),
		llmtest.Turn{Text: "USER.md updated."},
	)
	defer srv.Close()
	before := nw.read("USER.md")
	r := nw.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run"}, nw.flags()...)...)
	if r.code != 0 || !strings.Contains(nw.read("USER.md"), "no emoji") {
		t.Fatalf("run:\n%s", r)
	}
	hints := byVerb(t, hintsIn(r.stdout+"\n"+r.stderr))
	if hints["show"] == "" || hints["undo"] == "" {
		t.Fatalf("no show and undo hints:\n%s", r)
	}
	p := newPaster(t, nw.env, t.TempDir())
	if out := p.paste(hints["show"]); !strings.Contains(out.stdout, "no emoji") {
		t.Errorf("pasted %q shows no diff of USER.md:\n%s", hints["show"], out)
	}
	p.paste(hints["undo"])
	if got := nw.read("USER.md"); got != before {
		t.Errorf("pasted %q left USER.md as:\n%s", hints["undo"], got)
	}
}
