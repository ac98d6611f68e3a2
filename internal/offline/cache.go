package offline

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// The cache keeps each memory file's analysis (fileSum) between runs, so
// that a dream after a one-line edit parses one file, not thirty thousand.
// It is keyed by path and validated by the file's stat (fileStat: device,
// inode, size, mtime and ctime) recorded with the SHA-256 of its bytes: a
// file whose stat is the recorded one is not read at all; any other is
// read, and its entry is used only if the bytes hash the same. A stat is
// recorded only when the file's last change was old enough to be told
// apart from a later one (racyWindow), so a stale entry can cost a read,
// never a result. The whole cache
// carries a checksum and the layout it was made under; a cache that does
// not verify is ignored, never trusted, and rewritten at the end of the run.
//
// What a cached analysis can decide is limited on purpose: a file with any
// work in it (a repeated unit, a relative date), the overflow file and a
// file that needs a pointer are always parsed, and the index is parsed
// before any step changes it, so every fix is made from the file itself;
// the cache only supplies the leads' hashes, shingles, mentions and pins
// (of those files too), the index's summary (indexSum) and the last
// pairs (pairsMemo), and spares the reading and parsing of files with
// nothing to fix.

// cacheVersion changes whenever the analysis does (what a unit key, a
// shingle or a mention is); an older cache is then ignored.
const cacheVersion = 9

var cacheMagic = []byte("dream offline cache\n")

// CachePath is where the cache of the memory at memoryDir lives under the
// state dir: one file per memory, named by a hash of its path.
func CachePath(stateDir, memoryDir string) string {
	if abs, err := filepath.Abs(memoryDir); err == nil {
		memoryDir = abs
	}
	h := sha256.Sum256([]byte(memoryDir))
	return filepath.Join(stateDir, "offline-cache", hex.EncodeToString(h[:12])+".bin")
}

type cacheEntry struct {
	hash [32]byte
	st   fileStat
	sum  *fileSum
	// idx is the index's own summary, for the index's entry.
	idx *indexSum
	// raw is the entry as the cache file holds it, written back as it is
	// for a file the run did not read.
	raw []byte
}

type cacheData struct {
	entries map[string]cacheEntry
	// pairs are the last run's pairs, nil if it kept none.
	pairs *pairsMemo
}

// lookup returns the analysis of rel if the cache has one for these bytes.
func (c *cacheData) lookup(rel string, hash [32]byte) *fileSum {
	if c == nil {
		return nil
	}
	if e, ok := c.entries[rel]; ok && e.hash == hash {
		return e.sum
	}
	return nil
}

// entry returns the entry of rel, if the cache has one.
func (c *cacheData) entry(rel string) (cacheEntry, bool) {
	if c == nil {
		return cacheEntry{}, false
	}
	e, ok := c.entries[rel]
	return e, ok
}

// byStat returns the entry of rel if the file's stat now is the one
// recorded with it (so its bytes are those hashed), without reading it.
func (c *cacheData) byStat(rel string, st fileStat) (cacheEntry, bool) {
	if c == nil || !st.valid() {
		return cacheEntry{}, false
	}
	e, ok := c.entries[rel]
	return e, ok && e.st == st
}

// loadCache reads the cache at path; any problem (none yet, another
// layout, a torn or altered file) yields no cache. needMentions drops
// analyses made without the drift mentions a run with a repository needs.
func loadCache(path, layout string, needMentions bool) *cacheData {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) < len(cacheMagic)+sha256.Size {
		return nil
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if h := sha256.Sum256(body); !bytes.Equal(h[:], sum) || !bytes.HasPrefix(body, cacheMagic) {
		return nil
	}
	c, err := decodeCache(&reader{b: body[len(cacheMagic):]}, layout, needMentions)
	if err != nil {
		return nil
	}
	return c
}

