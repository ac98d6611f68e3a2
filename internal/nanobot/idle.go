package nanobot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// nanobot's idle defaults (config/schema.py: session_ttl_minutes,
// idle_compact_check_interval_seconds).
const (
	DefaultIdleAfter = 15 * time.Minute
	DefaultScanEvery = 60 * time.Second
)

// ErrSessionActive: the session was used within the idle threshold.
var ErrSessionActive = errors.New("compact: the session is active")

// CompactFileOptions tune CompactFile.
type CompactFileOptions struct {
	// IdleAfter is how long since the session's updated_at before it may be
	// compacted; DefaultIdleAfter when zero.
	IdleAfter time.Duration
	// Force compacts an active session too (never a locked one).
	Force bool
}

// CompactFile archives an idle session file (CompactIdle) without holding
// the session files' lock across the model call: the file is read under
// the lock (refused with ErrSessionsLocked if nanobot or another process
// holds it) and, after the archive is durable, re-read and updated under
// the lock again, so that messages a turn appended meanwhile are kept and
// stay unarchived. A session updated within IdleAfter is refused with
// ErrSessionActive.
func CompactFile(ctx context.Context, c *Consolidator, path string, o CompactFileOptions) (SessionReport, error) {
	if o.IdleAfter <= 0 {
		o.IdleAfter = DefaultIdleAfter
	}
	dir := filepath.Dir(path)
	release, err := lockSessions(dir)
	if err != nil {
		return SessionReport{}, err
	}
	s, err := LoadSession(path)
	release()
	if err != nil {
		return SessionReport{}, err
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	if IsInternalSession(s.Key) {
		return SessionReport{}, fmt.Errorf("compact: %q is one of nanobot's internal sessions", s.Key)
	}
	if idle := now.Sub(s.UpdatedAt); !o.Force && !s.UpdatedAt.IsZero() && idle < o.IdleAfter {
		return SessionReport{}, fmt.Errorf("%w: last updated %s ago, under the idle threshold of %s", ErrSessionActive, idle.Round(time.Second), o.IdleAfter)
	}
	return c.CompactIdle(ctx, s, func(done *Session) error { return saveMerged(ctx, path, done) })
}

// saveMerged writes the archive progress of done into the session file as
// it is now, under the sessions lock (waiting for it, within ctx).
func saveMerged(ctx context.Context, path string, done *Session) error {
	dir := filepath.Dir(path)
	var release func()
	for {
		r, err := lockSessions(dir)
		if err == nil {
			release = r
			break
		}
		if !errors.Is(err, ErrSessionsLocked) {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(20 * time.Millisecond):
		}
	}
	defer release()
	fresh, err := LoadSession(path)
	if err != nil {
		return err
	}
	if done.LastConsolidated > fresh.LastConsolidated && done.LastConsolidated <= len(fresh.Messages) {
		fresh.LastConsolidated = done.LastConsolidated
	}
	if sum, ok := done.LastSummary(); ok {
		fresh.metadata.set("_last_summary", object{{"text", rawJSON(sum.Text)}, {"last_active", rawJSON(sum.LastActive)}}.marshal())
	}
	fresh.providerState = nil
	return fresh.Save(path)
}

// IdleCompactor is nanobot's AutoCompact for a sessions directory: Check,
// called as often as the host likes, scans at most every ScanEvery and
// archives, in the background, each session idle past IdleAfter that has
// unarchived messages, skipping active, internal and already-archiving
// sessions.
type IdleCompactor struct {
	Dir          string
	Consolidator *Consolidator
	IdleAfter    time.Duration // DefaultIdleAfter when zero
	ScanEvery    time.Duration // DefaultScanEvery when zero
	// Active returns the keys of sessions with a turn in flight; may be nil.
	Active func() []string
	// OnDone receives each background result; may be nil.
	OnDone func(key string, r SessionReport, err error)
	Now    func() time.Time

	mu        sync.Mutex
	lastScan  time.Time
	archiving map[string]bool
	wg        sync.WaitGroup
}

// Check runs one throttled scan; it returns the keys it started archiving.
func (ic *IdleCompactor) Check(ctx context.Context) []string {
	now := time.Now()
	if ic.Now != nil {
		now = ic.Now()
	}
	idleAfter, every := ic.IdleAfter, ic.ScanEvery
	if idleAfter <= 0 {
		idleAfter = DefaultIdleAfter
	}
	if every <= 0 {
		every = DefaultScanEvery
	}
	ic.mu.Lock()
	if !ic.lastScan.IsZero() && now.Sub(ic.lastScan) < every && !ic.lastScan.After(now) {
		ic.mu.Unlock()
		return nil
	}
	ic.lastScan = now
	if ic.archiving == nil {
		ic.archiving = map[string]bool{}
	}
	ic.mu.Unlock()
	active := map[string]bool{}
	if ic.Active != nil {
		for _, k := range ic.Active() {
			active[k] = true
		}
	}
	files, _ := filepath.Glob(filepath.Join(ic.Dir, "*.jsonl"))
	var started []string
	for _, f := range files {
		info, ok := peekSession(f)
		if !ok || info.key == "" || IsInternalSession(info.key) || active[info.key] {
			continue
		}
		if info.updatedAt.IsZero() || now.Sub(info.updatedAt) < idleAfter || info.lastConsolidated >= info.messages {
			continue
		}
		ic.mu.Lock()
		busy := ic.archiving[info.key]
		if !busy {
			ic.archiving[info.key] = true
		}
		ic.mu.Unlock()
		if busy {
			continue
		}
		started = append(started, info.key)
		ic.wg.Add(1)
		go func(key, path string) {
			defer ic.wg.Done()
			defer func() {
				ic.mu.Lock()
				delete(ic.archiving, key)
				ic.mu.Unlock()
			}()
			r, err := CompactFile(ctx, ic.Consolidator, path, CompactFileOptions{IdleAfter: idleAfter})
			if ic.OnDone != nil {
				ic.OnDone(key, r, err)
			}
		}(info.key, f)
	}
	return started
}

// Wait waits for the background archives.
func (ic *IdleCompactor) Wait() { ic.wg.Wait() }

type sessionInfo struct {
	key              string
	updatedAt        time.Time
	lastConsolidated int
	messages         int
}

// peekSession reads a session's metadata line and counts its messages,
// without decoding them.
func peekSession(path string) (sessionInfo, bool) {
	f, err := os.Open(path)
	if err != nil {
		return sessionInfo{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var info sessionInfo
	first := true
	for sc.Scan() {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if first {
			first = false
			if s, err := LoadSessionHeader(line); err == nil {
				info.key, info.updatedAt, info.lastConsolidated = s.Key, s.UpdatedAt, s.LastConsolidated
				continue
			}
		}
		if !strings.HasPrefix(string(line), `{"_type": "provider_state"`) {
			info.messages++
		}
	}
	if info.key == "" {
		info.key, _ = KeyFromName(path)
	}
	return info, sc.Err() == nil
}

// LoadSessionHeader decodes a metadata line.
func LoadSessionHeader(line []byte) (*Session, error) {
	o, err := parseObject(line)
	if err != nil {
		return nil, err
	}
	if v, ok := o.get("_type"); !ok || string(v) != `"metadata"` {
		return nil, errors.New("compact: not a metadata line")
	}
	s := &Session{header: o}
	s.decodeHeader()
	return s, nil
}
