package gitsync

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/audit"
)

var ctx = context.Background()

// memoryFiles is a small real-looking memory: an index with pointers, a
// topic file with nested headings, a numbered procedure, code, a quote and
// Chinese.
var memoryFiles = map[string]string{
	"MEMORY.md": "# Memory index\n\n- [Build](build.md): how to build and test\n- [用户偏好](prefs.md): 用户的习惯\n",
	"build.md":  "# Build\n\n## Release\n\n1. Bump the version in `version.go`.\n2. Run:\n\n```sh\ngo test -race ./...\n```\n\n3. Tag it.\n\n> Never tag from a dirty tree.\n",
	"prefs.md":  "# 用户偏好\n\n- 回答用中文\n- Prefers table tests\n",
}

type machine struct {
	mem, state string
	hist       *audit.History
	repo       *Repo
}

func newMachine(t *testing.T, remote string, files map[string]string) *machine {
	t.Helper()
	dir := t.TempDir()
	m := &machine{mem: filepath.Join(dir, "memory"), state: filepath.Join(dir, "state")}
	if err := os.MkdirAll(m.mem, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		write(t, filepath.Join(m.mem, name), body)
	}
	h, err := audit.Open(ctx, m.state, m.mem)
	if err != nil {
		t.Fatal(err)
	}
	m.hist = h
	if m.repo, err = New(h, remote, "dream/test-memory", m.state); err != nil {
		t.Fatal(err)
	}
	m.record(t)
	return m
}

func (m *machine) record(t *testing.T) {
	t.Helper()
	if _, err := m.hist.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// snapshot is every file of a memory dir but dream's lock.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = read(t, p)
		return nil
	})
	return out
}

func bareRemote(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", p).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	return p
}

