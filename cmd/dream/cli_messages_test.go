package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/cli")

// session records dream invocations and their outcome as a transcript for
// a golden file, with what changes from run to run (the temp root, pids,
// times, dream ids, commit hashes) replaced by names.
type session struct {
	w   *world
	buf strings.Builder
}

func (s *session) run(env []string, args ...string) result {
	s.w.t.Helper()
	r := s.w.dream(env, args...)
	s.record(env, args, r)
	return r
}

func (s *session) record(env, args []string, r result) {
	shown := append([]string{}, env...)
	for _, a := range args {
		if strings.ContainsAny(a, " \"") {
			a = strconv.Quote(a)
		}
		shown = append(shown, a)
	}
	fmt.Fprintf(&s.buf, "$ %sdream %s\nexit %d\n", envPrefix(env), strings.Join(shown[len(env):], " "), r.code)
	if r.stdout != "" {
		fmt.Fprintf(&s.buf, "--- stdout\n%s", withNewline(r.stdout))
	}
	if r.stderr != "" {
		fmt.Fprintf(&s.buf, "--- stderr\n%s", withNewline(r.stderr))
	}
	s.buf.WriteString("\n")
}

func envPrefix(env []string) string {
	if len(env) == 0 {
		return ""
	}
	return strings.Join(env, " ") + " "
}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

var (
	reTime    = regexp.MustCompile(`\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)| \d\d:\d\d(:\d\d)?)`)
	reTaskID  = regexp.MustCompile(`\d{8}-\d{6}-[0-9a-f]{4,}`)
	reAge     = regexp.MustCompile(`\((\d+h)?(\d+m)?\d+(\.\d+)?m?s ago\)`)
	reSHA     = regexp.MustCompile(`\b[0-9a-f]{12}([0-9a-f]{28})?\b`)
	reSeconds = regexp.MustCompile(`in \d+\.\d+s`)
	reStamp   = regexp.MustCompile(`\d{8}T\d{6}(\.\d+)?`)
)

// normalize replaces the run-dependent parts of out.
func (s *session) normalize(out string) string {
	out = strings.ReplaceAll(out, s.w.root, "$ROOT")
	out = reTaskID.ReplaceAllString(out, "$$ID")
	out = reSHA.ReplaceAllString(out, "$$SHA")
	out = reTime.ReplaceAllString(out, "$$TIME")
	out = reStamp.ReplaceAllString(out, "$$STAMP")
	out = reAge.ReplaceAllString(out, "($$AGE ago)")
	out = reSeconds.ReplaceAllString(out, "in $$SECONDSs")
	out = regexp.MustCompile(`(pid |"pid": )`+strconv.Itoa(os.Getpid())+`\b`).ReplaceAllString(out, "${1}$$PID")
	if h, err := os.Hostname(); err == nil && h != "" {
		out = strings.ReplaceAll(out, " on "+h, " on $HOST")
	}
	return out
}

// check compares the transcript with testdata/cli/name.golden, or writes
// it under -update.
func (s *session) check(name string) {
	t := s.w.t
	t.Helper()
	got := s.normalize(s.buf.String())
	path := filepath.Join("testdata", "cli", name+".golden")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}

// holdLock makes the test process a live foreign holder of w's lock, taken
// at "since" (under the hour after which a holder counts as stale).
func holdLock(t *testing.T, w *world, since time.Time) {
	t.Helper()
	p := filepath.Join(w.mem, ".consolidate-lock")
	w.write(w.mem, ".consolidate-lock", strconv.Itoa(os.Getpid()))
	if err := os.Chtimes(p, since, since); err != nil {
		t.Fatal(err)
	}
}

