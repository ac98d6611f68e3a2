//go:build unix

package memory

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dreamkit/dream/internal/fsutil"
)

// TestReaderRefusesAFIFO: a named pipe is neither listed nor read; asked
// for by name, the Reader refuses it at once instead of blocking in open.
func TestReaderRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("a\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	l, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Topics) != 1 {
		t.Fatalf("a FIFO was listed: %+v", l)
	}
	r, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.ReadFile("pipe.md"); !errors.Is(err, fsutil.ErrNotRegular) {
		t.Fatalf("reading a FIFO: %v", err)
	}
}
