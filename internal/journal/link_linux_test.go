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
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"golang.org/x/sys/unix"
)

// leasesWork reports whether dir's file system grants read leases, which
// the link install needs (link_linux.go).
func leasesWork(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.CreateTemp(dir, "lease-probe-")
	if err != nil {
		t.Fatal(err)
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)
	r, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := unix.FcntlInt(r.Fd(), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		return false
	}
	unix.FcntlInt(r.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
	return true
}

func inode(t *testing.T, path string) (ino uint64, nlink uint64) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino, uint64(st.Nlink)
}

// On one file system the commit installs each staged file by link: the
// memory file is the very inode the runner wrote (nothing copied), with the
// original's mode, its only name, and the staging name gone; no temporary
// file is left. For every staging mode.
func TestCommitInstallsByLink(t *testing.T) {
	for _, mode := range []struct {
		name string
		o    Options
	}{{"copy", Options{}}, {"linked", Options{LinkUnchanged: true}}, {"sparse", Options{Sparse: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			state, mem := setup(t)
			if !leasesWork(t, mem) {
				t.Skip("this file system grants no leases: commits copy")
			}
			os.Chmod(filepath.Join(mem, "user.md"), 0o640)
			settle()
			txn, err := BeginWith(state, mem, "d1", mode.o)
			if err != nil {
				t.Fatal(err)
			}
			edits := sparseEdits()
			replace(t, txn.Dir(), edits)
			os.Chmod(filepath.Join(txn.Dir(), "user.md"), 0o600) // the runner's temp mode
			staged := map[string]uint64{}
			for p := range edits {
				staged[p], _ = inode(t, filepath.Join(txn.Dir(), filepath.FromSlash(p)))
			}
			txn.Freeze()
			chs, err := txn.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if len(chs) != len(edits)-1 { // project_b.md was rewritten unchanged
				t.Fatalf("applied %v", chs)
			}
			for _, c := range chs {
				ino, nlink := inode(t, filepath.Join(mem, filepath.FromSlash(c.Path)))
				if ino != staged[c.Path] || nlink != 1 {
					t.Errorf("%s: inode %d (%d links), want the staged inode %d with one link", c.Path, ino, nlink, staged[c.Path])
				}
			}
			if info, _ := os.Stat(filepath.Join(mem, "user.md")); info.Mode().Perm() != 0o640 {
				t.Errorf("user.md mode %v, want the original's 0640", info.Mode().Perm())
			}
			got := readTree(t, mem)
			if want := after(preTree(), edits); !sameTree(got, want) {
				t.Fatalf("memory = %s (temps %v)", describe(got), tempFiles(got))
			}
		})
	}
}

// A file system that refuses the link (EXDEV: the state dir on another
// device; EPERM; EMLINK) gets copies, and the commit lands all the same.
func TestCommitLinkRefusedCopies(t *testing.T) {
	for _, errno := range []syscall.Errno{unix.EXDEV, unix.EPERM, unix.EMLINK} {
		t.Run(errno.Error(), func(t *testing.T) {
			state, mem := setup(t)
			txn, err := Begin(state, mem, "d1")
			if err != nil {
				t.Fatal(err)
			}
			edit(t, txn.Dir(), dreamEdits())
			staged, _ := inode(t, filepath.Join(txn.Dir(), "user.md"))
			calls := 0
			linkat = func(int, string, int, string, int) error { calls++; return errno }
			defer func() { linkat = unix.Linkat }()
			if _, err := txn.Commit(); err != nil {
				t.Fatal(err)
			}
			if leasesWork(t, mem) && calls != 1 {
				t.Errorf("linkat called %d times, want once: a refusal means copies from then on", calls)
			}
			if ino, _ := inode(t, filepath.Join(mem, "user.md")); ino == staged {
				t.Error("user.md is the staged inode though the link was refused")
			}
			if got, want := readTree(t, mem), after(preTree(), dreamEdits()); !sameTree(got, want) {
				t.Fatalf("memory = %s (temps %v)", describe(got), tempFiles(got))
			}
		})
	}
}

