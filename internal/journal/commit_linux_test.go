package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// hostileEdits is what a hostile runner stages before it returns.
func hostileEdits() map[string]string {
	return map[string]string{
		"MEMORY.md":     "# Memory\n- [User](user.md) who the user is\n- [A](project_a.md) project A (release 2025-03-13)\n",
		"project_a.md":  "---\nname: project_a\n---\nRelease is 2025-03-13.\n\n## 步骤\n1. `make release`\n2. > tag it\n",
		"topics/x.md":   "x one\nx 2\nx three\n",
		"new/deep/n.md": "deep\n",
	}
}

// A runner that returned but left work behind (a goroutine, a child it
// did not wait for) that writes a staged file after the changes were
// checked, in place or by replacing it: the commit refuses, changing
// nothing, since what would land is not what the guards checked.
func TestCommitRefusesStagingWrittenAfterReturn(t *testing.T) {
	late := "LATE: written after the runner returned\n"
	for _, c := range []struct {
		name  string
		after func(t *testing.T, stage string)
	}{
		{"written-in-place", func(t *testing.T, stage string) {
			os.WriteFile(filepath.Join(stage, "topics/x.md"), []byte(late), 0o644)
		}},
		{"replaced", func(t *testing.T, stage string) {
			replace(t, stage, map[string]string{"new/deep/n.md": late})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			state, mem := setup(t)
			txn, err := Begin(state, mem, "d1")
			if err != nil {
				t.Fatal(err)
			}
			writeTree(t, txn.Dir(), hostileEdits())
			txn.Freeze() // the runner has returned
			if _, err := txn.Changes(); err != nil {
				t.Fatal(err)
			}
			c.after(t, txn.Dir())
			before := readTree(t, mem)
			_, err = txn.Commit()
			if !errors.Is(err, ErrStagingChanged) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("Commit = %v, want ErrStagingChanged and nothing changed", err)
			}
			got := readTree(t, mem)
			if !sameTree(got, before) {
				t.Fatalf("memory changed: %s (temps %v)", describe(got), tempFiles(got))
			}
			for p, body := range got {
				if strings.Contains(body, "LATE") {
					t.Fatalf("the runner's late write reached the memory in %s", p)
				}
			}
			if HasPending(state, mem) {
				if _, err := Recover(state, mem); err != nil {
					t.Fatal(err)
				}
			}
			if got := readTree(t, mem); !sameTree(got, before) {
				t.Fatalf("recovery landed the refused commit: %s", describe(got))
			}
		})
	}
}

// A runner that keeps writing its staged files in place after it returned,
// all through the commit and after it: whatever the race, the memory ends
// with either its old content (the commit refused) or exactly what was
// checked, never a late write, and writes after the commit never reach it.
func TestCommitRacingLateWriterNeverReachesMemory(t *testing.T) {
	for round := range 8 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			state, mem := setup(t)
			txn, err := Begin(state, mem, "d1")
			if err != nil {
				t.Fatal(err)
			}
			edits := hostileEdits()
			writeTree(t, txn.Dir(), edits)
			txn.Freeze()
			if _, err := txn.Changes(); err != nil {
				t.Fatal(err)
			}
			before := readTree(t, mem)
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Start racing after a round-dependent delay.
				time.Sleep(time.Duration(round) * 150 * time.Microsecond)
				for i := 0; !stop.Load(); i++ {
					for p := range edits {
						f, err := os.OpenFile(filepath.Join(txn.Dir(), filepath.FromSlash(p)), os.O_WRONLY, 0)
						if err == nil {
							fmt.Fprintf(f, "LATE %d\n", i)
							f.Close()
						}
					}
				}
			}()
			_, err = txn.Commit()
			time.Sleep(20 * time.Millisecond) // it keeps writing after the commit too
			stop.Store(true)
			wg.Wait()
			got := readTree(t, mem)
			switch {
			case err == nil:
				if want := after(before, edits); !sameTree(got, want) {
					t.Fatalf("memory after a commit raced by a late writer: %s", describe(got))
				}
			case errors.Is(err, ErrStagingChanged):
				if !sameTree(got, before) {
					t.Fatalf("a refused commit changed memory: %s (temps %v)", describe(got), tempFiles(got))
				}
			default:
				t.Fatalf("Commit = %v", err)
			}
		})
	}
}

