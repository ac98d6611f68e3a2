package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/dreamkit/dream/internal/journal/linediff"
)

// Sparse staging: a dream costs what it changes.
//
// A sparse transaction's staging dir starts empty. The runner reads the
// memory dir itself (read-only) and writes into staging, whole, only the
// files it changes; it never deletes. Begin therefore neither copies, links
// nor stats a single memory file, and Changes, Freeze and Commit walk only
// staging: each staged file is compared with its original and is a new
// file, a change, or identical (dropped).
//
// What the dream started from is still checked, as for a full staging, but
// only for the files written, and without a snapshot of every file at
// Begin: the first time a staged file is looked at, its original's change
// time (ctime, which no user-space call can set back, and which Linux file
// systems set on a write, a chmod, a link and a rename alike) is compared
// with the memory file system's own clock read at Begin. A file whose ctime is older
// than that was not touched since the dream began, so its stat now is its
// stat then and becomes its base fingerprint, and from there the commit's
// conflict check, the merge of a file the user edited and the crash
// recovery work exactly as for a full staging. A file changed around or
// after Begin has its content compared with Options.Start (for dream, the
// audit history's HEAD, recorded just before the dream began); if that does
// not prove it unchanged, its base is unknown and the commit treats it as
// edited by someone else: merged on Start's version, or parked for review,
// never overwritten. The clock is read only in the process that began the
// transaction, and a wall clock set back since Begin widens the margin by as
// much, so an edit can never look older than the dream.

// sparseClock is the memory file system's clock at Begin; known only in
// the process that began the transaction.
type sparseClock struct {
	began   time.Time // time.Now at Begin, with its monotonic reading
	ctimeNs int64     // ctime of a file written at Begin on the memory's file system; 0 when unknown
	dev     uint64    // the memory dir's device: a file on another (a mount inside the memory) is compared by content
}

// clockSlack is how close to Begin a change time must be to be checked by
// content rather than trusted: file timestamps come from a coarse clock (a
// tick of a few milliseconds), so a change just after Begin can carry a time
// a tick earlier than the file written at Begin.
const clockSlack = 50 * time.Millisecond

// olderThanBegin reports whether a change time proves the file was last
// changed before the transaction began.
func (c sparseClock) olderThanBegin(ctimeNs int64) bool {
	if c.ctimeNs == 0 || c.began.IsZero() || ctimeNs == 0 {
		return false
	}
	slack := clockSlack
	// A wall clock set back since Begin (a step, not NTP's slewing) makes
	// later edits carry earlier times; widen the margin by the step.
	mono := time.Since(c.began)
	wall := time.Now().Round(0).Sub(c.began.Round(0))
	if back := mono - wall; back > 0 {
		slack += back
	}
	return ctimeNs < c.ctimeNs-int64(slack)
}

// readClock reads the memory file system's clock right after Begin wrote
// the record: the record's own ctime when the state dir shares the memory's
// file system, else the ctime of a probe file created (and removed) in the
// memory dir, so that a memory on a network file system is compared with
// its server's clock, not ours.
//
// It is no clock (every written file is then compared by content) unless
// the memory's file system keeps ctime as the local kernel's change time
// (kernelCtime): on a FUSE mount a sync client's edit can carry an old
// ctime, and a network file system's cached attributes can hide an edit.
func (t *Txn) readClock() sparseClock {
	c := sparseClock{began: time.Now()}
	mem, merr := os.Stat(t.memDir)
	if merr != nil || !kernelCtime(t.memDir) {
		return c
	}
	d2, ok2 := device(mem)
	if !ok2 {
		return c
	}
	c.dev = d2
	rec, err := os.Lstat(filepath.Join(t.txnDir, recordName))
	if err == nil {
		d1, ok1 := device(rec)
		if _, ct, ok := identity(rec); ok && ok1 && d1 == d2 {
			c.ctimeNs = ct
			return c
		}
	}
	f, err := os.CreateTemp(t.memDir, TempPrefix+"clock-")
	if err != nil {
		return c // no clock: every written file is compared by content
	}
	info, err := f.Stat()
	f.Close()
	os.Remove(f.Name())
	if err == nil {
		if _, ct, ok := identity(info); ok {
			c.ctimeNs = ct
		}
	}
	return c
}

// Sparse reports whether the transaction's staging holds only what the
// runner wrote (Options.Sparse): the memory's other files are read from
// the memory dir itself.
func (t *Txn) Sparse() bool { return t.rec.Sparse }

// unknownBase is the base of a file that existed when the dream began but
// whose version then cannot be proved: the commit treats it as edited.
func unknownBase(mode fs.FileMode) fingerprint { return fingerprint{Mode: mode.Perm()} }

