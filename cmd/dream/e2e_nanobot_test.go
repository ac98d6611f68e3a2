package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/llm/llmtest"
)

// nanobotWorld is a nanobot workspace as nanobot lays it out
// (nanobot/agent/memory.py, MemoryStore.__init__; nanobot/utils/gitstore.py,
// GitStore.init): SOUL.md and USER.md at the root, memory/MEMORY.md,
// memory/history.jsonl with .cursor, and nanobot's own git store with its
// whitelist .gitignore and the "init: nanobot memory store" commit.
type nanobotWorld struct {
	*world
	ws string
}

const (
	nbSoul = "# Soul\n\n## Interaction\n\n1. Answer first, explain after.\n2. Ask before running anything destructive.\n\n> Always verify claims against the source code.\n"
	nbUser = "# User\n\n## Identity\n\n- Name: 林小雨 (Lin Xiaoyu), backend engineer in Hangzhou\n\n## Preferences\n\n- Replies in Chinese, short\n"
	nbMem  = "# Project memory\n\n## Goals\n\n- Ship the 广场照明 (plaza lighting) controller by June\n\n## Architecture\n\n### Services\n\n- `lightd` talks MQTT to the lamps; see skills/mqtt for the commands\n\n```yaml\nbroker: mqtt.internal:1883\n```\n"
)

func newNanobotWorld(t *testing.T, entries int) *nanobotWorld {
	t.Helper()
	w := newWorld(t)
	nw := &nanobotWorld{world: w, ws: filepath.Join(w.root, "home", ".nanobot", "workspace")}
	w.write(nw.ws, "SOUL.md", nbSoul)
	w.write(nw.ws, "USER.md", nbUser)
	w.write(nw.ws, "memory/MEMORY.md", nbMem)
	w.write(nw.ws, ".gitignore", "/*\n!memory/\n!SOUL.md\n!USER.md\n!memory/MEMORY.md\n!memory/.dream_cursor\n!.gitignore\n")
	var hist bytes.Buffer
	for i := 1; i <= entries; i++ {
		key := "telegram:8812"
		if i%7 == 0 {
			key = "cron:daily-report"
		}
		fmt.Fprintf(&hist, `{"cursor": %d, "timestamp": "2026-05-%02d 09:%02d", "content": "- [durable] fact %d: 用户把灯光策略改为 %d 点开启\n- [skip] small talk", "session_key": %q}`+"\n", i, 1+i%28, i%60, i, i%24, key)
	}
	w.write(nw.ws, "memory/history.jsonl", hist.String())
	w.write(nw.ws, "memory/.cursor", fmt.Sprint(entries))
	nw.git("init", "-q")
	nw.git("add", ".gitignore", "SOUL.md", "USER.md", "memory/MEMORY.md")
	nw.git("-c", "user.name=nanobot", "-c", "user.email=nanobot@dream", "commit", "-q", "-m", "init: nanobot memory store")
	return nw
}

func (nw *nanobotWorld) git(args ...string) string {
	nw.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", nw.ws}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+nw.root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		nw.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (nw *nanobotWorld) flags() []string {
	return []string{"--host", "nanobot", "--memory-dir", filepath.Join(nw.ws, "memory"), "--state-dir", nw.state, "--repo", nw.repo}
}

func (nw *nanobotWorld) read(rel string) string {
	b, _ := os.ReadFile(filepath.Join(nw.ws, rel))
	return string(b)
}

// edit is a turn that reads a file and edits it (dream's edit tool wants
// the file read first).
func edit(file, old, new string) llmtest.Turn {
	return llmtest.Turn{Calls: []llmtest.Call{
		{Name: "read", Input: map[string]any{"file_path": file}},
		{Name: "edit", Input: map[string]any{"file_path": file, "old_string": old, "new_string": new}},
	}}
}

