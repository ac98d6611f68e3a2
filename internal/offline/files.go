package offline

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/dreamkit/dream/internal/memory"
)

// file is one memory file while the fixes run: the bytes as read, their
// parse, and the splices decided so far. Nothing is rewritten from the
// parse; the output is the input with the splices applied.
type file struct {
	rel    string
	src    []byte
	doc    *memory.Doc
	topic  *memory.Topic
	mode   fs.FileMode
	exists bool
	index  bool
	edits  []edit
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// state is one run of the engine over a loaded directory.
type state struct {
	opts  Options
	files []*file
	byRel map[string]*file
	// index is the layout's index file, nil when the layout has none or it
	// does not exist (yet).
	index *file
	// other are the non-Markdown files and directories, for mentions.
	dirs  map[string]bool
	fixes []Fix
	leads []Lead
	notes []string
	// pointerEnd caches where new pointers go in the index.
	pointerEnd *int
}

func load(ctx context.Context, o Options) (*state, error) {
	if err := memory.CheckSymlinks(o.MemoryDir); err != nil {
		return nil, err
	}
	dir, err := memory.Load(o.MemoryDir)
	if err != nil {
		return nil, err
	}
	s := &state{opts: o, byRel: map[string]*file{}, dirs: map[string]bool{}}
	if dir.Index != nil {
		if _, err := s.loadFile(memory.IndexFile, nil); err != nil {
			return nil, err
		}
	}
	for i := range dir.Topics {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t := &dir.Topics[i]
		if _, err := s.loadFile(t.Path, t); err != nil {
			return nil, err
		}
	}
	for _, f := range s.files {
		for d := filepath.ToSlash(filepath.Dir(f.rel)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			s.dirs[d] = true
		}
	}
	if o.Layout.Index != "" {
		s.index = s.byRel[o.Layout.Index]
		if s.index != nil {
			s.index.index = true
		}
	}
	return s, nil
}

func (s *state) loadFile(rel string, t *memory.Topic) (*file, error) {
	full := filepath.Join(s.opts.MemoryDir, filepath.FromSlash(rel))
	info, err := os.Stat(full)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", rel, err)
	}
	var data []byte
	if t != nil {
		data = t.Raw
	} else if data, err = os.ReadFile(full); err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	f := &file{rel: rel, src: data, doc: memory.ParseDoc(data), topic: t, mode: info.Mode().Perm(), exists: true}
	s.addFile(f)
	return f, nil
}

func (s *state) addFile(f *file) {
	s.files = append(s.files, f)
	s.byRel[f.rel] = f
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
	s.fixes = append(s.fixes, Fix{Kind: kind, File: f.rel, Line: line, Start: start, End: end, Detail: detail})
}
