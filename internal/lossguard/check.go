package lossguard

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dreamkit/dream/internal/memory"
)

// Sides reads the two versions of a changed file (slash path): Before as
// the dream found it, After as the dream left it. ok is false when there
// is no such file on that side. Both are called from several goroutines at
// once, each path at most once per side per phase.
type Sides struct {
	Before, After func(rel string) (src []byte, ok bool, err error)
}

// TreeSides reads the sides from two trees held in memory.
func TreeSides(before, after Tree) Sides {
	get := func(t Tree) func(string) ([]byte, bool, error) {
		return func(rel string) ([]byte, bool, error) { b, ok := t[rel]; return b, ok, nil }
	}
	return Sides{Before: get(before), After: get(after)}
}

// CheckFiles is CheckChanged reading each changed file only when a worker
// gets to it: changed names the files a dream changed (in any order), sides
// reads them, and unchanged streams the others. The changed files are
// compared over GOMAXPROCS workers, each holding one file's two versions at
// a time, and their results merged in path order, so that the verdict and
// every message are the ones a single pass would give, and memory does not
// grow with the size of the change.
func CheckFiles(ctx context.Context, changed []string, sides Sides, unchanged Files, o Options) (Verdict, error) {
	return check(ctx, changed, sides, unchanged, o, runtime.GOMAXPROCS(0))
}

// fileResult is what comparing one changed file found.
type fileResult struct {
	changed      bool
	units, bytes int
	shrunk       bool
	gone         []goneUnit
	// before counts the file's unit texts as the dream found it (outside
	// strict mode), so that the ledger can tell a new unit from an old one.
	before map[string]int
}

// goneUnit is a unit of a file before the dream that is not in that file
// afterwards, nor named by a record.
type goneUnit struct {
	Unit
	bytes int
	norm  string // only outside strict mode
	// Outside strict mode, for the ledger: the headings above the unit,
	// whether it states a fact, and its index in the ledger.
	path []string
	fact bool
	id   int
}

func check(ctx context.Context, changed []string, sides Sides, unchanged Files, o Options, workers int) (Verdict, error) {
	if o.MaxLoss <= 0 {
		o.MaxLoss = DefaultMaxLoss
	}
	names := slices.Clone(changed)
	slices.Sort(names)
	names = slices.Compact(names)
	results, err := compareAll(ctx, names, sides, o, workers)
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	var gone []goneUnit
	for i, r := range results {
		v.Changed = v.Changed || r.changed
		v.Units += r.units
		v.Bytes += r.bytes
		if r.shrunk {
			v.Shrunk = append(v.Shrunk, names[i])
		}
		gone = append(gone, r.gone...)
	}
	if o.Strict {
		for _, g := range gone {
			v.Unaccounted = append(v.Unaccounted, g.Unit)
		}
		return v, nil
	}
	var led *ledger
	if len(gone) > 0 {
		// Moved or merged into another changed file, or edited in place.
		for i := range gone {
			gone[i].id = i
		}
		led = newLedger(gone)
		if gone, err = searchNamed(ctx, names, results, sides, gone, led, workers); err != nil {
			return Verdict{}, err
		}
	}
	if len(gone) > 0 || len(v.Shrunk) > 0 && v.Units == 0 {
		// A unit may have moved into a file the dream did not touch, and
		// the share lost is of the whole memory: only now are the others
		// read.
		if led == nil {
			led = newLedger(nil)
		}
		if gone, err = searchUnchanged(ctx, unchanged, gone, led, workers, &v); err != nil {
			return Verdict{}, err
		}
	}
	for _, g := range gone {
		v.Lost = append(v.Lost, g.Unit)
		v.LostBytes += g.bytes
	}
	if led != nil {
		v.Ledger = led.entries()
		for _, g := range gone {
			v.Ledger[g.id].Lost = true
		}
	}
	v.Hold = v.Units > 0 && (float64(len(v.Lost)) > o.MaxLoss*float64(v.Units) ||
		float64(v.LostBytes) > o.MaxLoss*float64(v.Bytes) || len(v.Shrunk) > 0)
	return v, nil
}

