package offline

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sort"
)

// pairsMemo keeps the cross-file and near-duplicate pairs of a memory
// between runs, keyed by a digest of every analysed file's path, role and
// content hash in scan order: the pairs are a function of the files'
// summaries alone, and a summary of its bytes, so when no file changed
// (a dream with nothing new, the model runner's leads right after the
// offline pass) the postings are not built again. Any change, however
// small, changes the digest, and the pairs are computed afresh.
type pairsMemo struct {
	digest [32]byte
	// cross are the first cross-file pairs (up to maxCrossMemo, more than
	// a run reports, so that an update that loses some still has the
	// maxLeads it needs), crossComplete set when they are all there are.
	cross         []pairRel
	crossComplete bool
	near          []pairRel
	// files are the hashes of the files the pairs were found in (with
	// the entries of cache that say so, for a memo read from the cache),
	// and all every qualifying near-duplicate pair (nil when there were
	// too many to keep): what nearIncremental updates.
	files map[string][32]byte
	cache *cacheData
	// except are the cache's entries the memo was not found in (a memo
	// read from the cache was found in every other).
	except map[string]bool
	all    []pairRel
}

// maxCrossMemo is how many cross-file pairs the memo keeps (a variable
// only so that a test can bring the limit within reach).
var maxCrossMemo = 5 * maxLeads

// pairRel is a pairRef by path, which stays valid when file indices shift.
type pairRel struct {
	a, b   string
	ua, ub int32
	sim    float64
}