// Three batches (20 + 20 + 10 entries) drained in one run, each changing
// one of the three files; the model's attempts on the history and the
// cursor are refused; nanobot's git store gets one commit built from the
// real diff; `dream undo` puts all three files and the cursor back.
func TestNanobotHistoryDreamDrainsBacklogCommitsAndUndoes(t *testing.T) {
	t.Parallel()
	nw := newNanobotWorld(t, 50)
	srv := llmtest.NewServer(
		edit("USER.md", "- Replies in Chinese, short\n", "- Replies in Chinese, short; no emoji\n"),
		llmtest.Turn{Text: "Batch 1: USER.md updated."},
		edit(filepath.Join(nw.ws, "SOUL.md"), "2. Ask before running anything destructive.\n", "2. Ask before running anything destructive.\n3. Report lamp schedules in 24-hour time.\n"),
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "memory/history.jsonl", "content": "{}\n"}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "memory/.dream_cursor", "content": "9999"}}}},
		llmtest.Turn{Text: "Batch 2: SOUL.md updated; the history is not mine to write."},
		edit("memory/MEMORY.md", "- Ship the 广场照明 (plaza lighting) controller by June\n", "- Ship the 广场照明 (plaza lighting) controller by June; lamps switch on at 19:00\n"),
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "skills/lamp-schedule/SKILL.md", "content": "---\nname: lamp-schedule\ndescription: change when the plaza lamps switch on\n---\n\n1. `lightctl schedule set --on 19:00`\n2. Check `lightctl status`.\n"}}}},
		llmtest.Turn{Text: "Batch 3: MEMORY.md and a skill."},
	)
	defer srv.Close()
	r := nw.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, nw.flags()...)...)
	if r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	rep := decodeJSON[nanobot.FlowReport](t, r)
	if rep.Status != dream.StatusCompleted || rep.HistoryEntriesConsumed != 50 || rep.DreamCursor != 50 {
		t.Fatalf("report: status %s consumed %d cursor %d\n%s", rep.Status, rep.HistoryEntriesConsumed, rep.DreamCursor, r)
	}
	if rep.MemoryDir != nw.ws {
		t.Fatalf("the dream's memory dir is %s, want the workspace %s", rep.MemoryDir, nw.ws)
	}
	if got := nw.read("memory/.dream_cursor"); got != "50" {
		t.Fatalf(".dream_cursor = %q", got)
	}
	for file, want := range map[string]string{"USER.md": "no emoji", "SOUL.md": "24-hour time", "memory/MEMORY.md": "lamps switch on at 19:00", "skills/lamp-schedule/SKILL.md": "lightctl schedule set"} {
		if !strings.Contains(nw.read(file), want) {
			t.Errorf("%s lacks %q:\n%s", file, want, nw.read(file))
		}
	}
	if h := nw.read("memory/history.jsonl"); strings.Count(h, "\n") != 50 || strings.Contains(h, "{}\n") {
		t.Fatal("the history was changed by the dream")
	}

	// Each batch's prompt: the template, the current files, its 20 entries
	// oldest first, each "[timestamp] content".
	reqs := srv.Requests()
	if len(reqs) != 9 {
		t.Fatalf("%d model requests, want 9", len(reqs))
	}
	first, second, third := string(reqs[0].Body), string(reqs[2].Body), string(reqs[6].Body)
	for _, want := range []string{"## Current Memory Files", "### SOUL.md", "### USER.md", "### memory/MEMORY.md", "## Conversation History", "fact 1:", "fact 20:"} {
		if !strings.Contains(first, want) {
			t.Errorf("first batch prompt lacks %q", want)
		}
	}
	if strings.Contains(first, "fact 21:") || !strings.Contains(second, "fact 21:") || !strings.Contains(second, "fact 40:") || strings.Contains(second, "fact 41:") || !strings.Contains(third, "fact 50:") {
		t.Error("batches are not 20 entries each, oldest first")
	}
	if !strings.Contains(second, "no emoji") {
		t.Error("the second batch was not shown the first batch's edit")
	}
	if !strings.Contains(string(reqs[4].Body), "only SOUL.md, USER.md, memory/MEMORY.md and files under skills/ may be written") {
		t.Error("the write to the history was not refused with a correctable message")
	}

	// nanobot's git store: one commit, message from the real diff.
	log := nw.git("log", "--format=%an <%ae>%n%B%n--end--")
	if strings.Count(log, "--end--") != 2 || !strings.Contains(log, "nanobot <nanobot@dream>\ndream: manual run\n") {
		t.Fatalf("nanobot git log:\n%s", log)
	}
	for _, want := range []string{"SOUL.md: +1 -0", "USER.md: +1 -1", "memory/MEMORY.md: +1 -1", "3 files changed, 3 insertions(+), 2 deletions(-)", "+- Replies in Chinese, short; no emoji"} {
		if !strings.Contains(log, want) {
			t.Errorf("commit message lacks %q:\n%s", want, log)
		}
	}
	if st := nw.git("status", "--porcelain", "--untracked-files=no"); strings.TrimSpace(st) != "" { // nanobot leaves history.jsonl untracked
		t.Errorf("nanobot's store has uncommitted changes after the dream:\n%s", st)
	}
	if !strings.Contains(nw.git("show", "HEAD:memory/.dream_cursor"), "50") {
		t.Error("the dream cursor is not committed in nanobot's store")
	}

	// dream's own audit history and undo cover the workspace.
	u := nw.dream(nil, append([]string{"undo", rep.TaskID}, nw.flags()...)...)
	if u.code != 0 {
		t.Fatalf("undo:\n%s", u)
	}
	for file, want := range map[string]string{"SOUL.md": nbSoul, "USER.md": nbUser, "memory/MEMORY.md": nbMem} {
		if got := nw.read(file); got != want {
			t.Errorf("undo did not restore %s:\n%s", file, got)
		}
	}
	if got := nw.read("memory/.dream_cursor"); got != "" {
		t.Errorf("undo left the dream cursor at %q; the entries must be unconsumed again", got)
	}
}

