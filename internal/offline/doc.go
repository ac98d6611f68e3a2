package offline

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/memory"
)

// line is one line of a file being edited. orig is its 1-based number in the
// input, or 0 for a line the engine added; fixes report orig so that a
// reader can find the line in the file as it was.
type line struct {
	text string
	orig int
}

// doc is a memory file held as lines while the fixes run.
type doc struct {
	rel     string
	isIndex bool
	lines   []line
	// body is the index of the first line after the frontmatter.
	body    int
	crlf    bool
	finalNL bool
	orig    []byte
	mode    fs.FileMode
	exists  bool
	time    time.Time
	topic   *memory.Topic
}

// state is one run of the engine over a loaded directory.
type state struct {
	opts  Options
	index *doc // nil when there is no MEMORY.md
	docs  []*doc
	byRel map[string]*doc
	// hadPointers is true when the index holds at least one pointer, i.e. it
	// is a Claude Code style index rather than nanobot's single MEMORY.md.
	hadPointers bool
	fixes       []Fix
	notes       []string
}

func newState(dir *memory.Dir, o Options) (*state, error) {
	s := &state{opts: o, byRel: map[string]*doc{}}
	if dir.Index != nil {
		d, err := s.loadDoc(memory.IndexFile, nil)
		if err != nil {
			return nil, err
		}
		d.isIndex = true
		s.index = d
		for _, l := range dir.Index.Lines {
			if l.IsPointer {
				s.hadPointers = true
				break
			}
		}
	}
	for i := range dir.Topics {
		t := &dir.Topics[i]
		if _, err := s.loadDoc(t.Path, t); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// loadDoc builds a doc from the file on disk and registers it.
func (s *state) loadDoc(rel string, t *memory.Topic) (*doc, error) {
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
	d := newDoc(rel, data)
	d.mode = info.Mode().Perm()
	d.exists = true
	d.topic = t
	if t != nil && t.Frontmatter {
		d.body = t.BodyLine - 1
	}
	d.time = s.fileTime(rel, t, info.ModTime())
	s.addDoc(d)
	return d, nil
}

func newDoc(rel string, data []byte) *doc {
	text := string(data)
	d := &doc{rel: rel, orig: data, mode: 0o644,
		crlf:    strings.Contains(text, "\r\n"),
		finalNL: strings.HasSuffix(text, "\n") || text == "",
	}
	for i, l := range memory.SplitLines(text) {
		d.lines = append(d.lines, line{text: l, orig: i + 1})
	}
	return d
}

func (s *state) addDoc(d *doc) {
	s.docs = append(s.docs, d)
	s.byRel[d.rel] = d
}

// fileTime resolves the time relative dates in rel are read against.
func (s *state) fileTime(rel string, t *memory.Topic, mtime time.Time) time.Time {
	var ft time.Time
	switch {
	case s.opts.FileTime != nil:
		ft = s.opts.FileTime(rel)
	case t != nil && t.Fields != nil:
		for _, k := range []string{"updated", "date"} {
			if v, ok := parseDate(t.Fields[k]); ok {
				ft = v
				break
			}
		}
	}
	if ft.IsZero() {
		ft = mtime
	}
	if ft.IsZero() || ft.After(s.opts.Now) {
		ft = s.opts.Now
	}
	return ft
}

// parseDate reads the date formats people put in frontmatter.
func parseDate(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// render joins the lines back with the file's own line ending.
func (d *doc) render() []byte {
	if len(d.lines) == 0 {
		return nil
	}
	nl := "\n"
	if d.crlf {
		nl = "\r\n"
	}
	var b strings.Builder
	for i, l := range d.lines {
		if i > 0 {
			b.WriteString(nl)
		}
		b.WriteString(l.text)
	}
	if d.finalNL {
		b.WriteString(nl)
	}
	return []byte(b.String())
}

// fences marks the lines inside fenced code blocks (fence lines included):
// code is quoted, not remembered prose, so no fix touches it.
func (d *doc) fences() []bool {
	in := make([]bool, len(d.lines))
	open := ""
	for i, l := range d.lines {
		t := strings.TrimSpace(l.text)
		switch {
		case open != "":
			in[i] = true
			// Only a run of the same character at least as long, with
			// nothing after it, closes a fence: a "```" inside a "````"
			// block is quoted code, as is "```go".
			if run := fenceRun(t); len(run) >= len(open) && run[0] == open[0] && strings.TrimSpace(t[len(run):]) == "" {
				open = ""
			}
		case fenceRun(t) != "":
			in[i], open = true, fenceRun(t)
		}
	}
	return in
}

// fenceRun is the run of three or more backticks or tildes that opens t, or "".
func fenceRun(t string) string {
	if !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") {
		return ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	return t[:n]
}

// deleteMarked removes the lines whose index is in del.
func (d *doc) deleteMarked(del map[int]bool) {
	if len(del) == 0 {
		return
	}
	out := d.lines[:0]
	for i, l := range d.lines {
		if !del[i] {
			out = append(out, l)
		}
	}
	d.lines = out
}

// insertAt inserts added lines before index i.
func (d *doc) insertAt(i int, texts ...string) {
	add := make([]line, len(texts))
	for k, t := range texts {
		add[k] = line{text: t}
	}
	d.lines = append(d.lines[:i], append(add, d.lines[i:]...)...)
}

// lastPointer is the index of the last pointer line, or -1.
func (d *doc) lastPointer() int {
	last := -1
	for i, l := range d.lines {
		if memory.ParseIndexLine(0, l.text).IsPointer {
			last = i
		}
	}
	return last
}

// size is the rendered size in bytes and lines.
func (d *doc) size() (lines, bytes int) {
	return len(d.lines), len(d.render())
}