// TestMessageLockHeld: every command that takes the lock says who holds it
// and since when, once, with exit 3; nothing reaches the model.
func TestMessageLockHeld(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	holdLock(t, w, time.Now().Add(-30*time.Minute))
	model := []string{"DREAM_PROVIDER=anthropic", "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=http://127.0.0.1:1"}
	s := &session{w: w}
	for _, args := range [][]string{
		{"run"},
		{"maybe", "--min-hours", "0.1"},
		{"undo", "20261201-100000-abcd"},
		{"apply", "20261201-100000-abcd"},
		{"sync", "--wait", "0", "--sync-remote", filepath.Join(w.root, "remote.git")},
	} {
		r := s.run(model, append(args, w.locFlags()...)...)
		if r.code != exitHeld {
			t.Errorf("dream %v: exit %d, want 3\n%s", args, r.code, r)
		}
		if n := strings.Count(r.stderr, "held"); n != 1 || strings.Contains(r.stderr, "dream: dream:") || !strings.Contains(r.stderr, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(r.stderr, " since ") {
			t.Errorf("dream %v: want the holder and since once:\n%s", args, r)
		}
	}
	r := s.run(model, append([]string{"run", "--json"}, w.locFlags()...)...)
	e := decodeJSON[struct {
		Error cliError `json:"error"`
	}](t, r)
	if r.code != exitHeld || e.Error.Code != codeLockHeld || e.Error.ExitCode != exitHeld || e.Error.Holder == nil || e.Error.Holder.PID != os.Getpid() || e.Error.Holder.Since == nil {
		t.Errorf("run --json: %+v\n%s", e.Error, r)
	}
	s.check("lock_held")
}

// dupWorld is a world whose build notes repeat a line, which the offline
// engine removes: a dream with one change, no model needed.
func dupWorld(t *testing.T) *world {
	w := newWorld(t)
	w.write(w.mem, "build.md", "---\nname: build\ndescription: how the project builds\ntype: project\n---\n\n# Build\n\n- Run `make all` to build.\n- CI runs on every push.\n- Run `make all` to build.\n")
	return w
}

var offlineEnv = []string{"DREAM_PROVIDER=offline"}

// TestMessageAlreadyApplied: a second apply of a review run says it was
// applied, when and how to see or undo it, and succeeds (exit 0).
func TestMessageAlreadyApplied(t *testing.T) {
	t.Parallel()
	w := dupWorld(t)
	r := w.dream(offlineEnv, append([]string{"run", "--review", "--json"}, w.locFlags()...)...)
	rep := decodeJSON[struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
	}](t, r)
	if rep.Status != "staged" {
		t.Fatalf("review run not staged:\n%s", r)
	}
	s := &session{w: w}
	if r := s.run(nil, append([]string{"apply", rep.TaskID}, w.locFlags()...)...); r.code != 0 {
		t.Fatalf("first apply:\n%s", r)
	}
	r = s.run(nil, append([]string{"apply", rep.TaskID}, w.locFlags()...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "already applied") || !strings.Contains(r.stdout, "dream undo "+rep.TaskID) {
		t.Errorf("second apply:\n%s", r)
	}
	r = s.run(nil, append([]string{"apply", rep.TaskID, "--json"}, w.locFlags()...)...)
	if v := decodeJSON[map[string]any](t, r); r.code != 0 || v["already_applied"] != true || v["id"] != rep.TaskID {
		t.Errorf("second apply --json: %v\n%s", v, r)
	}
	s.check("already_applied")
}

// TestMessageUndoConflict: an undo whose lines were edited since names the
// file, the lines and --force; --force then restores.
func TestMessageUndoConflict(t *testing.T) {
	t.Parallel()
	w := dupWorld(t)
	r := w.dream(offlineEnv, append([]string{"run", "--json"}, w.locFlags()...)...)
	rep := decodeJSON[struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
	}](t, r)
	if rep.Status != "completed" {
		t.Fatalf("dream did not complete:\n%s", r)
	}
	// The user rewrites the lines the dream touched.
	w.write(w.mem, "build.md", "---\nname: build\ndescription: how the project builds\ntype: project\n---\n\n# Build\n\n- Run `make release` to build.\n- CI runs on every tag.\n")
	s := &session{w: w}
	r = s.run(nil, append([]string{"undo", rep.TaskID}, w.locFlags()...)...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "dream undo "+rep.TaskID+" --force") || !strings.Contains(r.stderr, "build.md") || strings.Contains(r.stderr, "use force") {
		t.Errorf("undo conflict:\n%s", r)
	}
	r = s.run(nil, append([]string{"undo", rep.TaskID, "--json"}, w.locFlags()...)...)
	if e := decodeJSON[struct {
		Error cliError `json:"error"`
	}](t, r); e.Error.Code != codeUndoConflict || r.code != exitFailed {
		t.Errorf("undo conflict --json: %+v\n%s", e, r)
	}
	if r := s.run(nil, append([]string{"undo", rep.TaskID, "--force"}, w.locFlags()...)...); r.code != 0 {
		t.Errorf("undo --force:\n%s", r)
	}
	s.check("undo_conflict")
}

