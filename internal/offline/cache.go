package offline

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dreamkit/dream/internal/memory"
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
// shingle or a mention is) or the file's layout; an older cache is then
// ignored.
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
	rel  string
	hash [32]byte
	st   fileStat
	sum  *fileSum
	// idx is the index's own summary, for the index's entry.
	idx *indexSum
	// inMemo is set when the pairs memo was found in these bytes.
	inMemo bool
	// fromBase is set for an entry as the base file holds it, inBase for
	// one whose file the base holds (perhaps with another entry, from the
	// delta).
	fromBase, inBase bool
}

type cacheData struct {
	// entries are in the order the scan lists files (the index first,
	// then by path), so that the scan finds each file's entry at its own
	// place, or by a binary search from sorted on when files came or went.
	entries []cacheEntry
	sorted  int
	// pairs are the last run's pairs, nil if it kept none.
	pairs *pairsMemo
	// id names the base file, which a delta names to apply to it;
	// baseGone are the base's files the delta removed.
	id       uint64
	baseGone []string
	// kind and removed are a decoded file's own: base or delta, and the
	// base's files a delta removes.
	kind    uint64
	removed []string
}

// entry returns the entry of rel, if the cache has one; hint is where it
// would be if no file came or went (-1: unknown).
func (c *cacheData) entry(rel string, hint int) (*cacheEntry, bool) {
	if c == nil {
		return nil, false
	}
	if hint >= 0 && hint < len(c.entries) && c.entries[hint].rel == rel {
		return &c.entries[hint], true
	}
	if c.sorted == 1 && c.entries[0].rel == rel {
		return &c.entries[0], true
	}
	es := c.entries[c.sorted:]
	i := sort.Search(len(es), func(i int) bool { return es[i].rel >= rel })
	if i < len(es) && es[i].rel == rel {
		return &es[i], true
	}
	return nil, false
}

// lookup returns the analysis of rel if the cache has one for these bytes.
func (c *cacheData) lookup(rel string, hint int, hash [32]byte) *fileSum {
	if e, ok := c.entry(rel, hint); ok && e.hash == hash {
		return e.sum
	}
	return nil
}

// byStat returns the entry of rel if the file's stat now is the one
// recorded with it (so its bytes are those hashed), without reading it.
func (c *cacheData) byStat(rel string, hint int, st fileStat) (*cacheEntry, bool) {
	if !st.valid() {
		return nil, false
	}
	e, ok := c.entry(rel, hint)
	return e, ok && e.st == st
}

// The cache file, in order (varints unless said otherwise):
//
//	magic, version, layout fingerprint (length and bytes), file count
//	per file: rel, SHA-256 (32 bytes), flags, stat if flagged (device,
//	  inode, size, mtime, ctime), unit count, mention count, the index's
//	  summary if flagged
//	per unit of every file in turn: unit, line, key (8 bytes),
//	  shingle count << 1 | cross
//	every shingle of every unit in turn (8 bytes each)
//	per mention of every file in turn: line, mention, kind
//	the pairs memo, if flagged
//	the string table, its length (8 bytes), and a CRC-32C of all before
//
// Strings are (offset, length) in the string table, so that decoding makes
// one string for all of them, and every table is one array: a cache of
// thirty thousand files decodes in a few allocations, not a few hundred
// thousand. The checksum is there to catch a torn or damaged file, not a
// forged one, so CRC-32C (in hardware, a fraction of SHA-256's cost over
// twenty megabytes) is enough: whoever can write the state dir can write
// the memory itself, and an entry still supplies an analysis only for
// bytes with its SHA-256, or a stat taken past the racy window.
const (
	flagDirty    = 1
	flagMentions = 2
	flagStat     = 4
	flagIndex    = 8
)

// A cache is a base file, rewritten whole now and then, and a delta file
// beside it (CacheFile + ".delta") holding the entries that changed since
// and the last pairs: a dream after a few edits writes a few entries, not
// all of them. A delta applies only to the base whose id it names; either
// that does not verify is ignored, and what is left is still sound (every
// entry is checked against its file's stat or hash, the pairs against the
// files' hashes).
const (
	kindBase  = 0
	kindDelta = 1
)