// resolveBase finds what rel's original was when the dream began: its
// fingerprint and whether it existed (see the comment at the top).
func (t *Txn) resolveBase(rel string) (fingerprint, bool, error) {
	abs := filepath.Join(t.memDir, filepath.FromSlash(rel))
	info, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		// Absent now; absent at the start too, unless the history had it:
		// then someone removed it during the dream, and the dream's
		// version must not silently bring it back.
		if t.start != nil {
			if _, ok, err := t.start(rel); err != nil {
				return fingerprint{}, false, err
			} else if ok {
				return unknownBase(0o644), true, nil
			}
		}
		return fingerprint{}, false, nil
	case err != nil:
		return fingerprint{}, false, err
	case !info.Mode().IsRegular():
		return unknownBase(0o644), true, nil // a symlink or a dir: never written through
	}
	now := statPrint(info)
	if dev, ok := device(info); ok && dev == t.clock.dev && t.clock.olderThanBegin(now.CtimeNs) {
		return now, true, nil
	}
	if t.start == nil {
		return unknownBase(info.Mode()), true, nil
	}
	data, ok, err := t.start(rel)
	if err != nil {
		return fingerprint{}, false, err
	}
	if !ok {
		return unknownBase(info.Mode()), true, nil // created around the start: a conflict, not an addition
	}
	fp, err := fingerprintFile(abs)
	if err != nil {
		return fingerprint{}, false, err
	}
	sum := sha256.Sum256(data)
	startPrint := fingerprint{Mode: info.Mode().Perm(), Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	again, err := os.Lstat(abs)
	if err != nil || fp.Size != startPrint.Size || fp.SHA256 != startPrint.SHA256 || !statPrint(again).sameStat(now) {
		// Edited around the start: the base is Start's content, with no
		// stat, so the commit finds the file edited (and merges on
		// Start) unless it is Start again, and a parked dream can still
		// be applied once the file is back to what the dream began from.
		return startPrint, true, nil
	}
	now.SHA256 = fp.SHA256
	return now, true, nil
}

// scanSparse finds a sparse transaction's changes: each staged file is new
// (no original when the dream began), changed, or identical to its
// original and dropped. Nothing outside staging is walked, and nothing is
// ever deleted: a sparse runner writes what it changes and no more.
//
// The walk and each file's base (which may ask the history, t.start) are
// settled one file after the other; reading, hashing and counting the two
// sides of each file, most of the cost, run on every core (scanWorkers),
// each worker holding one file's two sides at a time. The changes come out
// in walk order and the first error by walk order wins, as in a serial
// scan (a file that cannot be read wins over a later one whose base could
// not be settled; the bases settled between them are kept, as they are
// right); visit is called one file at a time, in no particular order.
func (t *Txn) scanSparse() ([]recChange, error) {
	if t.rec.Base == nil {
		t.rec.Base = map[string]fingerprint{}
	}
	if t.absent == nil {
		t.absent = map[string]bool{}
	}
	t.hashedAt = map[string]fingerprint{}
	type staged struct {
		rel, abs string
		base     fingerprint
		existed  bool
	}
	var files []staged
	err := walkFiles(t.Dir(), func(rel, abs string, info fs.FileInfo) error {
		if validRel(rel) != nil {
			return nil // not a memory path (walkFiles already skips dream's own names)
		}
		base, existed := t.rec.Base[rel]
		if !existed && !t.absent[rel] {
			var err error
			if base, existed, err = t.resolveBase(rel); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			if existed {
				t.rec.Base[rel] = base
			} else {
				t.absent[rel] = true
			}
		}
		files = append(files, staged{rel: rel, abs: abs, base: base, existed: existed})
		return nil
	})
	walkErr := err // after the files walked before it are read
	type result struct {
		change  recChange
		changed bool
		st      fingerprint
		base    fingerprint // the original's base, hashed by this scan (when rebased)
		rebased bool
		err     error
	}
	results := make([]result, len(files))
	var visitMu sync.Mutex
	scanOne := func(i int) {
		f, r := files[i], &results[i]
		base := f.base
		// Each side is read once: for its hash, its line counts and (the
		// original) for whoever asked to see it (ChangesWithOriginals).
		now, st, data, opaque, err := readHashed(f.abs)
		if err != nil {
			r.err = err
			return
		}
		r.st = st
		if !f.existed {
			r.change, r.changed = recChange{Change: Change{Path: f.rel, Kind: Added}, NewSHA256: now.SHA256, Mode: now.Mode, counted: true}, true
			if !opaque {
				r.change.Added, r.change.Removed = linediff.Counts(nil, data)
			}
			return
		}
		var old original
		read := false
		if base.SHA256 == "" && base.Ino != 0 {
			if old, err = t.readOriginal(f.rel, base); err != nil {
				r.err = err
				return
			}
			base, read = old.base, true
			r.base, r.rebased = old.base, old.hashed
		}
		if base.SHA256 != "" && now.Size == base.Size && now.SHA256 == base.SHA256 {
			return
		}
		if !read {
			if old, err = t.readOriginal(f.rel, base); err != nil {
				r.err = err
				return
			}
			r.base, r.rebased = old.base, old.hashed
		}
		if old.intact && t.visit != nil {
			visitMu.Lock()
			t.visit(f.rel, old.data)
			visitMu.Unlock()
		}
		r.change, r.changed = recChange{Change: Change{Path: f.rel, Kind: Modified}, NewSHA256: now.SHA256, Mode: base.Mode, counted: true}, true
		if !opaque && !old.opaque {
			r.change.Added, r.change.Removed = linediff.Counts(old.data, data)
		}
	}
	onWorkers(len(files), scanWorkers(len(files)), func(i int) error { scanOne(i); return nil })
	var out []recChange
	for i, r := range results {
		if r.err != nil {
			return nil, fmt.Errorf("journal: changes: %w", r.err)
		}
		t.hashedAt[files[i].rel] = r.st
		if r.rebased {
			t.rec.Base[files[i].rel] = r.base
		}
		if r.changed {
			out = append(out, r.change)
		}
	}
	if walkErr != nil {
		return nil, fmt.Errorf("journal: changes: %w", walkErr)
	}
	return t.finishScan(out)
}

