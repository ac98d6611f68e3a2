package offline

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// workers is how many files the engine reads, analyses or writes at once:
// Options.Workers, or one per processor the Go runtime may use.
func (s *state) workers() int {
	if s.opts.Workers > 0 {
		return s.opts.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// each runs fn on every file of fs, on up to s.workers() goroutines. Each
// file's work touches only that file (its records are gathered in file
// order afterwards), so the result is the serial one whatever the
// interleaving. The error returned is that of the first file in order
// that failed, as the serial loop would have stopped at it; the context is
// checked every few files.
func (s *state) each(ctx context.Context, fs []*file, fn func(*file) error) error {
	n := min(s.workers(), len(fs))
	if n <= 1 {
		for i, f := range fs {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := fn(f); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	errs := make([]error, len(fs))
	var failed atomic.Int64 // lowest failed index + 1; 0: none
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(fs) {
					return
				}
				if lo := failed.Load(); lo != 0 && int64(i) >= lo-1 {
					return // the serial loop would not have got here
				}
				var err error
				if i%256 == 0 {
					err = ctx.Err()
				}
				if err == nil {
					err = fn(fs[i])
				}
				if err != nil {
					errs[i] = err
					for {
						lo := failed.Load()
						if lo != 0 && lo-1 <= int64(i) || failed.CompareAndSwap(lo, int64(i)+1) {
							break
						}
					}
				}
			}
		})
	}
	wg.Wait()
	if lo := failed.Load(); lo != 0 {
		return errs[lo-1]
	}
	return nil
}

// lockedProvenance serialises a Provenance for the workers: a caller's
// provenance may load what it knows lazily, without locks of its own.
type lockedProvenance struct {
	mu sync.Mutex
	p  Provenance
}

func (l *lockedProvenance) WrittenOn(rel, line string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p.WrittenOn(rel, line)
}
