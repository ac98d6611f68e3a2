package offline

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dreamkit/dream/internal/memory"
)

// TestListMemoryPastOpenDirs: a memory with more folders than a listing
// keeps open is listed whole, and the files of the folders past the limit
// are read through the memory reader (no descriptor kept).
func TestListMemoryPastOpenDirs(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < maxOpenDirs+20; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i), "n.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("- note %d\n", i)), 0o644)
	}
	l, err := listMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if len(l.rels) != maxOpenDirs+20 || len(l.dirs) != maxOpenDirs {
		t.Fatalf("%d files, %d directories open", len(l.rels), len(l.dirs))
	}
	past := 0
	for i := range l.rels {
		_, _, rok, err := l.read(i)
		if err != nil {
			t.Fatal(err)
		}
		if !rok {
			past++
		}
	}
	if past != 21 { // the root is one of the directories kept
		t.Fatalf("%d files past the limit", past)
	}
	want, _ := memory.List(dir)
	if !slices.Equal(l.rels, want.Topics) {
		t.Fatal("the listing differs from memory.List")
	}
}