func mustPull(t *testing.T, m *machine) dream.SyncPull {
	t.Helper()
	r, err := m.repo.Pull(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustPush(t *testing.T, m *machine) int {
	t.Helper()
	n, err := m.repo.Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTwoMachinesShareMemory(t *testing.T) {
	t.Parallel()
	remote := bareRemote(t)
	a := newMachine(t, remote, memoryFiles)
	if st := a.repo.Status(ctx); st.State != "remote empty" || st.Ahead != 1 {
		t.Fatalf("before the first push: %+v", st)
	}
	if r := mustPull(t, a); r.Kind != "up to date" {
		t.Fatalf("pull from an empty remote: %+v", r)
	}
	if n := mustPush(t, a); n != 1 {
		t.Fatalf("pushed %d commits, want 1", n)
	}
	if st := a.repo.Status(ctx); st.State != "in sync" {
		t.Fatalf("after push: %+v", st)
	}

	// A new machine with an empty memory gets everything.
	b := newMachine(t, remote, nil)
	if st := b.repo.Status(ctx); st.State != "nothing local" || st.Behind != 1 {
		t.Fatalf("new machine: %+v", st)
	}
	if r := mustPull(t, b); r.Kind != "fast-forward" || len(r.Files) != 3 {
		t.Fatalf("first pull: %+v", r)
	}
	if got, want := snapshot(t, b.mem), snapshot(t, a.mem); !equalMaps(got, want) {
		t.Fatalf("memory after the first pull:\n%v\nwant\n%v", got, want)
	}

	// Each edits a different file; the second to sync merges.
	write(t, filepath.Join(a.mem, "build.md"), memoryFiles["build.md"]+"\n## Lint\n\n- staticcheck before every commit\n")
	a.record(t)
	mustPush(t, a)
	write(t, filepath.Join(b.mem, "prefs.md"), memoryFiles["prefs.md"]+"- 代码注释用英文\n")
	b.record(t)
	if st := b.repo.Status(ctx); st.State != "diverged" || st.Ahead != 1 || st.Behind != 1 {
		t.Fatalf("both edited: %+v", st)
	}
	if r := mustPull(t, b); r.Kind != "merge" || len(r.Files) != 1 || r.Files[0].Path != "build.md" {
		t.Fatalf("merge pull: %+v", r)
	}
	if !strings.Contains(read(t, filepath.Join(b.mem, "build.md")), "staticcheck") || !strings.Contains(read(t, filepath.Join(b.mem, "prefs.md")), "代码注释") {
		t.Fatal("the merge lost an edit")
	}
	if n := mustPush(t, b); n != 2 { // b's edit and the merge
		t.Fatalf("pushed %d, want 2", n)
	}
	if r := mustPull(t, a); r.Kind != "fast-forward" {
		t.Fatalf("a's pull: %+v", r)
	}
	if !equalMaps(snapshot(t, a.mem), snapshot(t, b.mem)) {
		t.Fatal("machines differ after syncing both ways")
	}
	// The audit log reads the same on both machines.
	la, _ := a.hist.Log(ctx, 0)
	lb, _ := b.hist.Log(ctx, 0)
	if len(la) == 0 || len(la) != len(lb) || la[0].Commit != lb[0].Commit {
		t.Fatalf("logs differ: %d vs %d entries", len(la), len(lb))
	}
}

func TestConflictChangesNothing(t *testing.T) {
	t.Parallel()
	remote := bareRemote(t)
	a := newMachine(t, remote, memoryFiles)
	mustPush(t, a)
	b := newMachine(t, remote, nil)
	mustPull(t, b)

	write(t, filepath.Join(a.mem, "prefs.md"), "# 用户偏好\n\n- 回答用英文\n- Prefers table tests\n")
	a.record(t)
	mustPush(t, a)
	write(t, filepath.Join(b.mem, "prefs.md"), "# 用户偏好\n\n- 回答用日文\n- Prefers table tests\n")
	b.record(t)
	before := snapshot(t, b.mem)
	head, _ := b.repo.rev(ctx, "HEAD")

	_, err := b.repo.Pull(ctx, false)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "prefs.md") {
		t.Fatalf("pull: %v, want ErrConflict naming prefs.md", err)
	}
	if !equalMaps(snapshot(t, b.mem), before) {
		t.Fatal("a conflicting pull changed the memory")
	}
	if now, _ := b.repo.rev(ctx, "HEAD"); now != head {
		t.Fatal("a conflicting pull moved the branch")
	}
	if _, err := b.repo.Push(ctx); !errors.Is(err, ErrRejected) {
		t.Fatalf("push over a moved remote: %v, want ErrRejected", err)
	}
}

func TestUnsafeRemoteEntries(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(t *testing.T, work string){
		"symlink": func(t *testing.T, work string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(work, "evil.md")); err != nil {
				t.Fatal(err)
			}
		},
		"lock file": func(t *testing.T, work string) { write(t, filepath.Join(work, ".consolidate-lock"), "1") },
	} {
		t.Run(name, func(t *testing.T) {
			remote := bareRemote(t)
			work := t.TempDir()
			for n, b := range memoryFiles {
				write(t, filepath.Join(work, n), b)
			}
			plant(t, work)
			gitIn(t, work, "init", "-q", "--initial-branch=main")
			gitIn(t, work, "add", "-A", "--force")
			gitIn(t, work, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "planted")
			gitIn(t, work, "push", "-q", remote, "main:dream/test-memory")

			m := newMachine(t, remote, nil)
			_, err := m.repo.Pull(ctx, false)
			if !errors.Is(err, ErrUnsafe) {
				t.Fatalf("pull: %v, want ErrUnsafe", err)
			}
			if got := snapshot(t, m.mem); len(got) != 0 {
				t.Fatalf("an unsafe pull wrote %v", got)
			}
		})
	}
}

func TestUnreachableRemote(t *testing.T) {
	t.Parallel()
	m := newMachine(t, filepath.Join(t.TempDir(), "no-such.git"), memoryFiles)
	if st := m.repo.Status(ctx); st.State != "unreachable" || st.Error == "" {
		t.Fatalf("status: %+v", st)
	}
	if _, err := m.repo.Pull(ctx, false); err == nil {
		t.Fatal("pull from nowhere succeeded")
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func FuzzParseRaw(f *testing.F) {
	f.Add([]byte(":000000 100644 0000000000000000000000000000000000000000 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 A\x00a.md\x00"))
	f.Add([]byte(":100644 000000 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0000000000000000000000000000000000000000 D\x00dir/b.md\x00"))
	f.Add([]byte(":x\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := parseRaw(b)
		if err != nil {
			return
		}
		for _, e := range es {
			if checkEntry(e) == nil && (slices.Contains(strings.Split(e.path, "/"), "..") || strings.HasPrefix(e.path, "/")) {
				t.Fatalf("unsafe path accepted: %q", e.path)
			}
		}
	})
}

// TestPullLeavesOutOfScopeFilesAlone: when a memory's scope is narrowed (a
// nanobot workspace records only its memory files), the next record drops
// the files it no longer covers, and that drop reads as a deletion in the
// history. A peer pulling it must not delete its own copies: a pull lands
// only paths in the puller's scope.
func TestPullLeavesOutOfScopeFilesAlone(t *testing.T) {
	t.Parallel()
	remote := bareRemote(t)
	files := map[string]string{"sessions/telegram_8812.jsonl": "{\"role\":\"user\",\"content\":\"把灯光策略改为 7 点开启\"}\n"}
	for k, v := range memoryFiles {
		files[k] = v
	}
	a := newMachine(t, remote, files)
	mustPush(t, a)
	b := newMachine(t, remote, nil)
	mustPull(t, b)
	scope := []string{"MEMORY.md", "build.md", "prefs.md"}
	for _, m := range []*machine{a, b} {
		if err := audit.SetScope(m.state, m.mem, scope); err != nil {
			t.Fatal(err)
		}
		h, err := audit.Open(ctx, m.state, m.mem)
		if err != nil {
			t.Fatal(err)
		}
		m.hist = h
		if m.repo, err = New(h, remote, "dream/test-memory", m.state); err != nil {
			t.Fatal(err)
		}
	}
	b.record(t) // drops the session from b's history: a deletion in the log
	mustPush(t, b)
	mustPull(t, a)
	if got := read(t, filepath.Join(a.mem, "sessions", "telegram_8812.jsonl")); got != files["sessions/telegram_8812.jsonl"] {
		t.Fatalf("the pull deleted or changed an out-of-scope file: %q", got)
	}
	if got := read(t, filepath.Join(b.mem, "sessions", "telegram_8812.jsonl")); got == "" {
		t.Fatalf("narrowing the scope deleted the file on b itself")
	}
}