// unitsDigest is the key of the pairs of this scan.
func (s *state) unitsDigest() [32]byte {
	h := sha256.New()
	var w []byte
	for _, f := range s.files {
		if f.sum == nil {
			continue
		}
		w = binary.AppendUvarint(w[:0], uint64(len(f.rel)))
		w = append(w, f.rel...)
		if f.index {
			w = append(w, 1)
		} else {
			w = append(w, 0)
		}
		w = append(w, f.hash[:]...)
		h.Write(w)
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

func (s *state) toRels(ps []pairRef) []pairRel {
	if ps == nil {
		return nil
	}
	out := make([]pairRel, len(ps))
	for i, p := range ps {
		out[i] = pairRel{s.files[p.a.file].rel, s.files[p.b.file].rel, p.a.unit, p.b.unit, p.sim}
	}
	return out
}

// fileHashes are the hashes of the analysed files, by path (the index's
// too: its units are cross-file candidates).
func (s *state) fileHashes() map[string][32]byte {
	m := make(map[string][32]byte, len(s.files))
	for _, f := range s.files {
		if f.sum != nil {
			m[f.rel] = f.hash
		}
	}
	return m
}

// fromRels turns remembered pairs back into refs of this scan, or false if
// one names a file or unit the scan does not have (a digest collision, a
// damaged cache): then the pairs are computed.
func (s *state) fromRels(rs []pairRel) ([]pairRef, bool) {
	ref := func(rel string, unit int32) (unitRef, bool) {
		f := s.byRel[rel]
		if f == nil || f.sum == nil || unit < 0 || int(unit) >= len(f.sum.Units) {
			return unitRef{}, false
		}
		return unitRef{f.pos, unit}, true
	}
	out := make([]pairRef, 0, len(rs))
	for _, r := range rs {
		a, ok1 := ref(r.a, r.ua)
		b, ok2 := ref(r.b, r.ub)
		if !ok1 || !ok2 {
			return nil, false
		}
		out = append(out, pairRef{a, b, r.sim})
	}
	return out, true
}

// fileHash is the hash of rel's bytes the memo was found in, if it was;
// hint is rel's place in the scan.
func (m *pairsMemo) fileHash(rel string, hint int) ([32]byte, bool) {
	if m == nil {
		return [32]byte{}, false
	}
	if h, ok := m.files[rel]; ok {
		return h, true
	}
	if e, ok := m.cache.entry(rel, hint); ok && e.inMemo {
		return e.hash, true
	}
	return [32]byte{}, false
}

// fileCount is how many files the memo was found in.
func (m *pairsMemo) fileCount() int {
	n := len(m.files)
	if m.cache != nil {
		for i := range m.cache.entries {
			if m.cache.entries[i].inMemo {
				n++
			}
		}
	}
	return n
}

// eachFile calls fn for every file the memo was found in, with where it
// was in the scan the memo was read with (-1: unknown).
func (m *pairsMemo) eachFile(fn func(rel string, h [32]byte, hint int)) {
	for rel, h := range m.files {
		fn(rel, h, -1)
	}
	if m.cache != nil {
		for i := range m.cache.entries {
			if e := &m.cache.entries[i]; e.inMemo {
				fn(e.rel, e.hash, i)
			}
		}
	}
}

func (w *writer) pairs(ps []pairRel) {
	w.uint(uint64(len(ps)))
	for _, p := range ps {
		w.str(p.a)
		w.uint(uint64(p.ua))
		w.str(p.b)
		w.uint(uint64(p.ub))
		w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(p.sim))
	}
}

func (r *reader) pairs() []pairRel {
	n := r.uint()
	if n > uint64(len(r.b))/12 { // a pair takes at least 12 bytes
		r.err = errCache
		return nil
	}
	out := make([]pairRel, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		var p pairRel
		p.a, p.ua = r.str(), int32(r.uint())
		p.b, p.ub = r.str(), int32(r.uint())
		p.sim = math.Float64frombits(r.u64())
		out = append(out, p)
	}
	return out
}

// memoFiles is how a memo's files are written: every file the cache
// keeps (with the bytes it keeps them for) but the exceptions, and the
// extras, named with their hashes.
type memoFiles struct {
	m      *pairsMemo
	except []string
	extras []string
	hashes map[string][32]byte
}

// memoFiles says the memo's files against the files this run keeps.
func (s *state) memoFiles(m *pairsMemo) memoFiles {
	mf := memoFiles{m: m, hashes: map[string][32]byte{}}
	for i, f := range s.files {
		if f.sum == nil || !f.exists {
			continue
		}
		if h, ok := m.fileHash(f.rel, i); !ok || h != f.hash {
			mf.except = append(mf.except, f.rel)
		}
	}
	m.eachFile(func(rel string, h [32]byte, hint int) {
		var f *file
		if hint >= 0 && hint < len(s.files) && s.files[hint].rel == rel {
			f = s.files[hint]
		} else {
			f = s.byRel[rel]
		}
		if f == nil || f.sum == nil || !f.exists || f.hash != h {
			mf.extras = append(mf.extras, rel)
			mf.hashes[rel] = h
		}
	})
	sort.Strings(mf.extras)
	return mf
}

// memo encodes a memo.
func (w *writer) memo(mf memoFiles) {
	m := mf.m
	w.buf = append(w.buf, m.digest[:]...)
	w.pairs(m.cross)
	if m.crossComplete {
		w.uint(1)
	} else {
		w.uint(0)
	}
	w.pairs(m.near)
	w.strs(mf.except)
	w.uint(uint64(len(mf.extras)))
	for _, rel := range mf.extras {
		h := mf.hashes[rel]
		w.str(rel)
		w.buf = append(w.buf, h[:]...)
	}
	if m.all == nil {
		w.uint(0)
		return
	}
	w.uint(1)
	w.pairs(m.all)
}

// memo decodes a memo of the cache c.
func (r *reader) memo(c *cacheData) *pairsMemo {
	m := &pairsMemo{files: map[string][32]byte{}, cache: c, except: map[string]bool{}}
	copy(m.digest[:], r.bytes(32))
	m.cross = r.pairs()
	m.crossComplete = r.uint() == 1
	m.near = r.pairs()
	for _, rel := range r.strs() {
		m.except[rel] = true
	}
	n := r.uint()
	if n > uint64(len(r.b))/34 {
		r.err = errCache
		return m
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		rel := r.str()
		var h [32]byte
		copy(h[:], r.bytes(32))
		m.files[rel] = h
	}
	if r.uint() == 1 {
		m.all = r.pairs()
	}
	return m
}

// mark records on the cache's entries which the memo was found in.
func (m *pairsMemo) mark() {
	for i := range m.cache.entries {
		e := &m.cache.entries[i]
		_, extra := m.files[e.rel]
		e.inMemo = !m.except[e.rel] && !extra
	}
}
