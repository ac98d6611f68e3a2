package audit

import (
	"strings"
	"testing"
)

// A nanobot workspace is the memory dir: its conversations
// (sessions/*.jsonl), the history log its Dream replays and the cursors sit
// beside the memory files (HKUDS/nanobot, nanobot/agent/memory.py). With a
// scope naming the memory files, none of the rest ever enters the history,
// whether recorded as hand edits, as a dream naming them, or dropped from
// an older history that had them.
func TestScopeKeepsWorkspaceFilesOut(t *testing.T) {
	t.Parallel()
	needGit(t)
	ctx := testCtx(t)
	mem, state := t.TempDir(), t.TempDir()
	writeTree(t, mem, map[string]string{
		"SOUL.md":                "# Soul\n\nI am a careful assistant.\n",
		"USER.md":                "# User\n\n- 名字：小王\n- Prefers `uv` over pip\n",
		"memory/MEMORY.md":       "# Long-term\n\n## Deploy\n\n1. Build.\n2. Ship.\n",
		"memory/history.jsonl":   "{\"cursor\":1,\"content\":\"secret talk\"}\n",
		"memory/.dream_cursor":   "1\n",
		"memory/.cursor":         "1\n",
		"sessions/cli_1.jsonl":   "{\"role\":\"user\",\"content\":\"my password is hunter2\"}\n",
		"skills/deploy/SKILL.md": "---\nname: deploy\n---\n\nShip it.\n",
	})
	// An older history recorded the whole workspace.
	old, err := Open(ctx, state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	if err := SetScope(state, mem, []string{"memory/MEMORY.md", "SOUL.md", "USER.md", "skills/", "memory/.dream_cursor"}); err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, state, mem)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{
		"memory/history.jsonl": "{\"cursor\":1,\"content\":\"secret talk\"}\n{\"cursor\":2,\"content\":\"more\"}\n",
		"sessions/cli_2.jsonl": "{\"role\":\"user\",\"content\":\"another secret\"}\n",
		"USER.md":              "# User\n\n- 名字：小王\n- Prefers `uv` over pip\n- Works in Go\n",
	})
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"memory/MEMORY.md": "# Long-term\n\n## Deploy\n\n1. Build.\n2. Test.\n3. Ship.\n", "memory/.dream_cursor": "2\n"})
	m := meta("d1")
	m.Paths = []string{"memory/MEMORY.md", "memory/.dream_cursor", "memory/history.jsonl", "sessions/cli_2.jsonl"}
	if _, err := h.RecordDream(ctx, m); err != nil {
		t.Fatal(err)
	}
	tree := string(mustGit(t, h, "ls-tree", "-r", "--name-only", "HEAD"))
	for _, p := range []string{"memory/history.jsonl", "memory/.cursor", "sessions/"} {
		if strings.Contains(tree, p) {
			t.Errorf("%s is in the history's tree:\n%s", p, tree)
		}
	}
	for _, p := range []string{"memory/MEMORY.md", "memory/.dream_cursor", "SOUL.md", "USER.md", "skills/deploy/SKILL.md"} {
		if !strings.Contains(tree, p+"\n") {
			t.Errorf("%s is not recorded:\n%s", p, tree)
		}
	}
	// Only the older history's first commit ever held them.
	touched := string(mustGit(t, h, "log", "--format=%s", "--", "sessions", "memory/history.jsonl"))
	if n := strings.Count(touched, "\n"); n != 2 { // recorded, then dropped
		t.Errorf("commits touching the workspace's logs: %q, want the first record and its removal", touched)
	}
	if err := SetScope(state, mem, []string{"../etc/passwd"}); err == nil {
		t.Error("SetScope accepted a path outside the memory dir")
	}
}

func mustGit(t *testing.T, h *History, args ...string) []byte {
	t.Helper()
	out, err := h.Git(testCtx(t), nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