// scanWorkers is how many goroutines scan n staged files: one per core,
// and one for a few files, where starting them costs more than it saves.
func scanWorkers(n int) int {
	if n < 64 {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// original is a written file's original as the sparse scan read it.
type original struct {
	base   fingerprint // its base, with the content hash filled in when it was read intact
	data   []byte      // nil when absent or opaque
	opaque bool        // not a regular file, or over OpaqueSize: not read
	intact bool        // provably the version the dream began from (its stat is the base's, before and after the read)
	hashed bool        // base's content hash was filled in by this read: the record's base is to take it
}

// readOriginal reads rel's original in the memory dir once, for the hash of
// its base (as baseHash does) and its line counts (as sides does): one
// open that follows no symlink, the stat taken from the open file before
// and after the read. It changes nothing in t (scans run it on several
// files at once): a base it hashed comes back with hashed set.
func (t *Txn) readOriginal(rel string, base fingerprint) (original, error) {
	o := original{base: base}
	abs := filepath.Join(t.memDir, filepath.FromSlash(rel))
	f, err := openNoFollow(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return o, nil
	case errors.Is(err, errNotRegular):
		o.opaque = true // a symlink or a dir: never followed
		return o, nil
	case err != nil:
		return o, err
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return o, err
	case !info.Mode().IsRegular():
		o.opaque = true
		return o, nil
	case info.Size() > OpaqueSize:
		o.opaque = true
		if base.SHA256 == "" {
			o.base, o.hashed = t.hashOfBase(rel, base)
		}
		return o, nil
	}
	first := statPrint(info)
	data, err := readSized(f, info.Size())
	if err != nil {
		return o, err
	}
	o.data = data
	again, err := f.Stat()
	o.intact = err == nil && t.sameOriginal(first, base) && statPrint(again).sameStat(first) && int64(len(data)) == base.Size
	if o.intact && base.SHA256 == "" {
		sum := sha256.Sum256(data)
		o.base.SHA256 = hex.EncodeToString(sum[:])
		o.hashed = true
	}
	return o, nil
}

// readSized reads an open file to its end, expecting size bytes (it may
// have grown or shrunk since the stat).
func readSized(f *os.File, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew while being read
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readHashed hashes a staged file and, when it is at most OpaqueSize,
// returns its content too (opaque otherwise, hashed as a stream); stat is
// its stat when opened (see hashFile).
func readHashed(path string) (fp, stat fingerprint, data []byte, opaque bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return fp, stat, nil, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fp, stat, nil, false, err
	}
	stat = statPrint(info)
	if !info.Mode().IsRegular() || info.Size() > OpaqueSize {
		h := sha256.New()
		n, err := copyStream(h, f)
		if err != nil {
			return fp, stat, nil, false, fmt.Errorf("hash %s: %w", path, err)
		}
		return fingerprint{Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), Mode: info.Mode().Perm()}, stat, nil, true, nil
	}
	if data, err = readSized(f, info.Size()); err != nil {
		return fp, stat, nil, false, fmt.Errorf("hash %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	fp = fingerprint{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Mode: info.Mode().Perm()}
	if len(data) > OpaqueSize {
		return fp, stat, nil, true, nil
	}
	return fp, stat, data, false, nil
}