// A run that completes without changing anything still consumes its batch.
func TestNanobotNoOpDreamAdvancesCursor(t *testing.T) {
	t.Parallel()
	nw := newNanobotWorld(t, 5)
	srv := llmtest.NewServer(llmtest.Turn{Text: "Nothing in these entries is worth keeping."})
	defer srv.Close()
	r := nw.dream(modelEnv("openai", srv.URL, false), append([]string{"run", "--json"}, nw.flags()...)...)
	if r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	rep := decodeJSON[nanobot.FlowReport](t, r)
	if rep.HistoryEntriesConsumed != 5 || rep.DreamCursor != 5 || nw.read("memory/.dream_cursor") != "5" {
		t.Fatalf("a completed no-op must advance the cursor: %+v", rep)
	}
	if nw.read("SOUL.md") != nbSoul || nw.read("USER.md") != nbUser || nw.read("memory/MEMORY.md") != nbMem {
		t.Fatal("a no-op dream changed memory")
	}
	if n := strings.Count(nw.git("log", "--oneline"), "\n"); n != 1 {
		t.Fatalf("a no-op dream made a commit in nanobot's store (%d commits)", n)
	}
	// Nothing left: a second run is a completed no-op that sends nothing.
	r2 := nw.dream(modelEnv("openai", srv.URL, false), append([]string{"run", "--json"}, nw.flags()...)...)
	if r2.code != 0 || len(srv.Requests()) != 1 {
		t.Fatalf("second run: %d requests\n%s", len(srv.Requests()), r2)
	}
}

// Failure, timeout and SIGKILL all leave the dream cursor and the memory
// as they were, and a killed dream is recovered by the next process.
func TestNanobotCursorUntouchedOnFailureTimeoutAndKill(t *testing.T) {
	t.Parallel()
	unchanged := func(t *testing.T, nw *nanobotWorld, what string) {
		t.Helper()
		if c := nw.read("memory/.dream_cursor"); c != "" {
			t.Errorf("%s: dream cursor moved to %q", what, c)
		}
		if nw.read("USER.md") != nbUser || nw.read("SOUL.md") != nbSoul || nw.read("memory/MEMORY.md") != nbMem {
			t.Errorf("%s: memory changed", what)
		}
	}
	t.Run("provider failure in the second batch", func(t *testing.T) {
		t.Parallel()
		nw := newNanobotWorld(t, 30)
		srv := llmtest.NewServer(
			edit("USER.md", "- Replies in Chinese, short\n", "- Replies in Chinese\n"),
			llmtest.Turn{Text: "done"},
			llmtest.Turn{Status: 500, Repeat: -1},
		)
		defer srv.Close()
		r := nw.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, nw.flags()...)...)
		if r.code != 1 {
			t.Fatalf("want exit 1:\n%s", r)
		}
		unchanged(t, nw, "failure")
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		nw := newNanobotWorld(t, 5)
		srv := llmtest.NewServer(
			edit("USER.md", "- Replies in Chinese, short\n", "- Replies in Chinese\n"),
			llmtest.Turn{Delay: time.Minute, Text: "too late"},
		)
		defer srv.Close()
		r := nw.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json", "--timeout", "2s"}, nw.flags()...)...)
		if r.code != 1 || !strings.Contains(r.stdout, "timed out") {
			t.Fatalf("want a timeout:\n%s", r)
		}
		unchanged(t, nw, "timeout")
	})
	t.Run("SIGKILL", func(t *testing.T) {
		t.Parallel()
		nw := newNanobotWorld(t, 5)
		srv := llmtest.NewServer(
			edit("USER.md", "- Replies in Chinese, short\n", "- Replies in Chinese\n"),
			llmtest.Turn{Delay: time.Minute, Text: "never"},
		)
		defer srv.Close()
		cmd, _, _ := nw.start(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, nw.flags()...)...)
		waitFor(t, 30*time.Second, "the second model request", func() bool { return len(srv.Requests()) >= 2 })
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		unchanged(t, nw, "kill")
		// The next process recovers the dead dream and can dream again.
		srv.Append(llmtest.Turn{Text: "nothing to keep"})
		r := nw.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, nw.flags()...)...)
		if r.code != 0 || nw.read("memory/.dream_cursor") != "5" {
			t.Fatalf("after the kill:\n%s", r)
		}
	})
}

