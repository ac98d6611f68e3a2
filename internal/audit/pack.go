package audit

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/proc"
)

// The packing policy. Records leave few loose objects (their blobs go into
// a pack as they are hashed, see bulkCheckin; a commit and its trees stay
// loose), but each record that hashed anything adds a pack, and a history
// of a thousand dreams must not be a thousand packs: every object lookup
// searches them one by one. So once there are more than packLimit packs,
// or about packEvery loose objects, the small packs and the loose objects
// are rolled up into one with `git repack --geometric=2 -d`: packs that
// already form a progression of sizes each at least twice the one before
// are left alone, so the 30,000-blob pack of a memory's first record is
// rewritten only when the packs after it add up to about its size, and a
// roll-up costs what is rolled up, not the history. Deltas are made then,
// among the objects rolled up. `git gc --auto`, which this replaces,
// rewrites every pack into one whenever there are too many (repack -A) and
// walks the whole history to prune: after a dream that rewrote 22,000
// files that burnt a core for seconds in the background, every time.
//
// Unreachable objects are not pruned: the history only makes them when a
// record fails between hashing and committing, and they cost disk space,
// not time.
const (
	// packLimit is how many packs the history holds before a roll-up.
	packLimit = 16
	// packEvery is about how many loose objects the history holds before a
	// roll-up, estimated as git itself does from one of the 256 object
	// directories.
	packEvery = 256
	// detachPackAt is how many objects a roll-up writes from which it runs
	// in the background rather than inside the record: delta search over a
	// roll-up of that size takes more than a moment.
	detachPackAt = 4096
)

// repackArgs is the roll-up. No bitmaps: they serve serving fetches, and
// the history is fetched by gitsync rarely, from one clone.
var repackArgs = []string{"-c", "repack.writeBitmaps=false", "repack", "--geometric=2", "-d", "-q"}

// packPIDFile holds the pid of a roll-up running in the background, so that
// the next record does not start a second one over the same packs.
const packPIDFile = "dream-repack.pid"

// maybePack rolls packs and loose objects up when there are too many (see
// the policy above). Failure only costs disk space, so it is not an error.
func (h *History) maybePack(ctx context.Context) {
	objects := filepath.Join(h.gitDir, "objects")
	des, _ := os.ReadDir(filepath.Join(objects, "17"))
	loose := len(des) * 256
	packs := packSizes(filepath.Join(objects, "pack"))
	if loose < packEvery && len(packs) <= packLimit {
		return
	}
	if h.packRunning() {
		return
	}
	if loose+geometricRollup(packs, 2) < detachPackAt {
		_, _ = h.git(ctx, nil, repackArgs...)
		return
	}
	h.packInBackground()
}

// packSizes lists the object count of every pack, from the count in its
// index's fan-out table (the last of 256 big-endian words after the 8-byte
// version 2 header), without opening the pack. A pack whose index cannot be
// read counts as one object: it is still a pack to search.
func packSizes(dir string) []int {
	idxs, _ := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	sizes := make([]int, 0, len(idxs))
	for _, idx := range idxs {
		if _, err := os.Stat(strings.TrimSuffix(idx, ".idx") + ".keep"); err == nil {
			continue // git leaves kept packs out of every repack
		}
		n := 1
		if f, err := os.Open(idx); err == nil {
			var word [4]byte
			if _, err := f.ReadAt(word[:], 8+255*4); err == nil {
				n = max(int(binary.BigEndian.Uint32(word[:])), 1)
			}
			f.Close()
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// geometricRollup is how many objects `git repack --geometric=factor`
// would roll up from packs of these object counts: git's own split (git
// 2.39 builtin/repack.c, split_pack_geometry). Packs are sorted by size;
// the largest ones that form a progression, each at least factor times the
// one below, stay; every pack below the first break is rolled up; and the
// packs above it join in while the rolled-up total times factor exceeds
// them, so that the new pack keeps the progression.
func geometricRollup(packs []int, factor int) int {
	p := slices.Clone(packs)
	slices.Sort(p)
	if len(p) == 0 {
		return 0
	}
	i := len(p) - 1
	for ; i > 0; i-- {
		if p[i] < factor*p[i-1] {
			break
		}
	}
	split := i
	if split > 0 {
		split++
	}
	total := 0
	for _, n := range p[:split] {
		total += n
	}
	for ; split < len(p) && p[split] < factor*total; split++ {
		total += p[split]
	}
	return total
}

// packRunning reports whether a roll-up this history started in the
// background still runs: its pid is alive and was written less than an
// hour ago (a pid is reused, in time).
func (h *History) packRunning() bool {
	p := filepath.Join(h.gitDir, packPIDFile)
	info, err := os.Stat(p)
	if err != nil || time.Since(info.ModTime()) > time.Hour {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && proc.Alive(pid)
}

// packInBackground starts the roll-up in a session of its own and does not
// wait for it: it outlives the dream's process, and neither the dream's
// context nor a signal to its terminal stops it. git writes the new pack
// under a temporary name and renames it into place before deleting what it
// replaced, so a roll-up stopped anywhere loses nothing.
func (h *History) packInBackground() {
	cmd := exec.Command(h.gitBin, append(append([]string{}, isolation...), repackArgs...)...)
	cmd.Dir = h.memDir
	cmd.Env = h.env()
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return
	}
	p := filepath.Join(h.gitDir, packPIDFile)
	_ = os.WriteFile(p, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600)
	// Reaped if this process lives on (the daemon, a test); the pid file
	// goes with it. A process that exits first leaves the file to the
	// liveness check.
	go func() {
		_ = cmd.Wait()
		_ = os.Remove(p)
	}()
}