// TestMessageTypo: a mistyped command or flag gets the nearest real one.
func TestMessageTypo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := &session{w: w}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts"}, "did you mean dream status"},
		{[]string{"hlep"}, "did you mean dream help?"},
		{[]string{"xyzzy"}, "dream help lists every command"},
		{[]string{"help", "stauts"}, "did you mean dream status"},
		{[]string{"status", "--memroy-dir", w.mem}, "did you mean --memory-dir?"},
		{[]string{"run", "--reveiw", "--memory-dir", w.mem}, "did you mean --review?"},
		{[]string{"log", "--limt", "3"}, "did you mean --limit?"},
		{[]string{"status", "-memroy-dir", w.mem}, "--memroy-dir"},
		{[]string{"history", "apend", "note", "--memory-dir", w.mem}, "did you mean append?"},
		{[]string{"init", "cluade"}, "did you mean claude?"},
		{[]string{"daemon", "instal", "--daemon-file", filepath.Join(w.root, "daemon.toml")}, "did you mean install?"},
	} {
		r := s.run(nil, tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, " -memroy") {
			t.Errorf("dream %v: want exit 2 and %q:\n%s", tt.args, tt.want, r)
		}
	}
	s.check("typo")
}

// TestMessageBadFlagValue: a bad value on the command line is a usage error
// (exit 2) naming the flag with two dashes; the same value from the
// environment warns and falls back, as documented.
func TestMessageBadFlagValue(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := &session{w: w}
	for _, args := range [][]string{
		{"status", "--min-hours", "abc"},
		{"status", "--min-sessions", "-2"},
		{"run", "--timeout", "forever"},
		{"run", "--max-turns", "1e9"},
		{"stats", "--since", "a-week"},
		{"log", "--limit", "many"},
		{"status", "--memory-dir"},
		{"status", "--memory-dir", "--repo", "R"},
	} {
		r := s.run(nil, append(args, "--state-dir", w.state)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--"+strings.TrimLeft(args[1], "-")) || regexp.MustCompile(`(^|[ "(])-[a-z]`).MatchString(r.stderr) {
			t.Errorf("dream %v: want exit 2 naming --%s:\n%s", args, strings.TrimLeft(args[1], "-"), r)
		}
	}
	env := []string{"DREAM_MIN_HOURS=abc"}
	r := w.dream(env, append([]string{"config"}, w.locFlags()...)...)
	if r.code != 0 || !strings.Contains(r.stderr, "DREAM_MIN_HOURS") || !regexp.MustCompile(`(?m)^min_hours +24 +default$`).MatchString(r.stdout) {
		t.Errorf("a bad value in the environment must warn and fall back:\n%s", r)
	}
	// The table's columns depend on the temp dir's length: only the
	// warning goes into the golden file.
	s.record(env, append([]string{"config"}, w.locFlags()...), result{code: r.code, stderr: r.stderr})
	s.check("bad_flag_value")
}

// TestMessageJSONError: under --json every error is one object on stdout
// with a stable code, and the message is on stderr too.
func TestMessageJSONError(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := &session{w: w}
	for _, tt := range []struct {
		args []string
		code string
		exit int
	}{
		{[]string{"stauts", "--json"}, codeUsage, exitUsage},
		{[]string{"status", "--memroy-dir", w.mem, "--json"}, codeUsage, exitUsage},
		{[]string{"status", "--json", "--min-hours", "abc", "--memory-dir", w.mem}, codeUsage, exitUsage},
		{[]string{"status", "--json", "--state-dir", w.state}, codeUsage, exitUsage},
		{[]string{"show", "no-such-dream", "--json", "--memory-dir", w.mem, "--state-dir", w.state}, codeFailed, exitFailed},
		{[]string{"sync", "--json", "--memory-dir", w.mem, "--state-dir", w.state}, codeNoRemote, exitUsage},
	} {
		r := s.run(nil, tt.args...)
		e := decodeJSON[struct {
			Error cliError `json:"error"`
		}](t, r)
		if r.code != tt.exit || e.Error.Code != tt.code || e.Error.ExitCode != tt.exit || e.Error.Message == "" || !strings.Contains(r.stderr, e.Error.Message) {
			t.Errorf("dream %v: exit %d %+v, want %d %s with the message on stderr:\n%s", tt.args, r.code, e.Error, tt.exit, tt.code, r)
		}
	}
	s.check("json_error")
}
