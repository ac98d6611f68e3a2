//go:build unix

package offline

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFOsInTheMemoryDirDoNotBlock: a named pipe where the engine reads
// (.dreamignore, a topic, the index) would block a plain open until a
// writer appears, which at night is never. The engine opens memory files as
// the sandbox does, without blocking and regular files only, so the run
// ends and the pipes are left alone.
func TestFIFOsInTheMemoryDirDoNotBlock(t *testing.T) {
	for _, name := range []string{IgnoreFile, "notes.md", "MEMORY.md"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if name != "MEMORY.md" {
				os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte("# Memory\n\n- [Build](build.md) — how it builds\n"), 0o644)
			}
			os.WriteFile(filepath.Join(dir, "build.md"), []byte("# Build\n\n- Run the race detector in CI always.\n- Run the race detector in CI always.\n"), 0o644)
			if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), Leads: true})
				if err == nil {
					_, err = PinnedFacts(dir, nil)
				}
				if err == nil {
					_, err = MissingPinned([]string{"nothing pinned here"}, dir)
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the engine blocked on a FIFO")
			}
			if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Fatalf("the FIFO was replaced: %v %v", fi, err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "build.md")); string(b) != "# Build\n\n- Run the race detector in CI always.\n" {
				t.Errorf("build.md not fixed:\n%s", b)
			}
		})
	}
}

// TestReadSmallSkipsAFIFO: a side file asked for by name (not found by the
// listing, which skips pipes) is opened without blocking and refused.
func TestReadSmallSkipsAFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, IgnoreFile), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s, err := scan(context.Background(), Options{MemoryDir: dir, Layout: LayoutFor("")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if b := s.readSmall(IgnoreFile); b != nil {
		t.Fatalf("read %q from a FIFO", b)
	}
}