// deltaLimit is how many changed entries a delta may hold before the base
// is written again: a small share of the memory, at least a few dozen.
func deltaLimit(files int) int { return max(64, files/32) }

// crcTable is built on first use: the tables cost a fifth of a millisecond
// at the start of every process, the hook path's included, that never
// reads a cache.
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// loadCache reads the cache at path; any problem (none yet, another
// layout, a torn or altered file) yields no cache. needMentions drops
// analyses made without the drift mentions a run with a repository needs.
func loadCache(path, layout string, needMentions bool) *cacheData {
	if path == "" {
		return nil
	}
	c := readCacheFile(path, layout, needMentions)
	if c == nil || c.kind != kindBase {
		return nil
	}
	if d := readCacheFile(path+".delta", layout, needMentions); d != nil && d.kind == kindDelta && d.id == c.id {
		c.apply(d)
	}
	return c
}

func readCacheFile(path, layout string, needMentions bool) *cacheData {
	data, err := os.ReadFile(path)
	if err != nil || len(data) < len(cacheMagic)+8+4 {
		return nil
	}
	body, sum := data[:len(data)-4], data[len(data)-4:]
	if crc32.Checksum(body, crcTable()) != binary.LittleEndian.Uint32(sum) || !bytes.HasPrefix(body, cacheMagic) {
		return nil
	}
	c, err := decodeCache(body[len(cacheMagic):], layout, needMentions)
	if err != nil {
		return nil
	}
	return c
}

// apply lays the delta d over the base c: its entries replace or join
// the base's, the files it removed go, and its pairs are the pairs.
func (c *cacheData) apply(d *cacheData) {
	drop := make(map[string]bool, len(d.removed)+len(d.entries))
	for _, rel := range d.removed {
		drop[rel] = true
	}
	for i := range d.entries {
		drop[d.entries[i].rel] = true
	}
	inBase := make(map[string]bool, len(drop))
	merged := make([]cacheEntry, 0, len(c.entries)+len(d.entries))
	for _, e := range c.entries {
		if drop[e.rel] {
			inBase[e.rel] = true
			continue
		}
		merged = append(merged, e)
	}
	for _, rel := range d.removed {
		if inBase[rel] {
			c.baseGone = append(c.baseGone, rel)
		}
	}
	for _, e := range d.entries {
		e.fromBase, e.inBase = false, inBase[e.rel]
		merged = append(merged, e)
	}
	slices.SortFunc(merged, func(a, b cacheEntry) int { return scanOrder(a.rel, b.rel) })
	c.entries = merged
	c.sorted = 0
	if len(merged) > 1 && merged[0].rel > merged[1].rel {
		c.sorted = 1
	}
	for i := range c.entries {
		c.entries[i].inMemo = false // the base's pairs are not the delta's
	}
	c.pairs = d.pairs
	if c.pairs != nil {
		c.pairs.cache = c
		c.pairs.mark()
	}
}

// scanOrder orders paths as the scan lists them: the index first, then by
// path.
func scanOrder(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == memory.IndexFile:
		return -1
	case b == memory.IndexFile:
		return 1
	}
	return strings.Compare(a, b)
}