// compareAll compares each named file before and after the dream, side by
// side, with the records that name it.
func compareAll(ctx context.Context, names []string, sides Sides, o Options, workers int) ([]fileResult, error) {
	records := map[string][]Record{}
	for _, r := range o.Records {
		records[r.File] = append(records[r.File], r)
	}
	results := make([]fileResult, len(names))
	err := parallel(ctx, len(names), workers, func(i int) error {
		f := names[i]
		before, inBefore, err := sides.Before(f)
		if err != nil {
			return err
		}
		after, inAfter, err := sides.After(f)
		if err != nil {
			return err
		}
		results[i] = compareFile(f, before, inBefore, after, inAfter, records[f], !o.Strict)
		return nil
	})
	return results, err
}

// searchNamed looks for the gone units in the named files after the dream
// and returns those still unfound. Every changed file is searched, also
// once each unit is found, so that the ledger names the same place
// whatever the search order; then a file named changed that is not (Check
// gives every file) is searched as the unchanged files are: for the units
// no changed file keeps.
func searchNamed(ctx context.Context, names []string, results []fileResult, sides Sides, gone []goneUnit, led *ledger, workers int) ([]goneUnit, error) {
	found := make([]atomic.Bool, len(gone))
	byFile := map[string][]int{}
	for i, g := range gone {
		byFile[g.File] = append(byFile[g.File], i)
	}
	err := parallel(ctx, len(names), workers, func(i int) error {
		if !results[i].changed {
			return nil // searched below, as the unchanged files are
		}
		src, ok, err := sides.After(names[i])
		if err != nil || !ok {
			return err
		}
		_, ls := leaves(src)
		survivors(ls, gone, byFile[names[i]], found)
		led.scan(names[i], ls, results[i].before, nil, true)
		return nil
	})
	if err != nil {
		return nil, err
	}
	gone = pick(gone, found)
	if len(gone) == 0 {
		return gone, nil
	}
	found = make([]atomic.Bool, len(gone))
	ids := idsOf(gone)
	err = parallel(ctx, len(names), workers, func(i int) error {
		if results[i].changed {
			return nil
		}
		src, ok, err := sides.After(names[i])
		if err != nil || !ok {
			return err
		}
		_, ls := leaves(src)
		survivors(ls, gone, nil, found)
		led.scan(names[i], ls, nil, ids, false)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pick(gone, found), nil
}

// searchUnchanged reads the files the dream did not change, counting their
// units and bytes into v and looking for the gone units among them, and
// returns those still unfound.
func searchUnchanged(ctx context.Context, unchanged Files, gone []goneUnit, led *ledger, workers int, v *Verdict) ([]goneUnit, error) {
	if unchanged == nil {
		unchanged = func(func(string, []byte) error) error { return nil }
	}
	found := make([]atomic.Bool, len(gone))
	ids := idsOf(gone) // the units still unfound, by their ledger index
	var mu sync.Mutex
	err := stream(ctx, unchanged, workers, func(rel string, src []byte) {
		_, ls := leaves(src)
		bytes := 0
		for _, l := range ls {
			bytes += l.end - l.start
		}
		survivors(ls, gone, nil, found)
		led.scan(rel, ls, nil, ids, false)
		mu.Lock()
		v.Units += len(ls)
		v.Bytes += bytes
		mu.Unlock()
	})
	if err != nil {
		return nil, fmt.Errorf("loss guard: reading the unchanged files: %w", err)
	}
	return pick(gone, found), nil
}

// idsOf are the ledger indices of us.
func idsOf(us []goneUnit) []int {
	ids := make([]int, len(us))
	for k, g := range us {
		ids[k] = g.id
	}
	return ids
}

// pending reports whether some unit that can survive is not found yet.
func pending(gone []goneUnit, found []atomic.Bool) bool {
	for i := range gone {
		if gone[i].norm != "" && !found[i].Load() {
			return true
		}
	}
	return false
}

// pick keeps the units not found, in order.
func pick(us []goneUnit, found []atomic.Bool) []goneUnit {
	out := us[:0:0]
	for i, u := range us {
		if !found[i].Load() {
			out = append(out, u)
		}
	}
	return out
}

// compareFile compares one file's two versions: the units before, and those
// of them neither still in the file (as many times as they were) nor named
// by a record. withNorm computes what survival compares for those.
func compareFile(rel string, before []byte, inBefore bool, after []byte, inAfter bool, rs []Record, withNorm bool) fileResult {
	var r fileResult
	same := inBefore && inAfter && string(before) == string(after)
	r.changed = inBefore != inAfter || inBefore && !same
	if !inBefore {
		if withNorm {
			r.before = map[string]int{} // every unit of a new file is new
		}
		return r
	}
	r.shrunk = len(before) > minShrinkBytes && (!inAfter || len(after)*2 < len(before))
	// Units are compared by their bytes, so the block structure is all
	// this needs (ParseBlocks, a quarter cheaper than a whole parse); the
	// words survival compares come from a whole parse, of the few files
	// that lost a unit.
	d := memory.ParseBlocks(before)
	s := string(before)
	ls := docLeaves(d, s)
	for _, l := range ls {
		r.units++
		r.bytes += l.end - l.start
	}
	if same {
		return r
	}
	if withNorm {
		r.before = make(map[string]int, len(ls))
		for _, l := range ls {
			r.before[l.text]++
		}
	}
	var have map[string]int
	if inAfter {
		texts := afterTexts(d, s, ls, after)
		have = make(map[string]int, len(texts))
		for _, t := range texts {
			have[t]++
		}
	}
	var goneAt []int // each gone unit's index in ls
	for i, l := range ls {
		// A unit a record names is accounted for; the others must each
		// still be there, as many times as they were.
		if accounted(rs, l.start, l.end) {
			continue
		}
		if have[l.text] > 0 {
			have[l.text]--
			continue
		}
		r.gone = append(r.gone, goneUnit{Unit: Unit{File: rel, Line: l.line, Text: strings.Clone(l.text)}, bytes: l.end - l.start})
		goneAt = append(goneAt, i)
	}
	if withNorm && len(r.gone) > 0 {
		// ParseBlocks and ParseDoc find the same units, at the same bytes
		// (memory.FuzzParseBlocksMatchesParseDoc).
		full := map[int]leaf{}
		for _, l := range docLeaves(memory.ParseDoc(before), s) {
			full[l.start] = l
		}
		for k, i := range goneAt {
			g := &r.gone[k]
			if l, ok := full[ls[i].start]; ok {
				g.norm, g.path = l.norm(), l.path
			} else {
				g.norm = normalize(ls[i].text) // not reached (the parses agree); its raw lines
			}
			g.fact = isFact(ls[i].kind, ls[i].text)
		}
	}
	return r
}

// parallel runs fn(0..n-1) over workers goroutines and returns the first
// error (by index, so that it does not depend on scheduling).
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	if n == 0 {
		return nil
	}
	workers = max(1, min(workers, n))
	errs := make([]error, n)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					return
				}
				errs[i] = fn(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stream feeds the files of files to fn over workers goroutines. The
// stream blocks while the queue (one file per worker) is full, so that at
// most about twice workers files are held at once, however many there are.
func stream(ctx context.Context, files Files, workers int, fn func(rel string, src []byte)) error {
	type file struct {
		rel string
		src []byte
	}
	ch := make(chan file, workers)
	var wg sync.WaitGroup
	for w := 0; w < max(1, workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range ch {
				fn(f.rel, f.src)
			}
		}()
	}
	err := files(func(rel string, src []byte) error {
		select {
		case ch <- file{rel, src}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(ch)
	wg.Wait()
	return err
}