// A file added in a new directory survives a power cut only if every new
// directory's entry is flushed too: the commit flushes the new directories'
// parents up to the memory dir, and syncStaged the runner's directories up
// to staging itself.
func TestCommitFlushesNewDirectoriesParents(t *testing.T) {
	txn, _ := beginLinked(t)
	replace(t, txn.Dir(), map[string]string{"new/deep/er/n.md": "# N\n\n1. 第一步\n", "topics/x.md": "x one\nx 2\nx three\n"})
	var mu sync.Mutex
	inMem, inStage := map[string]bool{}, map[string]bool{}
	syncDirIn = func(r *os.Root, dir string) error {
		mu.Lock()
		inMem[filepath.ToSlash(dir)] = true
		mu.Unlock()
		return fsutil.SyncDirIn(r, dir)
	}
	syncDirAt = func(dir string) error {
		rel, _ := filepath.Rel(txn.Dir(), dir)
		mu.Lock()
		inStage[filepath.ToSlash(rel)] = true
		mu.Unlock()
		return SyncDir(dir)
	}
	defer func() { syncDirIn, syncDirAt = fsutil.SyncDirIn, SyncDir }()
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".", "new", "new/deep", "new/deep/er", "topics"} {
		if !inMem[d] {
			t.Errorf("memory dir %q not flushed (flushed %v)", d, inMem)
		}
		if !inStage[d] {
			t.Errorf("staging dir %q not flushed (flushed %v)", d, inStage)
		}
	}
}

// A commit of many files flushes them, and every directory holding them,
// with one syncfs of the file system instead of one fsync each: the staged
// files, and, for a copied staging, their copies beside their targets (a
// linked staging's files are linked into place, not copied); where syncfs
// declines (an old kernel) it flushes file by file, and lands the same tree
// either way.
func TestCommitManyFilesFlushesFileSystemOnce(t *testing.T) {
	for _, c := range []struct{ link, declines bool }{{true, false}, {true, true}, {false, false}, {false, true}} {
		t.Run(fmt.Sprintf("link=%v/declines=%v", c.link, c.declines), func(t *testing.T) {
			declines := c.declines
			state, mem := setup(t)
			txn, err := BeginWith(state, mem, "d1", Options{LinkUnchanged: c.link})
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{}
			for i := range syncFSFrom + 10 {
				files[fmt.Sprintf("topics/t%03d/n%04d.md", i%7, i)] = fmt.Sprintf("# 第 %d 条\n\n1. Run `make test` first.\n2. Then ship.\n", i)
			}
			replace(t, txn.Dir(), files)
			var mu sync.Mutex
			var flushedFS []string
			stagingDirs := 0
			syncFS = func(dir string) (bool, error) {
				mu.Lock()
				flushedFS = append(flushedFS, dir)
				mu.Unlock()
				if declines {
					return false, nil
				}
				return fsutil.SyncFS(dir)
			}
			syncDirAt = func(dir string) error {
				mu.Lock()
				stagingDirs++
				mu.Unlock()
				return SyncDir(dir)
			}
			defer func() { syncFS, syncDirAt = fsutil.SyncFS, SyncDir }()
			if _, err := txn.Commit(); err != nil {
				t.Fatal(err)
			}
			want := []string{txn.Dir()}
			if !c.link {
				want = append(want, mem) // the temporary copies, beside their targets
			}
			if !slices.Equal(flushedFS, want) {
				t.Errorf("syncfs asked for %q, want %q", flushedFS, want)
			}
			if declines != (stagingDirs > 0) {
				t.Errorf("%d staging directories flushed one by one (syncfs declines: %v)", stagingDirs, declines)
			}
			got := readTree(t, mem)
			for rel, body := range files {
				if got[rel] != body {
					t.Fatalf("%s = %q after the commit, want %q", rel, got[rel], body)
				}
			}
		})
	}
}

// beginLinked begins a dream over setup's memory with its unchanged files
// linked into staging.
func beginLinked(t *testing.T) (txn *Txn, mem string) {
	t.Helper()
	state, mem := setup(t)
	txn, err := BeginWith(state, mem, "d1", Options{LinkUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	return txn, mem
}
