package gate

import (
	"context"
	"sync"
)

// walk scans the directories in pending and everything below them with up
// to workers goroutines, returning the number of matching transcripts. It
// stops taking new directories once ctx is done and then returns ctx's error.
// With one worker it runs on the caller's goroutine.
func walk(ctx context.Context, pending []string, s scanner, workers int) (int, error) {
	if workers <= 1 || len(pending) == 0 {
		return walkSerial(ctx, pending, s)
	}
	q := queue{stack: pending}
	q.cond = sync.NewCond(&q.mu)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.work(ctx, s)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return q.count, nil
}

// walkSerial is walk with one worker: a depth-first loop, no goroutines.
func walkSerial(ctx context.Context, pending []string, s scanner) (int, error) {
	total := 0
	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		path := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		subdirs, n := s.scanPath(path)
		total += n
		pending = append(pending, subdirs...)
	}
	return total, nil
}

// queue is the shared stack of directories still to scan. The walk is over
// when the stack is empty and no worker is busy, since only a busy worker
// can push more.
type queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	stack []string
	busy  int
	count int
}

// work takes directories until the walk is over.
func (q *queue) work(ctx context.Context, s scanner) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.stack) == 0 && q.busy > 0 {
			q.cond.Wait()
		}
		if len(q.stack) == 0 || ctx.Err() != nil {
			// Done, or cancelled: drop what is left and wake the others so
			// they see it too.
			q.stack = nil
			q.cond.Broadcast()
			return
		}
		path := q.stack[len(q.stack)-1]
		q.stack = q.stack[:len(q.stack)-1]
		q.busy++
		q.mu.Unlock()
		subdirs, n := s.scanPath(path)
		q.mu.Lock()
		q.busy--
		q.count += n
		q.stack = append(q.stack, subdirs...)
		q.cond.Broadcast()
	}
}