func decodeCache(r *reader, layout string, needMentions bool) (*cacheData, error) {
	if r.uint() != cacheVersion || r.str() != layout {
		return nil, errCache
	}
	n := r.uint()
	c := &cacheData{entries: make(map[string]cacheEntry, min(n, uint64(len(r.b))/34))} // an entry takes at least a name, a hash and a few counts
	// Every file's shingles live in one array, sized by what the rest of
	// the cache could hold at most, so that decoding never grows a slice.
	arena := make([]uint64, 0, len(r.b)/8)
	for i := uint64(0); i < n && r.err == nil; i++ {
		at := r.b
		rel := r.str()
		var e cacheEntry
		copy(e.hash[:], r.bytes(32))
		flags := r.uint()
		sum := &fileSum{Dirty: flags&1 != 0, HasMentions: flags&2 != 0}
		if flags&4 != 0 {
			e.st = fileStat{Dev: r.uint(), Ino: r.uint(), Size: int64(r.uint()), Mtime: int64(r.uint()), Ctime: int64(r.uint())}
		}
		nu := r.uint()
		if nu > uint64(len(r.b)) {
			return nil, errCache
		}
		sum.Units = make([]unitSum, nu)
		start := len(arena)
		for k := range sum.Units {
			u := &sum.Units[k]
			u.Unit, u.Line = int32(r.uint()), int32(r.uint())
			u.Key = r.u64()
			u.Cross = r.uint() == 1
			ns := r.uint()
			if r.err != nil || ns > uint64(len(r.b))/8 {
				return nil, errCache
			}
			u.Off, u.N = int32(len(arena)-start), int32(ns)
			for j := range int(ns) {
				arena = append(arena, binary.LittleEndian.Uint64(r.b[8*j:]))
			}
			r.b = r.b[8*ns:]
		}
		sum.Shingles = arena[start:len(arena):len(arena)]
		if flags&8 != 0 {
			e.idx = decodeIndexSum(r)
		}
		nm := r.uint()
		if nm > uint64(len(r.b)) {
			return nil, errCache
		}
		for k := uint64(0); k < nm; k++ {
			sum.Mentions = append(sum.Mentions, mentionSum{Line: int32(r.uint()), Mention: r.str(), Kind: r.str()})
		}
		if needMentions && !sum.HasMentions {
			continue
		}
		e.sum = sum
		e.raw = at[:len(at)-len(r.b)]
		c.entries[rel] = e
	}
	if r.uint() == 1 {
		c.pairs = r.memo()
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errCache
	}
	return c, nil
}

var errCache = errors.New("offline cache: malformed")

// saveCache writes the analyses of this run's files (as they are now, after
// the run's writes) for the next run. A cache that cannot be written costs
// the next run time, never a result, so errors are dropped.
func (s *state) saveCache() {
	if s.opts.CacheFile == "" || s.cacheUnchanged() {
		return
	}
	if err := os.MkdirAll(filepath.Dir(s.opts.CacheFile), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.opts.CacheFile), ".offline-cache-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	// Streamed entry by entry through the checksum: the cache is never
	// held whole in memory.
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(tmp, h), 64<<10)
	var w []byte
	w = append(w, cacheMagic...)
	w = binary.AppendUvarint(w, cacheVersion)
	w = appendStr(w, s.opts.Layout.fingerprint())
	n := 0
	for _, f := range s.files {
		if f.sum != nil && f.exists {
			n++
		}
	}
	w = binary.AppendUvarint(w, uint64(n))
	bw.Write(w)
	for _, f := range s.files {
		if f.sum == nil || !f.exists {
			continue
		}
		if e, ok := s.cache.byStat(f.rel, f.st); ok && f.unread && !f.index && e.sum == f.sum && e.hash == f.hash {
			bw.Write(e.raw) // unread, so unchanged: no need to encode it again
			continue
		}
		var idx *indexSum
		if f.index {
			idx = f.idx
		}
		w = appendEntry(w[:0], f.rel, f.hash, f.st, f.sum, idx)
		bw.Write(w)
	}
	m := s.pairs
	if m == nil && s.cache != nil && !s.dropPairs {
		// A run without the leads keeps the last pairs: they carry the
		// hashes they were found for, so they are never taken for others.
		m = s.cache.pairs
	}
	if m != nil {
		w = binary.AppendUvarint(w[:0], 1)
		w = appendMemo(w, m)
	} else {
		w = binary.AppendUvarint(w[:0], 0)
	}
	bw.Write(w)
	err = bw.Flush()
	if err == nil {
		_, err = tmp.Write(h.Sum(nil))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_ = os.Rename(tmp.Name(), s.opts.CacheFile)
	}
}

