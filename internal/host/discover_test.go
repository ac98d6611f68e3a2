package host_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dreamkit/dream/internal/host"
)

func mkfile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func claudeLine(cwd string) string {
	return `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"` + cwd + `","sessionId":"4f35e220-c435-4cf7-b9b9-f40426042847","version":"2.0.61","type":"user","message":{"role":"user","content":"修一下构建"}}` + "\n"
}

func TestDiscoverProjects(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	env := func(string) (string, bool) { return "", false }
	repoA := filepath.Join(root, "src", "app")
	repoB := filepath.Join(root, "src", "gem")
	worktree := filepath.Join(root, "src", "app-feature")
	mkfile(t, filepath.Join(repoA, ".git", "HEAD"), "ref: refs/heads/main\n")
	mkfile(t, filepath.Join(worktree, ".git"), "gitdir: "+filepath.Join(repoA, ".git", "worktrees", "app-feature")+"\n")

	// Claude Code: the main checkout and a worktree, each with transcripts.
	a, err := host.ResolveProject("claude", repoA, home, env)
	if err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(a.SessionsDir, "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"), `{"type":"summary","summary":"build"}`+"\n"+claudeLine(repoA))
	wt, _ := host.ResolveProject("claude", worktree, home, env)
	mkfile(t, filepath.Join(wt.SessionsDir, "s.jsonl"), claudeLine(worktree))
	if wt.MemoryDir != a.MemoryDir {
		t.Fatalf("the worktree's memory %s is not the main checkout's %s", wt.MemoryDir, a.MemoryDir)
	}
	projects := filepath.Dir(a.SessionsDir)
	// Transcripts that do not say where they ran, or lie about it.
	mkfile(t, filepath.Join(projects, "-tmp-nocwd", "x.jsonl"), `{"type":"user","message":"hi"}`+"\n")
	mkfile(t, filepath.Join(projects, "-tmp-relative", "x.jsonl"), claudeLine("../../etc"))
	mkfile(t, filepath.Join(projects, "-tmp-garbage", "x.jsonl"), "\x00\x01not json at all\n{\"cwd\":\n")

	// Gemini CLI: a project claimed by its .project_root marker.
	g, err := host.ResolveProject("gemini", repoB, home, env)
	if err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(filepath.Dir(g.SessionsDir), ".project_root"), repoB+"\n")
	mkfile(t, filepath.Join(g.SessionsDir, "session-1.jsonl"), "{}\n")

	// Codex CLI: global sessions.
	c, _ := host.ResolveProject("codex", "", home, env)
	mkfile(t, filepath.Join(c.SessionsDir, "2026", "11", "30", "rollout-2026-11-30T10-00-00-abc.jsonl"), "{}\n")

	got, err := host.Discover(home, env)
	if err != nil {
		t.Logf("skipped: %v", err)
	}
	type key struct{ host, mem, sessions string }
	var keys []key
	for _, p := range got {
		keys = append(keys, key{p.Host, p.MemoryDir, p.SessionsDir})
	}
	want := []key{
		{"claude", a.MemoryDir, a.SessionsDir},
		{"claude", a.MemoryDir, wt.SessionsDir},
		{"gemini", g.MemoryDir, g.SessionsDir},
		{"codex", c.MemoryDir, c.SessionsDir},
	}
	for _, w := range want {
		if !slices.Contains(keys, w) {
			t.Errorf("missing %+v in %+v", w, keys)
		}
	}
	if len(keys) != len(want) {
		t.Errorf("found %d projects, want %d: %+v", len(keys), len(want), keys)
	}
	roots := host.DiscoveryRoots(home, env)
	if !slices.Contains(roots, projects) || !slices.Contains(roots, filepath.Dir(filepath.Dir(g.SessionsDir))) {
		t.Errorf("discovery roots %v", roots)
	}
	// An empty home finds nothing and fails nothing.
	if ps, err := host.Discover(t.TempDir(), env); len(ps) != 0 || err != nil {
		t.Errorf("empty home: %v %v", ps, err)
	}
}
