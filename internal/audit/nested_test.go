package audit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A memory dir that holds git repositories of its own (nanobot's workspace
// is the memory dir, and users clone things into it) must not be recorded
// as gitlinks: a gitlink holds none of the content, and a synced copy
// refuses to pull one. The repositories' files are left out too, the rest
// of the memory is recorded, and a gitlink an older history recorded is
// dropped on the next record.
func TestNestedRepositoriesNotRecorded(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	writeTree(t, mem, map[string]string{
		"tools/repo/README.md":   "# A clone\n\nnot memory\n",
		"notes/worktree/a.md":    "# Worktree\n",
		"memory/MEMORY.md":       "# Long-term\n\n## 偏好\n\n- Prefers `uv` over pip\n",
		"sessions/cli.jsonl":     "{\"role\":\"user\",\"content\":\"hi\"}\n",
		"skills/deploy/SKILL.md": "---\nname: deploy\n---\n\n1. Build.\n2. Ship.\n",
	})
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(filepath.Join(mem, "tools/repo"), "init", "-q")
	git(filepath.Join(mem, "tools/repo"), "add", ".")
	git(filepath.Join(mem, "tools/repo"), "commit", "-qm", "init")
	// A linked worktree's .git is a file.
	if err := os.WriteFile(filepath.Join(mem, "notes/worktree/.git"), []byte("gitdir: /nowhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What an older history recorded: a gitlink.
	if _, err := h.Git(ctx, nil, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,old/clone"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := h.Git(ctx, nil, "ls-tree", "-r", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	tree := string(out)
	if strings.Contains(tree, "160000") || strings.Contains(tree, "tools/repo") || strings.Contains(tree, "notes/worktree") || strings.Contains(tree, "old/clone") {
		t.Errorf("the history records a nested repository:\n%s", tree)
	}
	for _, p := range []string{"memory/MEMORY.md", "skills/deploy/SKILL.md", "topic.md"} {
		if !strings.Contains(tree, "\t"+p+"\n") {
			t.Errorf("%s not recorded:\n%s", p, tree)
		}
	}
}
