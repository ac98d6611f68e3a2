package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dreamkit/dream/cmd/dream/internal/hookplan"
	"github.com/dreamkit/dream/internal/host"
)

// TestHookLocates: the agent is named by where its transcript lies, the
// sessions dir comes from the transcript only inside the agent's own tree,
// and the repository falls back from cwd to the transcript's first record.
func TestHookLocates(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	repo := filepath.Join(tmp, "src", "app")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	noEnv := func(string) (string, bool) { return "", false }
	for path, want := range map[string]string{
		filepath.Join(home, ".claude", "projects", "-x", "u.jsonl"):                               "claude",
		filepath.Join(home, ".codex", "sessions", "2026", "11", "28", "rollout-x.jsonl"):          "codex",
		filepath.Join(home, ".gemini", "tmp", "app", "chats", "session-2026-11-28T09-12-x.jsonl"): "gemini",
		filepath.Join(home, "elsewhere", "x.jsonl"):                                               "",
		"relative/x.jsonl": "",
		filepath.Join(home, ".claude", "projects", "..", "..", "etc", "x.jsonl"): "",
	} {
		if got := hookplan.HostFromTranscript(path, home, noEnv); got != want {
			t.Errorf("hookplan.HostFromTranscript(%s) = %q, want %q", path, got, want)
		}
	}
	l, err := host.Resolve("claude", repo, home, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(filepath.Dir(l.SessionsDir), "-started-in-a-subdir")
	if dir, ok := hookplan.TranscriptSessionsDir(l, filepath.Join(sub, "u.jsonl")); !ok || dir != sub {
		t.Errorf("claude transcript in a sibling project dir: %s %v", dir, ok)
	}
	if _, ok := hookplan.TranscriptSessionsDir(l, "/etc/u.jsonl"); ok {
		t.Error("a transcript outside the agent's tree was trusted")
	}
	tr := filepath.Join(tmp, "t.jsonl")
	os.WriteFile(tr, []byte(`{"type":"session_meta","payload":{"cwd":"`+repo+`"}}`+"\n"), 0o644)
	if got := hookplan.Repo(hookplan.Payload{TranscriptPath: tr}); got != repo {
		t.Errorf("repo from the transcript = %q", got)
	}
	if got := hookplan.Repo(hookplan.Payload{CWD: "/does/not/exist", TranscriptPath: tr}); got != "" {
		t.Errorf("a cwd that does not exist was taken: %q", got)
	}
}
