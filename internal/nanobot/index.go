package nanobot

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/dreamkit/dream/internal/fsutil"
)

// The offset index, history.jsonl.idx: a 64-byte header and then one
// 16-byte record (cursor, byte offset) for every stride-th valid entry of
// the log. With it, the entries after a cursor are found by a binary search
// of a few records and a scan of at most stride entries, instead of a scan
// of the whole log. It is a cache: the log is the truth, every use checks
// that the index still describes it (header checksum, the covered prefix
// ends at a line boundary, the first and last indexed lines still carry the
// recorded cursors), and a stale or missing index is rebuilt from the log.
const (
	indexMagic    = "DRHIDX01"
	headerSize    = 64
	recordSize    = 16
	DefaultStride = 64

	flagNonMonotonic = 1 // some cursor is not above the one before: search is unsafe
)

var errStale = errors.New("history index is stale")

type indexHeader struct {
	Stride     uint32
	Flags      uint32
	Covered    int64 // bytes of the log indexed; just after a newline
	Count      int64 // valid entries in the covered prefix
	LastCursor int64 // cursor of the last of them; -1 when none
}

func (h indexHeader) records() int64 {
	return (h.Count + int64(h.Stride) - 1) / int64(h.Stride)
}

func (h indexHeader) encode() []byte {
	b := make([]byte, headerSize)
	copy(b, indexMagic)
	binary.LittleEndian.PutUint32(b[8:], h.Stride)
	binary.LittleEndian.PutUint32(b[12:], h.Flags)
	binary.LittleEndian.PutUint64(b[16:], uint64(h.Covered))
	binary.LittleEndian.PutUint64(b[24:], uint64(h.Count))
	binary.LittleEndian.PutUint64(b[32:], uint64(h.LastCursor))
	binary.LittleEndian.PutUint32(b[40:], crc32.ChecksumIEEE(b[:40]))
	return b
}

func decodeHeader(b []byte) (indexHeader, bool) {
	if len(b) < headerSize || string(b[:8]) != indexMagic || binary.LittleEndian.Uint32(b[40:]) != crc32.ChecksumIEEE(b[:40]) {
		return indexHeader{}, false
	}
	h := indexHeader{
		Stride:     binary.LittleEndian.Uint32(b[8:]),
		Flags:      binary.LittleEndian.Uint32(b[12:]),
		Covered:    int64(binary.LittleEndian.Uint64(b[16:])),
		Count:      int64(binary.LittleEndian.Uint64(b[24:])),
		LastCursor: int64(binary.LittleEndian.Uint64(b[32:])),
	}
	if h.Stride == 0 || h.Covered < 0 || h.Count < 0 {
		return indexHeader{}, false
	}
	return h, true
}

// index is an opened, validated index.
type index struct {
	f *os.File
	h indexHeader
}

func (x *index) Close() error { return x.f.Close() }

func (x *index) record(i int64) (cursor, offset int64, err error) {
	var b [recordSize]byte
	if _, err := x.f.ReadAt(b[:], headerSize+i*recordSize); err != nil {
		return 0, 0, err
	}
	return int64(binary.LittleEndian.Uint64(b[:])), int64(binary.LittleEndian.Uint64(b[8:])), nil
}

// openIndex opens the index at path and checks it against the log (open
// as logF, logSize bytes long). It returns errStale for an index that does
// not describe the log.
func openIndex(path string, writable bool, logF *os.File, logSize int64) (*index, error) {
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errStale
		}
		return nil, err
	}
	x := &index{f: f}
	if err := x.validate(logF, logSize); err != nil {
		f.Close()
		return nil, err
	}
	return x, nil
}

func (x *index) validate(logF *os.File, logSize int64) error {
	hb := make([]byte, headerSize)
	if _, err := x.f.ReadAt(hb, 0); err != nil {
		return errStale
	}
	h, ok := decodeHeader(hb)
	if !ok || h.Covered > logSize {
		return errStale
	}
	fi, err := x.f.Stat()
	if err != nil {
		return err
	}
	if (fi.Size()-headerSize)/recordSize < h.records() {
		return errStale // a record write was lost
	}
	if h.Covered > 0 {
		var last [1]byte
		if _, err := logF.ReadAt(last[:], h.Covered-1); err != nil || last[0] != '\n' {
			return errStale
		}
	}
	x.h = h
	n := h.records()
	for _, i := range []int64{0, n - 1} {
		if i < 0 {
			continue
		}
		c, off, err := x.record(i)
		if err != nil || off < 0 || off >= h.Covered {
			return errStale
		}
		line, err := readLineAt(logF, off, h.Covered)
		if err != nil {
			return errStale
		}
		e, err := decodeLine(line)
		if err != nil || e.Cursor != c {
			return errStale
		}
	}
	return nil
}

