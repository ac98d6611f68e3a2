package journal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 9, class 8, on a real file system: the memory dir lives on a small
// tmpfs that also holds a ballast file outside the memory dir, and a dream
// writes three memories that together do not fit. The commit must fail on
// the kernel's own ENOSPC, naming the full disk, with the memory dir byte
// for byte as it was (none of the three landed, no temporary file left);
// once the ballast is removed, committing the same dream lands all three.
// TestCommitDiskFullChangesNothing is the same story through a seam; this
// one needs root to mount, and skips without it.
func TestCommitRealDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; the seam-based TestCommitDiskFullChangesNothing covers the logic")
	}
	disk := t.TempDir()
	// 512 KiB = 128 pages: after the 256 KiB ballast and the memories
	// about 59 pages are free, two 96 KiB files fit, the third does not.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k,mode=0755", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (no CAP_SYS_ADMIN in this container?): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", disk).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", disk, err, out)
		}
	})
	mem := filepath.Join(disk, "memory")
	writeTree(t, mem, preTree())
	ballast := filepath.Join(disk, "ballast.bin")
	if err := os.WriteFile(ballast, make([]byte, 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir() // the state dir is on another file system, as in real use

	txn, err := Begin(state, mem, "d1")
	if err != nil {
		t.Fatal(err)
	}
	dream := map[string]string{
		"project_a.md":        bigMemory("project_a", "Release is 2025-03-13.", 96<<10),
		"topics/build.md":     bigMemory("build", "构建步骤：先运行 make generate，再运行 make test。", 96<<10),
		"feedback_reviews.md": bigMemory("feedback_reviews", "> prefer small diffs, one concern per PR", 96<<10),
	}
	edit(t, txn.Dir(), dream)
	before := snapshot(t, mem)

	_, err = txn.Commit()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Commit on a full disk = %v, want ENOSPC", err)
	}
	if !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("the error does not say the disk is full and nothing changed: %v", err)
	}
	got := snapshot(t, mem)
	if !sameTree(got, before) {
		t.Fatalf("a commit that ran out of space changed memory: %s (temps %v)", describe(got), tempFiles(got))
	}
	if st := txn.Info().State; st != StateStaging {
		t.Fatalf("after a commit that changed nothing the transaction is %s, want %s (a roll-forward would retry the full disk)", st, StateStaging)
	}

	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	applied, err := txn.Commit()
	if err != nil {
		t.Fatalf("Commit after freeing space: %v", err)
	}
	if len(applied) != len(dream) {
		t.Errorf("applied %v, want the three files", applied)
	}
	if got, want := snapshot(t, mem), after(before, dream); !sameTree(got, want) {
		t.Fatalf("after freeing space the memory is %s, want %s", describe(got), describe(want))
	}
	if HasPending(state, mem) {
		t.Fatal("the landed commit left a transaction behind")
	}
}

// bigMemory is a memory file of about size bytes that reads like a real
// one: front matter, nested headings, a numbered procedure, code, a quote
// and Chinese, repeated as a long-lived project log would be.
func bigMemory(name, fact string, size int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "---\nname: %s\ndescription: %s\n---\n# %s\n\n%s\n", name, fact, name, fact)
	for i := 1; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "\n## Session %d\n### Steps\n1. `git pull --rebase`\n2. run `go test -race ./...`\n3. 记录结果到 MEMORY.md（第 %d 次）\n\n```sh\nmake bench COUNT=%d\n```\n> The user said: keep the log short.\n", i, i, i)
	}
	return sb.String()
}