// decodeCache decodes a cache body (after the magic, before the checksum).
func decodeCache(body []byte, layout string, needMentions bool) (*cacheData, error) {
	if len(body) < 8 {
		return nil, errCache
	}
	tabLen := binary.LittleEndian.Uint64(body[len(body)-8:])
	if tabLen > uint64(len(body)-8) {
		return nil, errCache
	}
	end := uint64(len(body)-8) - tabLen
	r := &reader{b: body[:end], tab: string(body[end : len(body)-8])}
	if r.uint() != cacheVersion {
		return nil, errCache
	}
	if ln := r.uint(); ln > uint64(len(r.b)) || string(r.bytes(int(ln))) != layout {
		return nil, errCache
	}
	kind, id := r.uint(), r.u64()
	var removed []string
	if kind == kindDelta {
		removed = r.strs()
	} else if kind != kindBase {
		return nil, errCache
	}
	n := r.uint()
	if n > uint64(len(r.b))/36 { // a file takes at least a name, a hash, flags and two counts
		return nil, errCache
	}
	type head struct {
		rel          string
		e            cacheEntry
		units, ments uint64
		flags        uint64
	}
	heads := make([]head, n)
	sums := make([]fileSum, n)
	var totalUnits, totalMents uint64
	for i := range heads {
		h := &heads[i]
		h.rel = r.str()
		copy(h.e.hash[:], r.bytes(32))
		h.flags = r.uint()
		if h.flags&flagStat != 0 {
			h.e.st = fileStat{Dev: r.uint(), Ino: r.uint(), Size: int64(r.uint()), Mtime: int64(r.uint()), Ctime: int64(r.uint())}
		}
		h.units, h.ments = r.uint(), r.uint()
		if h.flags&flagIndex != 0 {
			h.e.idx = decodeIndexSum(r)
		}
		if r.err != nil || h.units > uint64(len(r.b)) || h.ments > uint64(len(r.b)) {
			return nil, errCache
		}
		totalUnits += h.units
		totalMents += h.ments
	}
	if totalUnits > uint64(len(r.b))/11 || totalMents > uint64(len(r.b))/3 { // a unit takes at least 11 bytes, a mention 3
		return nil, errCache
	}
	units := make([]unitSum, totalUnits)
	var totalShingles uint64
	for k := range units {
		u := &units[k]
		u.Unit, u.Line = int32(r.uint()), int32(r.uint())
		u.Key = r.u64()
		v := r.uint()
		u.Cross = v&1 != 0
		if v>>1 > uint64(len(r.b))/8 {
			return nil, errCache
		}
		u.N = int32(v >> 1)
		totalShingles += v >> 1
	}
	if r.err != nil || totalShingles > uint64(len(r.b))/8 {
		return nil, errCache
	}
	shingles := make([]uint64, totalShingles)
	raw := r.bytes(8 * len(shingles))
	for k := range shingles {
		shingles[k] = binary.LittleEndian.Uint64(raw[8*k:])
	}
	ments := make([]mentionSum, totalMents)
	for k := range ments {
		ments[k] = mentionSum{Line: int32(r.uint()), Mention: r.str(), Kind: r.str()}
	}
	if r.err != nil {
		return nil, errCache
	}
	c := &cacheData{entries: make([]cacheEntry, 0, n), kind: kind, id: id, removed: removed}
	uo, so, mo := 0, 0, 0
	for i := range heads {
		h := &heads[i]
		sum := &sums[i]
		sum.Dirty, sum.HasMentions = h.flags&flagDirty != 0, h.flags&flagMentions != 0
		sum.Units = units[uo : uo+int(h.units) : uo+int(h.units)]
		uo += int(h.units)
		start := so
		for k := range sum.Units {
			sum.Units[k].Off = int32(so - start)
			so += int(sum.Units[k].N)
		}
		sum.Shingles = shingles[start:so:so]
		if h.ments > 0 {
			sum.Mentions = ments[mo : mo+int(h.ments) : mo+int(h.ments)]
		}
		mo += int(h.ments)
		if needMentions && !sum.HasMentions {
			sum = nil // no analysis to take, but still a file of the memo
		}
		h.e.rel, h.e.sum = h.rel, sum
		h.e.fromBase, h.e.inBase = kind == kindBase, kind == kindBase
		c.entries = append(c.entries, h.e)
	}
	// In scan order: sorted, but for the index ahead of the others.
	for i := 1; i < len(c.entries); i++ {
		if c.entries[i-1].rel >= c.entries[i].rel {
			if i != 1 || c.sorted != 0 {
				return nil, errCache
			}
			c.sorted = 1
		}
	}
	if r.uint() == 1 {
		c.pairs = r.memo(c)
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errCache
	}
	if c.pairs != nil {
		c.pairs.mark()
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
	var saved []*file
	for _, f := range s.files {
		if f.sum != nil && f.exists {
			saved = append(saved, f)
		}
	}
	if c := s.cache; c != nil {
		// Only what differs from the base, when that is little.
		var changed []*file
		for _, f := range saved {
			if e, ok := c.entry(f.rel, int(f.pos)); !ok || !f.unread || !e.fromBase || f.index && s.indexSumChanged {
				changed = append(changed, f)
			}
		}
		isSaved := func(rel string) bool {
			f := s.byRel[rel]
			return f != nil && f.sum != nil && f.exists
		}
		var removed []string
		for i := range c.entries {
			if e := &c.entries[i]; e.inBase && !isSaved(e.rel) {
				removed = append(removed, e.rel)
			}
		}
		for _, rel := range c.baseGone {
			if !isSaved(rel) {
				removed = append(removed, rel)
			}
		}
		if len(changed)+len(removed) <= deltaLimit(len(saved)) {
			s.writeCacheFile(s.opts.CacheFile+".delta", kindDelta, c.id, removed, changed)
			return
		}
	}
	if s.writeCacheFile(s.opts.CacheFile, kindBase, rand.Uint64(), nil, saved) {
		os.Remove(s.opts.CacheFile + ".delta") // it named the base replaced
	}
}

// writeCacheFile writes one cache file atomically and reports whether it
// was written.
func (s *state) writeCacheFile(path string, kind, id uint64, removed []string, files []*file) bool {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".offline-cache-*")
	if err != nil {
		return false
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	cw := &crcWriter{w: tmp}
	w := &writer{bw: bufio.NewWriterSize(cw, 64<<10)}
	err = s.encodeCache(w, kind, id, removed, files)
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		_, err = tmp.Write(binary.LittleEndian.AppendUint32(nil, cw.crc))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	return err == nil && os.Rename(tmp.Name(), path) == nil
}

// encodeCache streams a cache file of the files given: one pass over them
// per table, so that only the string table is held whole.
func (s *state) encodeCache(w *writer, kind, id uint64, removed []string, saved []*file) error {
	m := s.pairs
	if m == nil && s.cache != nil && !s.dropPairs {
		// A run without the leads keeps the last pairs: they carry the
		// hashes they were found for, so they are never taken for others.
		m = s.cache.pairs
	}
	w.buf = append(w.buf, cacheMagic...)
	w.uint(cacheVersion)
	layout := s.opts.Layout.fingerprint()
	w.uint(uint64(len(layout)))
	w.buf = append(w.buf, layout...)
	w.uint(kind)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, id)
	if kind == kindDelta {
		w.strs(removed)
	}
	w.uint(uint64(len(saved)))
	for _, f := range saved {
		flags := uint64(0)
		if f.sum.Dirty {
			flags |= flagDirty
		}
		if f.sum.HasMentions {
			flags |= flagMentions
		}
		if f.st.valid() {
			flags |= flagStat
		}
		var idx *indexSum
		if f.index && f.idx != nil {
			idx = f.idx
			flags |= flagIndex
		}
		w.str(f.rel)
		w.buf = append(w.buf, f.hash[:]...)
		w.uint(flags)
		if f.st.valid() {
			st := f.st
			for _, v := range []uint64{st.Dev, st.Ino, uint64(st.Size), uint64(st.Mtime), uint64(st.Ctime)} {
				w.uint(v)
			}
		}
		w.uint(uint64(len(f.sum.Units)))
		w.uint(uint64(len(f.sum.Mentions)))
		if idx != nil {
			w.indexSum(idx)
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	for _, f := range saved {
		for _, u := range f.sum.Units {
			w.uint(uint64(u.Unit))
			w.uint(uint64(u.Line))
			w.buf = binary.LittleEndian.AppendUint64(w.buf, u.Key)
			v := uint64(u.N) << 1
			if u.Cross {
				v |= 1
			}
			w.uint(v)
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	for _, f := range saved {
		for k := range f.sum.Units {
			for _, sh := range f.sum.shingles(&f.sum.Units[k]) {
				w.buf = binary.LittleEndian.AppendUint64(w.buf, sh)
			}
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	for _, f := range saved {
		for _, mn := range f.sum.Mentions {
			w.uint(uint64(mn.Line))
			w.str(mn.Mention)
			w.str(mn.Kind)
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	if m != nil {
		w.uint(1)
		w.memo(s.memoFiles(m))
	} else {
		w.uint(0)
	}
	w.buf = append(w.buf, w.tab...)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(len(w.tab)))
	return w.flush()
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

func (w *writer) indexSum(x *indexSum) {
	w.uint(uint64(len(x.Named)))
	for _, n := range x.Named {
		w.str(n.Rel)
		w.uint(uint64(n.Kind))
	}
	w.strs(x.Comments)
	w.uint(uint64(len(x.Links)))
	for _, l := range x.Links {
		w.str(l.Dest)
		if l.Target != "" {
			w.uint(uint64(l.Line)<<1 | 1)
			w.str(l.Target)
		} else {
			w.uint(uint64(l.Line) << 1)
		}
	}
	flags := uint64(0)
	if x.BudgetKnown {
		flags |= 1
	}
	if x.BudgetMoves {
		flags |= 2
	}
	w.uint(flags)
	w.strs(x.BudgetNotes)
}

func decodeIndexSum(r *reader) *indexSum {
	x := &indexSum{}
	n := r.uint()
	if n > uint64(len(r.b))/3 {
		r.err = errCache
		return x
	}
	x.Named = make([]named, n)
	for i := range x.Named {
		x.Named[i] = named{Rel: r.str(), Kind: uint8(r.uint())}
	}
	x.Comments = r.strs()
	n = r.uint()
	if n > uint64(len(r.b))/3 {
		r.err = errCache
		return x
	}
	x.Links = make([]linkSum, n)
	for i := range x.Links {
		l := linkSum{Dest: r.str()}
		v := r.uint()
		l.Line = int32(v >> 1)
		if v&1 != 0 {
			l.Target = r.str()
		}
		x.Links[i] = l
	}
	flags := r.uint()
	x.BudgetKnown, x.BudgetMoves = flags&1 != 0, flags&2 != 0
	x.BudgetNotes = r.strs()
	return x
}

// writer encodes the cache: varints and fixed fields into buf, flushed
// to the file now and then, strings into the string table.
type writer struct {
	bw  *bufio.Writer
	buf []byte
	tab []byte
}

func (w *writer) uint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }

func (w *writer) str(s string) {
	w.uint(uint64(len(w.tab)))
	w.uint(uint64(len(s)))
	w.tab = append(w.tab, s...)
}

func (w *writer) strs(ss []string) {
	w.uint(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

func (w *writer) flush() error {
	_, err := w.bw.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// crcWriter passes writes on, keeping their CRC-32C.
type crcWriter struct {
	w   io.Writer
	crc uint32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	c.crc = crc32.Update(c.crc, crcTable(), p)
	return c.w.Write(p)
}

// reader decodes the cache; the first error sticks and yields zeros.
type reader struct {
	b []byte
	// tab is the string table.
	tab string
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
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errCache
		return make([]byte, max(n, 0))
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.bytes(8)) }

// str is a string of the string table: a slice of it, not a copy.
func (r *reader) str() string {
	off, n := r.uint(), r.uint()
	if r.err != nil || off > uint64(len(r.tab)) || n > uint64(len(r.tab))-off {
		r.err = errCache
		return ""
	}
	return r.tab[off : off+n]
}

func (r *reader) strs() []string {
	n := r.uint()
	if n > uint64(len(r.b))/2 {
		r.err = errCache
		return nil
	}
	var out []string
	for i := uint64(0); i < n && r.err == nil; i++ {
		out = append(out, r.str())
	}
	return out
}