// search returns the log offset to scan from for the entries after since:
// the offset of the last indexed entry whose cursor is at most since, or 0.
func (x *index) search(since int64) (int64, error) {
	lo, hi := int64(0), x.h.records()-1
	best := int64(0)
	for lo <= hi {
		mid := (lo + hi) / 2
		c, off, err := x.record(mid)
		if err != nil {
			return 0, err
		}
		if c <= since {
			best = off
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return best, nil
}

// maxLineBytes bounds the bytes read for one line when checking the index;
// an entry is capped at 64K characters, which JSON escaping can grow at most
// sixfold.
const maxLineBytes = 6*4*EntryHardCap + 4096

// readLineAt returns the line starting at off (without its newline),
// reading no further than limit.
func readLineAt(f *os.File, off, limit int64) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for off < limit && len(out) < maxLineBytes {
		n := int64(len(buf))
		if off+n > limit {
			n = limit - off
		}
		m, err := f.ReadAt(buf[:n], off)
		if i := bytes.IndexByte(buf[:m], '\n'); i >= 0 {
			return append(out, buf[:i]...), nil
		}
		out = append(out, buf[:m]...)
		off += int64(m)
		if err != nil {
			if err == io.EOF {
				break
			}
			return nil, err
		}
	}
	return nil, fmt.Errorf("no complete line at offset %d", off)
}

// indexBuilder extends a header over more of the log.
type indexBuilder struct {
	h       indexHeader
	records []byte // new records, encoded
}

// add accounts for one complete line at off, len bytes with its newline.
func (b *indexBuilder) add(line []byte, off int64) {
	b.h.Covered = off + int64(len(line))
	e, err := decodeLine(bytes.TrimRight(line, "\r\n"))
	if err != nil {
		return
	}
	if b.h.Count > 0 && e.Cursor <= b.h.LastCursor {
		b.h.Flags |= flagNonMonotonic
	}
	if b.h.Count%int64(b.h.Stride) == 0 {
		var r [recordSize]byte
		binary.LittleEndian.PutUint64(r[:], uint64(e.Cursor))
		binary.LittleEndian.PutUint64(r[8:], uint64(off))
		b.records = append(b.records, r[:]...)
	}
	b.h.Count++
	b.h.LastCursor = e.Cursor
}

// scanFrom feeds every complete line of the log in [from, size) to b.
func (b *indexBuilder) scanFrom(logF *os.File, from, size int64) error {
	r := bufio.NewReaderSize(io.NewSectionReader(logF, from, size-from), 64<<10)
	off := from
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			b.add(line, off)
			off += int64(len(line))
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// rebuildIndex writes a fresh index of the whole log to path, atomically.
func rebuildIndex(path string, logF *os.File, size int64, stride int) error {
	b := &indexBuilder{h: indexHeader{Stride: uint32(stride), LastCursor: -1}}
	if err := b.scanFrom(logF, 0, size); err != nil {
		return fmt.Errorf("history: indexing the log: %w", err)
	}
	return fsutil.WriteFileAtomic(path, append(b.h.encode(), b.records...), 0o600, false)
}

// extendIndex brings the index at path up to the log's size: the new lines
// are appended to an index that still describes the log, and a stale one is
// rebuilt.
func extendIndex(path string, logF *os.File, size int64, stride int) error {
	x, err := openIndex(path, true, logF, size)
	if errors.Is(err, errStale) {
		return rebuildIndex(path, logF, size, stride)
	}
	if err != nil {
		return err
	}
	defer x.Close()
	if x.h.Covered == size {
		return nil
	}
	b := &indexBuilder{h: x.h}
	if err := b.scanFrom(logF, x.h.Covered, size); err != nil {
		return err
	}
	if len(b.records) > 0 {
		if _, err := x.f.WriteAt(b.records, headerSize+x.h.records()*recordSize); err != nil {
			return err
		}
	}
	_, err = x.f.WriteAt(b.h.encode(), 0)
	return err
}
