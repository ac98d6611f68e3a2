package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/raceenv"
)

// binPath is the dream binary built once for the end-to-end tests.
var binPath string

func TestMain(m *testing.M) {
	raceenv.Setenv() // the helper processes inherit it: no second at each exit
	dir, err := os.MkdirTemp("", "dream-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, "building dream:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// world is a temp home with a memory dir, sessions, a repo and a state dir.
type world struct {
	t                                *testing.T
	root, mem, sessions, repo, state string
	env                              []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{
		t:        t,
		root:     root,
		mem:      filepath.Join(root, "memory"),
		sessions: filepath.Join(root, "sessions"),
		repo:     filepath.Join(root, "repo"),
		state:    filepath.Join(root, "state"),
	}
	w.write(w.mem, "MEMORY.md", "# Memory\n\n- [Build](build.md) — how the project builds\n")
	w.write(w.mem, "build.md", "---\nname: build\ndescription: how the project builds\ntype: project\n---\n\nRun `make all` to build.\n")
	w.write(w.repo, "main.go", "package main\n\nfunc main() {}\n")
	w.write(w.repo, "Makefile", "all:\n\tgo build ./...\n")
	for i := 0; i < 6; i++ {
		w.write(w.sessions, fmt.Sprintf("s%d.jsonl", i), `{"type":"user","message":{"role":"user","content":"hello"}}`+"\n")
	}
	w.env = []string{
		"HOME=" + filepath.Join(root, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "home", ".config"),
		"XDG_STATE_HOME=" + filepath.Join(root, "home", ".local", "state"),
		"PATH=" + os.Getenv("PATH"),
		raceenv.Env(),
	}
	return w
}

func (w *world) write(dir, name, content string) {
	w.t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// locFlags are the location flags of this world.
func (w *world) locFlags() []string {
	return []string{"--memory-dir", w.mem, "--sessions-dir", w.sessions, "--repo", w.repo, "--state-dir", w.state}
}

type result struct {
	code           int
	stdout, stderr string
}

// dream runs the binary with args and extra env, bounded in time.
func (w *world) dream(extraEnv []string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Dir = w.repo
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			w.t.Fatalf("running dream %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{code, out.String(), errb.String()}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func decodeJSON[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("decoding JSON output: %v\n%s", err, r)
	}
	return v
}

// treeHash hashes every file below dir (paths, modes and contents),
// skipping names for which skip returns true.
func treeHash(t *testing.T, dir string, skip func(rel string) bool) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if skip != nil && rel != "." && skip(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, rel+" -> "+target)
		case d.IsDir():
			lines = append(lines, rel+"/")
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			lines = append(lines, fmt.Sprintf("%s %v %s", rel, info.Mode().Perm(), hex.EncodeToString(sum[:])))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// snapshot returns the memory dir's files and contents, lock excluded.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".consolidate-lock" {
			return nil
		}
		b, _ := os.ReadFile(p)
		m[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return m
}

// writeExecutable writes a file that a test (or the dream it runs) then
// executes. The e2e tests run side by side, and a process one of them
// forks while this file is open for writing inherits the descriptor until
// its exec: running the file in that window fails with "text file busy".
// Holding syscall.ForkLock's read side while the file is open keeps every
// fork of this test process out of that window.
func writeExecutable(t *testing.T, path string, data []byte) {
	t.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, data, 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
}