// A link that runs out of space (a directory block) on the third file
// changes nothing: the memory is byte for byte as it was with no temporary
// left, the staging holds every staged file again, the transaction is back
// to staging, and once space is back the same commit lands.
func TestCommitLinkDiskFullChangesNothing(t *testing.T) {
	state, mem := setup(t)
	if !leasesWork(t, mem) {
		t.Skip("this file system grants no leases: commits copy")
	}
	txn, err := BeginWith(state, mem, "d1", Options{LinkUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	replace(t, txn.Dir(), dreamEdits())
	txn.Freeze()
	stagedBefore := readTree(t, txn.Dir())
	before := readTree(t, mem)
	n := 0
	linkat = func(od int, op string, nd int, np string, fl int) error {
		if strings.HasPrefix(np, TempPrefix) {
			if n++; n == 3 {
				return unix.ENOSPC
			}
		}
		return unix.Linkat(od, op, nd, np, fl)
	}
	_, err = txn.Commit()
	linkat = unix.Linkat
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("Commit = %v, want ENOSPC and nothing changed", err)
	}
	if got := readTree(t, mem); !sameTree(got, before) {
		t.Fatalf("memory changed: %s (temps %v)", describe(got), tempFiles(got))
	}
	if got := readTree(t, txn.Dir()); !sameTree(got, stagedBefore) {
		t.Fatalf("staging lost files: %s, want %s", describe(got), describe(stagedBefore))
	}
	if st := txn.Info().State; st != StateStaging {
		t.Fatalf("state %s, want staging", st)
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatalf("Commit with space: %v", err)
	}
	if got, want := readTree(t, mem), after(preTree(), dreamEdits()); !sameTree(got, want) {
		t.Fatalf("memory = %s (temps %v)", describe(got), tempFiles(got))
	}
}

// hostileEdits is what a hostile runner stages before it returns.
func hostileEdits() map[string]string {
	return map[string]string{
		"MEMORY.md":     "# Memory\n- [User](user.md) who the user is\n- [A](project_a.md) project A (release 2025-03-13)\n",
		"project_a.md":  "---\nname: project_a\n---\nRelease is 2025-03-13.\n\n## 步骤\n1. `make release`\n2. > tag it\n",
		"topics/x.md":   "x one\nx 2\nx three\n",
		"new/deep/n.md": "deep\n",
	}
}

// A runner that returned but still holds a staged file open for writing
// (a goroutine it left behind, a child it did not wait for) could, once the
// file is linked into the memory, write into the memory behind every guard.
// The commit refuses instead, changing nothing, and what the runner writes
// afterwards never reaches the memory. The same for a write made after the
// changes were checked (through a copy as well as a link), and for a file
// replaced after the check.
func TestCommitRefusesStagingWrittenAfterReturn(t *testing.T) {
	late := "LATE: written after the runner returned\n"
	for _, c := range []struct {
		name   string
		copy   bool
		leases bool // needs leases to be caught
		after  func(t *testing.T, stage string) (cleanup func())
	}{
		{"held-open", false, true, func(t *testing.T, stage string) func() {
			f, err := os.OpenFile(filepath.Join(stage, "project_a.md"), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			return func() {
				// The write the runner makes once the commit is done.
				f.WriteAt([]byte(late), 0)
				f.Close()
			}
		}},
		{"written-in-place", false, false, func(t *testing.T, stage string) func() {
			os.WriteFile(filepath.Join(stage, "topics/x.md"), []byte(late), 0o644)
			return func() {}
		}},
		{"written-in-place-copy", true, false, func(t *testing.T, stage string) func() {
			os.WriteFile(filepath.Join(stage, "topics/x.md"), []byte(late), 0o644)
			return func() {}
		}},
		{"replaced", false, false, func(t *testing.T, stage string) func() {
			replace(t, stage, map[string]string{"new/deep/n.md": late})
			return func() {}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			state, mem := setup(t)
			if c.leases && !leasesWork(t, mem) {
				t.Skip("this file system grants no leases: commits copy")
			}
			if c.copy {
				linkInstalls = false
				defer func() { linkInstalls = true }()
			}
			settle()
			txn := beginSparse(t, state, mem, "d1", nil)
			writeTree(t, txn.Dir(), hostileEdits())
			txn.Freeze() // the runner has returned
			if _, err := txn.Changes(); err != nil {
				t.Fatal(err)
			}
			cleanup := c.after(t, txn.Dir())
			before := readTree(t, mem)
			_, err := txn.Commit()
			cleanup()
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
			settle()
			txn := beginSparse(t, state, mem, "d1", nil)
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
			_, err := txn.Commit()
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

// The same late writer, placed exactly in the windows a link opens: while a
// file is linked and its staged name still there, after some files are
// installed, and before, between and after the renames, it rewrites each
// staged path in place. None of it reaches the memory: the commit refuses
// while files are being linked, and lands exactly what was checked once
// they all are.
func TestCommitLateWriteDuringInstallNeverReachesMemory(t *testing.T) {
	for _, at := range []string{"commit:link:2", "commit:tmp:2", "commit:rename:1", "commit:rename:3", "commit:synced"} {
		t.Run(at, func(t *testing.T) {
			state, mem := setup(t)
			if !leasesWork(t, mem) {
				t.Skip("this file system grants no leases: commits copy")
			}
			settle()
			txn := beginSparse(t, state, mem, "d1", nil)
			edits := hostileEdits()
			writeTree(t, txn.Dir(), edits)
			txn.Freeze()
			before := readTree(t, mem)
			wrote := 0
			writeLate := func() {
				for p := range edits {
					f, err := os.OpenFile(filepath.Join(txn.Dir(), filepath.FromSlash(p)), os.O_WRONLY, 0)
					if err == nil {
						if _, err := f.WriteAt([]byte("LATE\n"), 0); err == nil {
							wrote++
						}
						f.Close()
					}
				}
			}
			reached := false
			var wg sync.WaitGroup
			crashHook = func(point string) {
				if point == at {
					reached = true
					// Another goroutine, as a left-behind one of the
					// runner's would be: an open of the file under lease
					// waits for the lease, which this one holds.
					wg.Add(1)
					go func() { defer wg.Done(); writeLate() }()
					time.Sleep(20 * time.Millisecond)
				}
			}
			_, err := txn.Commit()
			crashHook = nil
			wg.Wait()
			t.Logf("commit: %v", err)
			if !reached {
				t.Fatalf("point %s never reached", at)
			}
			got := readTree(t, mem)
			switch {
			case err == nil:
				if want := after(before, edits); !sameTree(got, want) {
					t.Fatalf("late writes (%d) reached the memory: %s", wrote, describe(got))
				}
			case errors.Is(err, ErrStagingChanged) && strings.HasPrefix(at, "commit:link:") || strings.HasPrefix(at, "commit:tmp:"):
				// While files are still being linked, the writer is seen
				// (the lease it broke, or a staged file not yet
				// installed written since the check) and nothing lands.
				if !sameTree(got, before) {
					t.Fatalf("a refused commit changed memory: %s (temps %v)", describe(got), tempFiles(got))
				}
			default:
				t.Fatalf("Commit = %v", err)
			}
		})
	}
}

// beginSettled begins a sparse dream over setup's memory, settled (its
// files older than the Begin clock), whose commit installs by link or, with
// link false, by copy.
func beginSettled(t *testing.T, link bool) (txn *Txn, mem string) {
	t.Helper()
	linkInstalls = link
	t.Cleanup(func() { linkInstalls = true })
	state, mem := setup(t)
	settle()
	return beginSparse(t, state, mem, "d1", nil), mem
}

// A file added in a new directory survives a power cut only if every new
// directory's entry is flushed too: the commit flushes the new directories'
// parents up to the memory dir, and syncStaged the runner's directories up
// to staging itself.
func TestCommitFlushesNewDirectoriesParents(t *testing.T) {
	for _, link := range []bool{true, false} {
		t.Run(fmt.Sprintf("link=%v", link), func(t *testing.T) {
			txn, _ := beginSettled(t, link)
			writeTree(t, txn.Dir(), map[string]string{"new/deep/er/n.md": "# N\n\n1. 第一步\n", "topics/x.md": "x one\nx 2\nx three\n"})
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
		})
	}
}

// A commit of many files flushes them, and every directory holding them,
// with one syncfs of the file system instead of one fsync each; where
// syncfs declines (an old kernel) it flushes file by file, and lands the
// same tree either way. The copy install (no links) flushes its temporary
// copies in the memory dir the same way.
func TestCommitManyFilesFlushesFileSystemOnce(t *testing.T) {
	for _, link := range []bool{true, false} {
		for _, declines := range []bool{false, true} {
			t.Run(fmt.Sprintf("link=%v/declines=%v", link, declines), func(t *testing.T) {
				txn, mem := beginSettled(t, link)
				files := map[string]string{}
				for i := range syncFSFrom + 10 {
					files[fmt.Sprintf("topics/t%03d/n%04d.md", i%7, i)] = fmt.Sprintf("# 第 %d 条\n\n1. Run `make test` first.\n2. Then ship.\n", i)
				}
				writeTree(t, txn.Dir(), files)
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
				if !link {
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
}

// The files a commit replaces are held open across their renames and
// closed once freed elsewhere (linker.rename): a commit leaves no
// descriptor behind, and lands every file.
func TestCommitClosesTheFilesItReplaced(t *testing.T) {
	openFDs := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd here")
		}
		return len(es)
	}
	state, mem := setup(t)
	old := map[string]string{}
	for i := range 300 {
		old[fmt.Sprintf("topic_%03d.md", i)] = fmt.Sprintf("# Topic %d\n\n- 旧的事实 %d\n", i, i)
	}
	writeTree(t, mem, old)
	settle()
	before := openFDs()
	txn, err := BeginWith(state, mem, "d1", Options{Sparse: true})
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]string{}
	for rel := range old {
		edits[rel] = strings.Replace(old[rel], "旧的事实", "新的事实 (2026-11-30)", 1)
	}
	writeTree(t, txn.Dir(), edits)
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if after := openFDs(); after != before {
		t.Errorf("%d descriptors open after the commit, %d before", after, before)
	}
	got := readTree(t, mem)
	for rel, body := range edits {
		if got[rel] != body {
			t.Fatalf("%s = %q, want %q", rel, got[rel], body)
		}
	}
}
