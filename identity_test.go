package dream

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestSyncIdentity(t *testing.T) {
	root := t.TempDir()
	id := func(mem, home string) string {
		return SyncIdentity(filepath.Join(root, mem), filepath.Join(root, home))
	}
	same := []struct{ name, memA, homeA, memB, homeB string }{
		{"plain dir under two homes", "home/ann/notes/api", "home/ann", "Users/ann/notes/api", "Users/ann"},
		{"claude project slug holding the home", "home/ann/.claude/projects/-" + slug(root) + "-home-ann-src-api/memory", "home/ann",
			"Users/bo/.claude/projects/-" + slug(root) + "-Users-bo-src-api/memory", "Users/bo"},
		{"codex global", "home/ann/.codex/memories", "home/ann", "home/bo/.codex/memories", "home/bo"},
		{"trailing slash", "home/ann/notes/api/", "home/ann", "home/ann/notes/api", "home/ann"},
	}
	for _, c := range same {
		if a, b := id(c.memA, c.homeA), id(c.memB, c.homeB); a != b {
			t.Errorf("%s: %s and %s are one memory, got %s and %s", c.name, c.memA, c.memB, a, b)
		}
	}
	differ := []struct{ name, memA, memB string }{
		{"two projects", "home/ann/notes/api", "home/ann/notes/web"},
		{"two claude projects", "home/ann/.claude/projects/-x-home-ann-src-api/memory", "home/ann/.claude/projects/-x-home-ann-src-web/memory"},
		{"outside home", "srv/a/memory", "srv/b/memory"},
	}
	for _, c := range differ {
		if id(c.memA, "home/ann") == id(c.memB, "home/ann") {
			t.Errorf("%s: %s and %s share an identity", c.name, c.memA, c.memB)
		}
	}
}

// slug is Claude Code's project name of a path, without its leading '-'.
func slug(p string) string {
	b := []byte(p)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b[1:])
}

// syncMachine is one machine's dreamer on one memory: its own home, state
// dir and memory dir, the shared remote, and settings from mutate.
func syncMachine(t *testing.T, home, rel, remote string, files map[string]string, mutate func(*Settings)) *Dreamer {
	t.Helper()
	mem := filepath.Join(home, rel)
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(mem, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	s := DefaultSettings()
	s.StateDir = filepath.Join(home, ".local", "state", "dream")
	s.SyncRemote = remote
	if mutate != nil {
		mutate(&s)
	}
	d, err := New(Config{MemoryDir: mem, StateDir: s.StateDir, Settings: s, Runner: &countingRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestSyncKeepsMemoriesApart: with one sync_remote for every project (as a
// user's config.toml sets it), two projects' memories never meet, while two
// machines' views of one project (other homes, other state dirs, the same
// path under home) still sync with each other.
func TestSyncKeepsMemoriesApart(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	api := map[string]string{
		"MEMORY.md": "# Memory\n\n- [Build](build.md): how to build\n",
		"build.md":  "# Build\n\n1. `go build ./...`\n2. `go test -race ./...`\n\n> 发布前先跑测试。\n",
	}
	web := map[string]string{"MEMORY.md": "# Memory\n\n- [Deploy](deploy.md)\n", "deploy.md": "# Deploy\n\nRun `npm run deploy`.\n"}
	laptop, desk := filepath.Join(root, "Users", "ann"), filepath.Join(root, "home", "ann")
	apiLaptop := syncMachine(t, laptop, "src/api/memory", remote, api, nil)
	webLaptop := syncMachine(t, laptop, "src/web/memory", remote, web, nil)
	apiDesk := syncMachine(t, desk, "src/api/memory", remote, nil, nil)
	if a, b := apiLaptop.Config().Settings.SyncBranch, apiDesk.Config().Settings.SyncBranch; a != b {
		t.Fatalf("one project on two machines has branches %s and %s", a, b)
	}

	ctx := context.Background()
	for _, d := range []*Dreamer{apiLaptop, webLaptop} {
		if _, err := d.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(webLaptop.cfg.MemoryDir, "build.md")); !os.IsNotExist(err) {
		t.Fatalf("the api project's memory was pulled into the web project's (%v)", err)
	}
	rep, err := apiDesk.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(apiDesk.cfg.MemoryDir, "build.md"))
	if err != nil || string(got) != api["build.md"] {
		t.Fatalf("the api project's second machine got %q (%v); pulled %+v", got, err, rep.Pulled)
	}
	if _, err := os.Stat(filepath.Join(apiDesk.cfg.MemoryDir, "deploy.md")); !os.IsNotExist(err) {
		t.Fatal("the web project's memory reached the api project's second machine")
	}

	// sync_branch names a memory by hand: a dir at another path joins it.
	other := syncMachine(t, filepath.Join(root, "srv"), "shared/memory", remote, nil, func(s *Settings) {
		s.SyncBranch = apiLaptop.Config().Settings.SyncBranch
	})
	if _, err := other.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(other.cfg.MemoryDir, "build.md")); err != nil {
		t.Fatalf("sync_branch did not join the memory: %v", err)
	}
}
