//go:build unix

package offline

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/dreamkit/dream/internal/memory"
)

// TestListMemoryAsList: over random trees (nested folders, hidden files
// and folders, non-Markdown files, an upper-case extension, MEMORY.md at
// the top and deeper, FIFOs, links to files and to folders, Chinese and
// spaced names, a linked memory dir), the one walk of the scan lists
// exactly what memory.List lists, in scan order, linked Markdown files
// set aside as it sets them aside.
func TestListMemoryAsList(t *testing.T) {
	names := []string{"a.md", "b.MD", "笔记.md", "with space.md", "a-b.md", "z.txt", ".hidden.md", "MEMORY.md", "memory.md", "a0.md"}
	dirs := []string{"a", "a/b", ".git", "项目", "a b", "z"}
	linked, listed := 0, 0
	defer func() {
		if linked < 5 || listed < 20 {
			t.Errorf("%d trees with linked files, %d listed: the test misses a case", linked, listed)
		}
	}()
	for seed := uint64(1); seed <= 60; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			base := t.TempDir()
			root := filepath.Join(base, "mem")
			os.Mkdir(root, 0o755)
			for _, d := range dirs {
				if rng.IntN(2) == 0 {
					os.MkdirAll(filepath.Join(root, d), 0o755)
				}
			}
			var placed []string
			for i := 0; i < 4+rng.IntN(20); i++ {
				d := ""
				if rng.IntN(2) == 0 {
					d = dirs[rng.IntN(len(dirs))]
				}
				rel := filepath.Join(d, names[rng.IntN(len(names))])
				os.MkdirAll(filepath.Join(root, d), 0o755)
				if os.WriteFile(filepath.Join(root, rel), []byte("- x\n"), 0o644) == nil {
					placed = append(placed, rel)
				}
			}
			if rng.IntN(3) == 0 && len(placed) > 0 {
				syscall.Mkfifo(filepath.Join(root, "pipe.md"), 0o644)
			}
			if rng.IntN(3) == 0 {
				os.MkdirAll(filepath.Join(base, "elsewhere"), 0o755)
				os.WriteFile(filepath.Join(base, "elsewhere", "out.md"), []byte("- y\n"), 0o644)
				os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(root, "linkdir"))
			}
			if rng.IntN(4) == 0 && len(placed) > 0 {
				target := placed[rng.IntN(len(placed))]
				d := ""
				if rng.IntN(2) == 0 {
					d = dirs[rng.IntN(len(dirs))]
				}
				os.MkdirAll(filepath.Join(root, d), 0o755)
				os.Symlink(filepath.Join(root, target), filepath.Join(root, d, "linked.md"))
				if rng.IntN(2) == 0 {
					os.Symlink(filepath.Join(root, target), filepath.Join(root, "0first.md"))
				}
			}
			dir := root
			if rng.IntN(4) == 0 {
				dir = filepath.Join(base, "memlink")
				os.Symlink(root, dir)
			}
			got, gerr := listMemory(dir)
			if got != nil {
				defer got.close()
			}
			want, werr := memory.List(dir)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("error %v, memory's %v", gerr, werr)
			}
			if werr != nil {
				return
			}
			wantRels := want.Topics
			if want.Index {
				wantRels = append([]string{memory.IndexFile}, wantRels...)
			}
			if got.root != want.Root || got.index != want.Index || !slices.Equal(got.rels, wantRels) || !slices.Equal(got.links, want.Links) {
				t.Fatalf("listed %s %v %q links %q\nmemory.List %s %v %q links %q", got.root, got.index, got.rels, got.links, want.Root, want.Index, wantRels, want.Links)
			}
			if len(want.Links) > 0 {
				linked++
			}
			listed++
			// Every file's bytes and permissions, read through its
			// directory, are its own.
			for i, rel := range got.rels {
				info, err := os.Lstat(filepath.Join(want.Root, filepath.FromSlash(rel)))
				if err != nil {
					t.Fatal(err)
				}
				data, perm, ok, err := got.read(i)
				if err != nil {
					t.Fatal(err)
				}
				if wantData, _ := os.ReadFile(filepath.Join(got.root, filepath.FromSlash(rel))); ok && (string(data) != string(wantData) || perm != info.Mode().Perm()) {
					t.Fatalf("%s: read %q %v, want %q %v", rel, data, perm, wantData, info.Mode().Perm())
				}
			}
		})
	}
}
