package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/dreamkit/dream/internal/journal"
)

// A big record (the first record of a memory, a dream that rewrote most of
// it) is bound by compressing its blobs, and one git process compresses on
// one core: 30,000 files of a 120 MB memory were three seconds of a single
// core while the others idled. So a record of more than bulkBatch paths
// has every core work on it. The record's own update-index stages the
// batches from the front of the list, in order, into the index copy, as a
// single core does (see updateIndex); meanwhile one git process per other
// core takes batches from the back and only compresses their files into
// the object store, each streaming them into packs of its own
// (bulk-checkin, see bulkCheckin) behind a throwaway index. Where the two
// meet, the batches the helpers compressed are staged by one more
// update-index, in their order. That process finds each blob already
// stored and only hashes the file (no compression, nothing written). So
// every path is staged by update-index, in the list's order, from the file
// as it is when it is staged: the index, its stat data, the trees and the
// commit are the ones a single core makes, and a file edited after a
// helper compressed it is recorded as it is when staged (its new blob is
// written then).

// hashWorkers is how many git processes work on a big record at once.
func (h *History) hashWorkers() int {
	if h.workers > 0 {
		return h.workers
	}
	return runtime.GOMAXPROCS(0)
}

// stageParallel stages the NUL-separated path list into the index env
// names (GIT_INDEX_FILE), batch paths per process, with workers-1
// helpers compressing batches from the back of the list (see above).
func (h *History) stageParallel(ctx context.Context, env []string, list []byte, batch, workers int) error {
	var batches [][]byte
	for len(list) > 0 {
		end, n := 0, 0
		for end < len(list) && n < batch {
			end += bytes.IndexByte(list[end:], 0) + 1
			n++
		}
		batches = append(batches, list[:end])
		list = list[end:]
	}
	// The front (next batch the record stages) and the back (one past the
	// last batch no helper took) meet once every batch is taken.
	var mu sync.Mutex
	front, back := 0, len(batches)
	take := func(fromFront bool) ([]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		if front >= back {
			return nil, false
		}
		if fromFront {
			front++
			return batches[front-1], true
		}
		back--
		return batches[back], true
	}
	helpers, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		index := filepath.Join(h.gitDir, fmt.Sprintf("index.dream-prehash-%d", w))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer os.Remove(index)
			for {
				batch, ok := take(false)
				if !ok {
					return
				}
				h.prehashBatch(helpers, index, batch)
			}
		}()
	}
	var err error
	for {
		batch, ok := take(true)
		if !ok {
			break
		}
		if err = h.stageBatch(ctx, env, batch); err != nil {
			stop()
			break
		}
	}
	wg.Wait()
	if err != nil {
		return err
	}
	// Every batch from front on went to a helper (front == back here).
	rest := bytes.Join(batches[front:], nil)
	if len(rest) == 0 {
		return nil
	}
	_, err = h.gitEnv(ctx, env, rest, "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
	return err
}

// prehashBatch compresses a batch's files into the object store and
// stages nothing. A batch that fails only means its blobs are compressed
// later by the update-index that stages them, which reports the failure if
// it is real (a file that cannot be read), so its failure is no error.
//
// It compresses the batch's regular files of at most
// journal.OpaqueSize bytes behind the throwaway index at index (emptied
// first, so the process neither reads nor writes the record's index).
// Anything else is left to the staging pass: a directory or a path that is
// gone would make update-index stop halfway on an empty index where the
// record's own index knows the entry to remove, symlinks and empty files
// are never packed, and a file past the threshold is streamed into a pack
// by the staging pass anyway, which would compress it a second time.
func (h *History) prehashBatch(ctx context.Context, index string, batch []byte) {
	// Small files stored whole, bigger ones compressed (see rawObjectMax),
	// each kind by a process of its own: order does not matter here. A
	// batch the staging would compress whole (more than maxRuns runs, see
	// stageRuns) is compressed whole here too, so that what is stored does
	// not depend on who took the batch.
	var small, big bytes.Buffer
	runs, last := 0, false
	dirs := map[string]bool{"": true, ".": true}
	for rest := batch; len(rest) > 0; {
		p, after, _ := bytes.Cut(rest, []byte{0})
		rest = after
		rel := filepath.FromSlash(string(p))
		info, err := os.Lstat(filepath.Join(h.memDir, rel))
		whole := storedWhole(info, err)
		if runs == 0 || whole != last {
			runs, last = runs+1, whole
		}
		if !h.realDir(dirs, filepath.Dir(rel)) {
			continue // update-index refuses a path beyond a symlink
		}
		if err != nil || !info.Mode().IsRegular() || info.Size() < 2 || info.Size() > journal.OpaqueSize {
			continue
		}
		to := &big
		if whole {
			to = &small
		}
		to.Write(p)
		to.WriteByte(0)
	}
	if runs > maxRuns {
		big.Write(small.Bytes())
		small.Reset()
	}
	env := append(bulkEnv(), "GIT_INDEX_FILE="+index)
	for _, kind := range []struct {
		list *bytes.Buffer
		raw  bool
	}{{&small, true}, {&big, false}} {
		if kind.list.Len() == 0 || ctx.Err() != nil {
			continue
		}
		_ = os.Remove(index)
		_, _ = h.gitEnv(ctx, env, kind.list.Bytes(), bulkUpdateIndex(kind.raw, "--add")...)
	}
}

// realDir reports whether dir (relative to the memory dir) and each of its
// parents is a directory, not a symlink to one, remembering the answers in
// known.
func (h *History) realDir(known map[string]bool, dir string) bool {
	if ok, seen := known[dir]; seen {
		return ok
	}
	ok := h.realDir(known, filepath.Dir(dir))
	if ok {
		info, err := os.Lstat(filepath.Join(h.memDir, dir))
		ok = err == nil && info.IsDir()
	}
	known[dir] = ok
	return ok
}