// The workspace is also found from the current directory.
func TestNanobotWorkspaceFromCurrentDirectory(t *testing.T) {
	t.Parallel()
	nw := newNanobotWorld(t, 2)
	srv := llmtest.NewServer(llmtest.Turn{Text: "nothing"})
	defer srv.Close()
	cmd := exec.Command(binPath, "run", "--json", "--host", "nanobot", "--state-dir", nw.state)
	cmd.Env = append(append([]string{}, nw.env...), modelEnv("anthropic", srv.URL, false)...)
	cmd.Env = append(cmd.Env, "NANOBOT_HOME="+filepath.Join(nw.root, "elsewhere"))
	cmd.Dir = filepath.Join(nw.ws, "memory")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"dream_cursor": 2`) || !strings.Contains(string(out), `"memory_dir": "`+nw.ws+`"`) {
		t.Fatalf("workspace not found from the current directory:\n%s", out)
	}
}

// `dream maybe --host nanobot`, every gate open, runs the history dream and
// commits it to nanobot's store as its periodic dream does.
func TestNanobotMaybeRunsHistoryDream(t *testing.T) {
	t.Parallel()
	nw := newNanobotWorld(t, 3)
	sessions := filepath.Join(nw.root, "home", ".nanobot", "sessions")
	writeSession(t, sessions, "telegram:8812", time.Now(), 1)
	srv := llmtest.NewServer(edit("USER.md", "- Replies in Chinese, short\n", "- Replies in Chinese, short; 24-hour time\n"), llmtest.Turn{Text: "USER.md updated"})
	defer srv.Close()
	r := nw.dream(modelEnv("anthropic", srv.URL, false), append([]string{"maybe", "--json", "--sessions-dir", sessions, "--min-sessions", "1"}, nw.flags()...)...)
	if r.code != 0 {
		t.Fatalf("maybe:\n%s", r)
	}
	if nw.read("memory/.dream_cursor") != "3" || !strings.Contains(nw.read("USER.md"), "24-hour time") {
		t.Fatalf("the history dream did not run:\n%s", r)
	}
	if log := nw.git("log", "-1", "--format=%s"); strings.TrimSpace(log) != "dream: periodic memory consolidation" {
		t.Fatalf("nanobot commit subject %q", log)
	}
}

// TestNanobotDreamTouchesOnlyItsMemory: a dream on nanobot's workspace
// (with nanobot's own git store in it) changes only the writable memory
// files; history.jsonl, the cursors, AGENTS.md and .git stay byte for byte.
func TestNanobotDreamTouchesOnlyItsMemory(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	w := newHostWorld(t, "nanobot")
	copyTree(t, filepath.Join(fixtureSrc, "nanobot", "home"), w.home, w)
	ws := filepath.Join(w.home, ".nanobot", "workspace")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=n@b", "-c", "user.name=nanobot", "commit", "-qm", "nanobot memory"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	keep := func(rel string) bool {
		// .git too: a landed dream is committed to nanobot's own git store
		// (issue 12), checked below.
		return strings.HasPrefix(rel, "memory/MEMORY.md") || rel == "SOUL.md" || rel == "USER.md" || rel == ".consolidate-lock" || strings.HasPrefix(rel, ".git/")
	}
	before := treeHash(t, ws, keep)
	beforeMem := snapshot(t, ws)
	r := w.dream("run", "--host", "nanobot")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	if after := treeHash(t, ws, keep); after != before {
		t.Fatalf("the dream changed files outside nanobot's writable set:\nbefore\n%s\nafter\n%s", before, after)
	}
	afterMem := snapshot(t, ws)
	changed := 0
	for _, f := range []string{"memory/MEMORY.md", "SOUL.md", "USER.md"} {
		if beforeMem[f] != afterMem[f] {
			changed++
		}
	}
	if changed == 0 {
		t.Fatalf("the planted duplicates were not consolidated: %s", r)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "HEAD")); err != nil {
		t.Fatal(err)
	}
	gitOut := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if subj := strings.TrimSpace(gitOut("log", "-1", "--format=%s")); subj != "dream: manual run" {
		t.Fatalf("nanobot's git store was not given the dream's commit: %q", subj)
	}
	if st := gitOut("status", "--porcelain", "--untracked-files=no"); strings.TrimSpace(st) != "" {
		t.Fatalf("the dream's change is not committed in nanobot's store:\n%s", st)
	}
}
