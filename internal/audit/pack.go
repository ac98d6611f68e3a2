package audit

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
)

// The packing policy. Records leave few loose objects (their blobs go into
// packs as they are hashed, see bulkCheckin; a commit and its trees stay
// loose), but each record that hashed anything adds a pack (one per
// bulkBatch paths), and a history of a thousand dreams must not be a
// thousand packs: every object lookup searches them one by one. So the
// packs a big record wrote are rolled up into one at once, and otherwise
// once there are more than packLimit packs or about packEvery loose
// objects, the small packs and the loose objects are rolled up into one
// with `git repack --geometric=2 -d`: packs that already form a
// progression of sizes, each at least twice the one before, are left
// alone, so the 30,000-blob pack of a memory's first record is rewritten
// only when the packs after it add up to about its size, and a roll-up
// costs what it rolls up, not the history.
//
// A roll-up of small packs searches for deltas among the objects it rolls
// up (git's default window), which is what keeps a history of many small
// edits small. A roll-up of copyPackAt objects or more only copies them
// (--window=0: existing deltas are kept, no new ones are searched for):
// delta search over the 50,000 blobs of a memory's first two records is
// about ten seconds of a core, which `git gc --auto`, which this replaces,
// spent in the background after such a dream, every time it ran (it
// rewrites every pack into one when there are too many and walks the whole
// history to prune). Copying them is a fraction of a second, inside the
// record, and nothing is left running. The price is disk: a dream that
// rewrote most of a memory keeps its blobs whole, without deltas. The
// first two records of a generated 30,000-topic memory (24.7 MB of files,
// 22,386 of them rewritten by its first dream) take 37.8 MB of pack, 26.6
// MB if the small files were compressed too (see rawObjectMax).
//
// Unreachable objects are not pruned: the history only makes them when a
// record fails between hashing and committing, and they cost disk space,
// not time.
const (
	// packLimit is how many packs the history holds before a roll-up: a
	// roll-up is a git process of a tenth of a second or so, a pack more to
	// search is microseconds per object looked up.
	packLimit = 32
	// packEvery is about how many loose objects the history holds before a
	// roll-up, estimated as git itself does from one of the 256 object
	// directories.
	packEvery = 256
	// copyPackAt is how many objects a roll-up writes from which it copies
	// them rather than searching for deltas.
	copyPackAt = 4096
)

// repackArgs is the roll-up. No bitmaps and no info/ files for dumb
// transports: they serve fetches from this repository, and gitsync only
// fetches from and pushes to its remote.
var repackArgs = []string{"-c", "repack.writeBitmaps=false", "-c", "repack.updateServerInfo=false", "repack", "--geometric=2", "-d", "-q"}

// rollupArgs is the roll-up due now, nil for none: when there are too
// many packs or loose objects, or always when force (a record that wrote
// several packs).
func (h *History) rollupArgs(force bool) []string {
	objects := filepath.Join(h.gitDir, "objects")
	des, _ := os.ReadDir(filepath.Join(objects, "17"))
	loose := len(des) * 256
	packs := packSizes(filepath.Join(objects, "pack"))
	if !force && loose < packEvery && len(packs) <= packLimit {
		return nil
	}
	if loose+geometricRollup(packs, 2) >= copyPackAt {
		return append(slices.Clone(repackArgs), "--window=0")
	}
	return repackArgs
}

// startRollup runs the roll-up args beside the caller and returns the
// wait for it to end. Failure only costs disk space, so it is not an
// error.
func (h *History) startRollup(ctx context.Context, args []string) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.git(ctx, nil, args...)
	}()
	return func() { <-done }
}

// packSizes lists the object count of every pack, from the count in its
// index's fan-out table (the last of 256 big-endian words after the 8-byte
// version 2 header), without opening the pack. A pack whose index cannot be
// read counts as one object: it is still a pack to search.
func packSizes(dir string) []int {
	idxs, _ := fsutil.Glob(dir, "pack-*.idx")
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