// cacheUnchanged reports a run that would write the cache it read, byte
// for byte: every file was taken unread from its entry (none added, none
// gone, none written), the pairs are the remembered ones and the index's
// summary gained nothing. Then the cache is not written again.
func (s *state) cacheUnchanged() bool {
	if s.cache == nil || s.pairs != nil && s.pairs != s.cache.pairs || s.indexSumChanged {
		return false
	}
	n := 0
	for _, f := range s.files {
		if f.sum == nil || !f.exists {
			continue
		}
		if !f.unread {
			return false
		}
		n++
	}
	return n == len(s.cache.entries)
}

// appendEntry encodes one file's analysis.
func appendEntry(w []byte, rel string, hash [32]byte, st fileStat, sum *fileSum, idx *indexSum) []byte {
	w = appendStr(w, rel)
	w = append(w, hash[:]...)
	flags := uint64(0)
	if sum.Dirty {
		flags |= 1
	}
	if sum.HasMentions {
		flags |= 2
	}
	if st.valid() {
		flags |= 4
	}
	if idx != nil {
		flags |= 8
	}
	w = binary.AppendUvarint(w, flags)
	if st.valid() {
		for _, v := range []uint64{st.Dev, st.Ino, uint64(st.Size), uint64(st.Mtime), uint64(st.Ctime)} {
			w = binary.AppendUvarint(w, v)
		}
	}
	w = binary.AppendUvarint(w, uint64(len(sum.Units)))
	for _, u := range sum.Units {
		w = binary.AppendUvarint(w, uint64(u.Unit))
		w = binary.AppendUvarint(w, uint64(u.Line))
		w = binary.LittleEndian.AppendUint64(w, u.Key)
		cross := uint64(0)
		if u.Cross {
			cross = 1
		}
		w = binary.AppendUvarint(w, cross)
		w = binary.AppendUvarint(w, uint64(u.N))
		for _, sh := range sum.shingles(&u) {
			w = binary.LittleEndian.AppendUint64(w, sh)
		}
	}
	if idx != nil {
		w = appendIndexSum(w, idx)
	}
	w = binary.AppendUvarint(w, uint64(len(sum.Mentions)))
	for _, m := range sum.Mentions {
		w = binary.AppendUvarint(w, uint64(m.Line))
		w = appendStr(w, m.Mention)
		w = appendStr(w, m.Kind)
	}
	return w
}

func appendIndexSum(w []byte, x *indexSum) []byte {
	w = binary.AppendUvarint(w, uint64(len(x.Named)))
	for _, n := range x.Named {
		w = appendStr(w, n.Rel)
		w = binary.AppendUvarint(w, uint64(n.Kind))
	}
	w = appendStrs(w, x.Comments)
	w = binary.AppendUvarint(w, uint64(len(x.Links)))
	for _, l := range x.Links {
		w = appendStr(w, l.Dest)
		w = binary.AppendUvarint(w, uint64(l.Line))
	}
	flags := uint64(0)
	if x.BudgetKnown {
		flags |= 1
	}
	if x.BudgetMoves {
		flags |= 2
	}
	w = binary.AppendUvarint(w, flags)
	return appendStrs(w, x.BudgetNotes)
}

func decodeIndexSum(r *reader) *indexSum {
	x := &indexSum{}
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.err = errCache
		return x
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		x.Named = append(x.Named, named{Rel: r.str(), Kind: uint8(r.uint())})
	}
	x.Comments = r.strs()
	n = r.uint()
	if n > uint64(len(r.b)) {
		r.err = errCache
		return x
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		x.Links = append(x.Links, linkSum{Dest: r.str(), Line: int32(r.uint())})
	}
	flags := r.uint()
	x.BudgetKnown, x.BudgetMoves = flags&1 != 0, flags&2 != 0
	x.BudgetNotes = r.strs()
	return x
}

func appendStrs(w []byte, ss []string) []byte {
	w = binary.AppendUvarint(w, uint64(len(ss)))
	for _, s := range ss {
		w = appendStr(w, s)
	}
	return w
}

func (r *reader) strs() []string {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.err = errCache
		return nil
	}
	var out []string
	for i := uint64(0); i < n && r.err == nil; i++ {
		out = append(out, r.str())
	}
	return out
}

func appendStr(w []byte, s string) []byte {
	w = binary.AppendUvarint(w, uint64(len(s)))
	return append(w, s...)
}

// reader decodes the cache; the first error sticks and yields zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errCache
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errCache
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.bytes(8)) }

func (r *reader) str() string {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.err = errCache
		return ""
	}
	return string(r.bytes(int(n)))
}
