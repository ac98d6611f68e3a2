package offline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/memory"
)

// file is one memory file while the fixes run. Only the index and the
// overflow file stay resident (their bytes and parse are needed to the
// end); every other file is read, parsed, analysed and dropped, keeping its
// summary (what the cross-file leads need), the splices its fixes decided
// and the hash of the bytes they apply to. Its bytes are read again only to
// write it, and nothing is rewritten from the parse: the output is the
// input with the splices applied.
type file struct {
	rel string
	// pos is the file's place in state.files.
	pos    int32
	src    []byte
	doc    *memory.Doc
	topic  *memory.Topic
	mode   fs.FileMode
	exists bool
	index  bool
	edits  []edit
	// resident files keep src and doc for the whole run.
	resident bool
	// hash is the SHA-256 of the bytes read, checked again before writing.
	hash [32]byte
	// sum is the file's analysis for the leads.
	sum *fileSum
	// idx is the index's summary (the index only), from its parse; nil
	// once the index is written.
	idx *indexSum
	// pointer is the index pointer to add for it, when it is unindexed.
	pointer string
	// dupFixes, dateFixes and leads are this file's records, gathered in
	// file order at the end of the scan so that the report reads as if
	// each pass had run over every file in turn.
	dupFixes, dateFixes []Fix
	leads               []Lead
	// kept are the bytes of a file with fixes, kept for writing it.
	kept []byte
	// norms memoises normalize per unit while the file is parsed.
	norms []*string
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// state is one run of the engine over a memory directory.
type state struct {
	opts Options
	// files are every memory file in order: MEMORY.md first, then the
	// others sorted by path.
	files []*file
	byRel map[string]*file
	// index is the layout's index file, nil when the layout has none or it
	// does not exist (yet).
	index *file
	// dirs are the folders that hold memory files, for mentions.
	dirs   map[string]bool
	reader *memory.Reader
	roles  roles
	fixes  []Fix
	leads  []Lead
	notes  []string
	// pointerEnd caches where new pointers go in the index.
	pointerEnd *int
	// mentionsDone is set once the index's mentions decide which files
	// need a pointer; named and ignore are what they decided.
	named  mentionSet
	ignore []string
	// kept is the total of file.kept, shared by the workers.
	kept atomic.Int64
	// list is the memory's listing, with the directories its files are
	// read through.
	list *memoryList
}

// scan reads the memory file by file: each is parsed, its own fixes are
// decided (exact duplicates, relative dates) and its summary kept; only the
// index and the overflow file stay whole.
func scan(ctx context.Context, o Options) (st *state, err error) {
	l, err := listMemory(o.MemoryDir)
	if err != nil {
		return nil, err
	}
	r, err := memory.OpenReader(l.root)
	if err != nil {
		l.close()
		return nil, err
	}
	if o.Provenance != nil {
		o.Provenance = &lockedProvenance{p: o.Provenance} // the workers share it
	}
	s := &state{opts: o, byRel: make(map[string]*file, len(l.rels)), dirs: map[string]bool{}, reader: r, list: l, roles: o.Layout.roles()}
	defer func() {
		if err != nil {
			s.close() // the caller only closes a state it got
		}
	}()
	slab := make([]file, len(l.rels)) // one allocation for every file
	for i, rel := range l.rels {
		f := &slab[i]
		*f = file{rel: rel, exists: true, index: o.Layout.Index != "" && rel == o.Layout.Index}
		f.resident = f.index || rel == OverflowFile
		s.addFile(f)
		for d := filepath.ToSlash(filepath.Dir(rel)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			s.dirs[d] = true
		}
	}
	if o.Layout.Index != "" {
		s.index = s.byRel[o.Layout.Index]
	}
	for _, rel := range l.links {
		target, _ := os.Readlink(filepath.Join(l.root, filepath.FromSlash(rel)))
		s.leads = append(s.leads, Lead{Kind: KindLinkedFile, File: rel, Detail: fmt.Sprintf(
			"a symbolic link to %s: a dream never reads or writes through a link, so it is left as it is; replace the link with the file itself for dreams to tidy it", target)})
	}
	// The index first: what it names decides which files need a pointer,
	// and a file that needs one must be parsed for it.
	if s.index != nil {
		if err := s.scanFile(s.index); err != nil {
			return nil, err
		}
	}
	s.named = s.mentions()
	s.ignore = s.ignorePatterns(s.named)
	if err := s.each(ctx, s.files, func(f *file) error {
		if f == s.index {
			return nil
		}
		return s.scanFile(f)
	}); err != nil {
		return nil, err
	}
	for _, f := range s.files {
		s.fixes = append(s.fixes, f.dupFixes...)
	}
	for _, f := range s.files {
		s.fixes = append(s.fixes, f.dateFixes...)
		s.leads = append(s.leads, f.leads...)
		f.dupFixes, f.dateFixes, f.leads = nil, nil, nil
	}
	return s, nil
}

// needsPointer reports a file the index does not name and may point to.
func (s *state) needsPointer(f *file) bool {
	return s.opts.Layout.Index != "" && s.indexable(f) && !s.named.names(f.rel) && !matchesAny(s.ignore, f.rel)
}

func (s *state) scanFile(f *file) error {
	pointer := s.needsPointer(f)
	// Read through the file's directory, the listing's (or, where it has
	// none, through the memory reader).
	data, perm, ok, err := s.list.read(int(f.pos))
	if err != nil {
		return err
	}
	if ok {
		f.mode = perm
	} else {
		var info fs.FileInfo
		if data, info, err = s.reader.ReadFile(f.rel); err != nil {
			return err
		}
		f.mode = info.Mode().Perm()
	}
	f.hash = sha256.Sum256(data)
	f.src, f.doc = data, memory.ParseDoc(data)
	f.sum = s.summarize(f)
	s.fixDuplicatesIn(f)
	s.fixDatesIn(f)
	if pointer && !utf8.ValidString(f.rel) {
		// The agents hold a path as Unicode text: a name that is not
		// UTF-8 is one they cannot open, so a pointer to it would only
		// put invalid text into the file they load every turn.
		f.leads = append(f.leads, Lead{Kind: KindUnnamableFile, File: f.rel, Detail: fmt.Sprintf(
			"%q is not indexed: its name is not UTF-8, so no agent can open it by name; rename it (for example with convmv) and the next dream indexes it", f.rel)})
	} else if pointer {
		t := memory.ParseTopic(f.rel, data)
		f.topic = &t
		f.pointer = pointerFor(f)
		f.topic = nil
	}
	f.norms = nil
	if !f.resident {
		f.src, f.doc = nil, nil
		if len(f.edits) > 0 && s.reserveKept(len(data)) {
			// Kept for writing, within a fixed budget: past it the file
			// is read again (and checked by hash) when it is written.
			// Which files are kept may differ between runs in parallel;
			// what is written never does.
			f.kept = data
		}
	}
	return nil
}

// reserveKept takes n bytes of the keep budget, if they are left.
func (s *state) reserveKept(n int) bool { return reserve(&s.kept, int64(n), keepBytes) }

// reserve adds n to *used if that stays within limit, and reports whether
// it did.
func reserve(used *atomic.Int64, n, limit int64) bool {
	for {
		k := used.Load()
		if k+n > limit {
			return false
		}
		if used.CompareAndSwap(k, k+n) {
			return true
		}
	}
}

// keepBytes bounds the bytes of files with fixes that the scan keeps for
// writing, so that the engine's memory does not grow with the memory's.
const keepBytes = 4 << 20

// reread returns f's bytes as the scan read them, or an error if the file
// changed since.
func (s *state) reread(f *file) ([]byte, error) {
	if f.src != nil || !f.exists {
		return f.src, nil
	}
	if f.kept != nil {
		return f.kept, nil
	}
	data, _, err := s.reader.ReadFile(f.rel)
	if err != nil {
		return nil, err
	}
	if sha256.Sum256(data) != f.hash {
		return nil, fmt.Errorf("%s changed while the offline engine ran", f.rel)
	}
	return data, nil
}

// write writes every file whose splices change it, each replaced
// atomically, and returns their paths, sorted.
func (s *state) write(ctx context.Context) ([]string, error) {
	var todo []*file
	for _, f := range s.files {
		if len(f.edits) > 0 || !f.exists {
			todo = append(todo, f)
		}
	}
	written := make([]bool, len(todo))
	pos := make(map[*file]int, len(todo))
	for i, f := range todo {
		pos[f] = i
	}
	err := s.each(ctx, todo, func(f *file) error {
		ok, err := s.writeOne(f)
		written[pos[f]] = ok
		return err
	})
	if err != nil {
		return nil, err
	}
	var touched []string
	for i, f := range todo {
		if written[i] {
			touched = append(touched, f.rel)
		}
	}
	sort.Strings(touched)
	return touched, nil
}

// writeOne writes f if its splices change it, and reports whether it did.
func (s *state) writeOne(f *file) (bool, error) {
	src, err := s.reread(f)
	if err != nil {
		return false, err
	}
	saved := f.src
	f.src = src
	out, changed := f.render()
	f.src = saved
	if !changed {
		return false, nil
	}
	// Not durable: this is a dream's staging copy, which the journal's
	// commit makes durable when it lands (a crash before that throws the
	// copy away); a sync per file would cost seconds on a busy disk.
	if err := fsutil.WriteFileAtomic(filepath.Join(s.opts.MemoryDir, filepath.FromSlash(f.rel)), out, f.mode, false); err != nil {
		return false, err
	}
	f.kept, f.idx, f.sum = nil, nil, nil
	return true, nil
}

func (s *state) addFile(f *file) {
	f.pos = int32(len(s.files))
	s.files = append(s.files, f)
	s.byRel[f.rel] = f
}

// close releases the memory dir.
func (s *state) close() {
	if s.reader != nil {
		s.reader.Close()
	}
	s.list.close()
}

// splice records an edit; an edit overlapping one already made is refused,
// so that two fixes never fight over the same bytes.
func (f *file) splice(start, end int, text string) bool {
	for _, e := range f.edits {
		if start < e.end && e.start < end || start == end && start > e.start && start < e.end || e.start == e.end && e.start > start && e.start < end {
			return false
		}
	}
	f.edits = append(f.edits, edit{start, end, text})
	return true
}

// touched reports whether [start, end) overlaps an edit already made.
func (f *file) touched(start, end int) bool {
	for _, e := range f.edits {
		if start < e.end && e.start < end {
			return true
		}
	}
	return false
}

// render applies the splices to the original bytes.
func (f *file) render() ([]byte, bool) {
	if len(f.edits) == 0 {
		return f.src, !f.exists
	}
	es := append([]edit(nil), f.edits...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].start < es[j].start })
	var b bytes.Buffer
	last := 0
	for _, e := range es {
		b.Write(f.src[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(f.src[last:])
	out := b.Bytes()
	return out, !f.exists || !bytes.Equal(out, f.src)
}

// newline is the file's own line ending, for lines the engine adds.
func (f *file) newline() string {
	if i := bytes.IndexByte(f.src, '\n'); i > 0 && f.src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

func (s *state) fix(f *file, kind string, start, end int, detail string) {
	line := 0
	if f.exists && len(f.src) > 0 {
		line = f.doc.LineOf(min(start, len(f.src)-1))
	}
	fx := Fix{Kind: kind, File: f.rel, Line: line, Start: start, End: end, Detail: detail}
	switch kind {
	case KindDuplicate:
		f.dupFixes = append(f.dupFixes, fx)
	case KindRelativeDate:
		f.dateFixes = append(f.dateFixes, fx)
	default:
		s.fixes = append(s.fixes, fx)
	}
}

// readSmall reads a small side file of the memory dir (.dreamignore) with
// the memory reader's safe open; a missing file is empty.
func (s *state) readSmall(rel string) []byte {
	data, _, err := s.reader.ReadFile(rel)
	if err != nil {
		return nil
	}
	return data
}
