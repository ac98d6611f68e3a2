package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
)

// TestHostileLockFile: a .consolidate-lock that is a directory, a FIFO or
// unreadable. `dream status` explains it (exit 0, JSON naming the problem,
// the lock gate closed); `dream run` refuses (exit 1, not "held"), sends
// nothing to any model, and leaves the path as it was: an unreadable body
// is never taken over.
func TestHostileLockFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, path string)
		want  string
	}{
		{"directory", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a directory)"},
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a FIFO)"},
		{"unreadable", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte("4242"), 0); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-3 * time.Hour)
			os.Chtimes(p, old, old)
		}, "permission denied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			lockPath := filepath.Join(w.mem, ".consolidate-lock")
			tt.plant(t, lockPath)
			before, _ := os.Lstat(lockPath)
			run := w.dream
			if tt.name == "unreadable" && os.Geteuid() == 0 {
				run = w.asNobody(t) // root reads any file
			}

			st := run(nil, append([]string{"status", "--json"}, w.locFlags()...)...)
			if st.code != 0 {
				t.Fatalf("status exit %d, want 0:\n%s", st.code, st)
			}
			// Decoded as the JSON contract, not the Go type.
			var s struct {
				Lock struct {
					Held    bool   `json:"held"`
					Problem string `json:"problem"`
				} `json:"lock"`
				Gates []dream.GateState `json:"gates"`
				Next  string            `json:"next"`
			}
			if err := json.Unmarshal([]byte(st.stdout), &s); err != nil {
				t.Fatalf("status did not print JSON: %v\n%s", err, st)
			}
			if !strings.Contains(s.Lock.Problem, tt.want) || s.Lock.Held {
				t.Errorf("status lock %+v, want problem %q", s.Lock, tt.want)
			}
			for _, g := range s.Gates {
				if g.Name == dream.GateLock && (g.Open || !strings.Contains(g.Detail, tt.want)) {
					t.Errorf("lock gate %+v, want closed naming %q", g, tt.want)
				}
			}
			if s.Next == dream.GateReady {
				t.Error("status says ready with an unusable lock")
			}
			if txt := run(nil, append([]string{"status"}, w.locFlags()...)...); txt.code != 0 || !strings.Contains(txt.stdout, tt.want) {
				t.Errorf("status (text) does not explain the lock:\n%s", txt)
			}

			srv := llmtest.NewServer(successScript(w.mem)...)
			defer srv.Close()
			r := run(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
			if r.code != 1 || !strings.Contains(r.stdout+r.stderr, tt.want) {
				t.Errorf("run exit %d, want 1 naming %q:\n%s", r.code, tt.want, r)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d request(s) sent to the model past an unusable lock", n)
			}
			after, err := os.Lstat(lockPath)
			if err != nil || after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
				t.Errorf("the lock path changed: before %v %v, after %v %v", before.Mode(), before.ModTime(), after, err)
			}
		})
	}
}

// asNobody returns a runner of the dream binary as uid/gid 65534, with the
// world (and a copy of the binary) opened up to that user.
func (w *world) asNobody(t *testing.T) func(extraEnv []string, args ...string) result {
	t.Helper()
	for d := filepath.Dir(w.root); d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	for _, d := range []string{w.state, filepath.Join(w.root, "home", ".local", "state"), filepath.Join(w.root, "home", ".config")} {
		os.MkdirAll(d, 0o777)
	}
	filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o777)
		}
		return nil
	})
	bin := filepath.Join(w.root, "dream-bin")
	b, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, bin, b)
	return func(extraEnv []string, args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(append([]string{}, w.env...), extraEnv...)
		cmd.Dir = w.repo
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("running dream %v: %v", args, err)
			}
			code = ee.ExitCode()
		}
		return result{code, out.String(), errb.String()}
	}
}
