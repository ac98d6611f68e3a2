package lockbackend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/lock"
)

func newFile(t *testing.T) (*File, string) {
	t.Helper()
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory")
	if err := os.Mkdir(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	return NewFile(lock.New(mem, filepath.Join(dir, "state", "guard"))), mem
}

func TestFileFence(t *testing.T) {
	ctx := context.Background()
	f, mem := newFile(t)
	if err := f.Fence(ctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("Fence without the lock: %v, want ErrFenced", err)
	}
	if _, err := f.TryAcquire(); err != nil {
		t.Fatal(err)
	}
	if err := f.Fence(ctx); err != nil {
		t.Fatalf("Fence while holding: %v", err)
	}
	st, err := f.Describe(ctx)
	if err != nil || st.Backend != NameFile || !st.Held || st.PID != os.Getpid() {
		t.Fatalf("Describe while holding: %+v %v", st, err)
	}
	// Another agent that knows only the file reclaims it (it found the
	// mtime over an hour old) and writes its PID: the holder is fenced.
	if err := os.WriteFile(filepath.Join(mem, lock.FileName), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Fence(ctx); !errors.Is(err, ErrFenced) || !strings.Contains(strings.ToLower(err.Error()), "pid 1") {
		t.Fatalf("Fence after a takeover: %v, want ErrFenced naming pid 1", err)
	}
	if err := f.Complete(); !errors.Is(err, lock.ErrLost) {
		t.Fatalf("Complete after a takeover: %v, want ErrLost", err)
	}
}

func TestFileSetTaskAndClose(t *testing.T) {
	f, _ := newFile(t)
	if f.Name() != NameFile || f.SetTask(context.Background(), "x") != nil || f.Close() != nil {
		t.Fatal("the file backend's no-ops failed")
	}
}
