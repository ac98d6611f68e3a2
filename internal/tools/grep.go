package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dreamkit/dream/internal/sandbox"
)

// grepTool searches file contents. It streams every file through a fixed
// buffer, so a multi-gigabyte JSONL transcript costs time but not memory, and
// it counts every match while showing only the first few.
type grepTool struct{ s *Set }

// grepInput is grep's input; its tags are also its schema (see inputSpec).
// The output_mode enum lists the three grep* constants below, in order.
type grepInput struct {
	Pattern    string `json:"pattern" desc:"Regular expression (Go RE2) or plain text to search for"`
	Path       string `json:"path,omitempty" desc:"File or directory to search; default the repository"`
	Glob       string `json:"glob,omitempty" desc:"Only search files whose name (or path, if it contains /) matches this glob"`
	OutputMode string `json:"output_mode,omitempty" enum:"content,files_with_matches,count" desc:"What to show; default content"`
	HeadLimit  *int   `json:"head_limit,omitempty" minimum:"1" desc:"Show at most this many entries"`
}

var grepSpec = mustSpec[grepInput]()

const (
	grepContent = "content"
	grepFiles   = "files_with_matches"
	grepCount   = "count"
)

func (t *grepTool) Name() string { return "grep" }

func (t *grepTool) Description() string {
	l := t.s.limits
	return fmt.Sprintf("Search file contents with a regular expression (Go RE2 syntax; a plain word is searched literally and fast; "+
		"use (?i) for case-insensitive). path is a file or directory (absolute, or relative to the repository; default the repository); "+
		"glob filters file names (e.g. \"*.jsonl\", \"**/*.md\"). .gitignore'd files in the repository and binary files are skipped. "+
		"output_mode: \"content\" (default) shows path:line:text, \"files_with_matches\" lists files newest first, \"count\" gives matches per file. "+
		"At most %d entries are shown (head_limit lowers it) and lines are cut to %d characters around the match; the total number of matches is always reported. "+
		"Transcripts are large JSONL files: grep narrowly (a distinctive word, one file or a glob), never read them whole.",
		l.GrepMaxMatches, l.GrepMaxLineChars)
}

func (t *grepTool) Schema() json.RawMessage { return grepSpec().schema }

// grepCall is a parsed, checked call.
type grepCall struct {
	in    grepInput
	m     *matcher
	root  sandbox.NamedRoot
	rel   string
	limit int
}

func (t *grepTool) parse(input json.RawMessage) (*grepCall, error) {
	c := &grepCall{}
	if err := decode("grep", input, &c.in, grepSpec()); err != nil {
		return nil, err
	}
	m, err := newMatcher(c.in.Pattern)
	if err != nil {
		return nil, fmt.Errorf("grep: %w", err)
	}
	c.m = m
	// decode has checked output_mode against the enum and head_limit
	// against its minimum.
	if c.in.OutputMode == "" {
		c.in.OutputMode = grepContent
	}
	c.limit = t.s.limits.GrepMaxMatches
	if c.in.HeadLimit != nil {
		c.limit = min(c.limit, *c.in.HeadLimit)
	}
	if c.in.Glob != "" && !doublestar.ValidatePattern(c.in.Glob) {
		return nil, fmt.Errorf("grep: glob %q is not a valid pattern", c.in.Glob)
	}
	p := c.in.Path
	if p == "" {
		p = "."
	}
	c.root, c.rel, err = t.s.ro.Resolve(p)
	if err != nil {
		return nil, fmt.Errorf("grep: %w", err)
	}
	return c, nil
}

func (t *grepTool) Validate(input json.RawMessage) error {
	_, err := t.parse(input)
	return err
}

// grepFile is what one file contributed.
type grepFile struct {
	shown   string
	count   int64
	modTime time.Time
}

func (t *grepTool) Execute(ctx context.Context, input json.RawMessage) (Result, error) {
	c, err := t.parse(input)
	if err != nil {
		return Result{}, err
	}
	fsys, err := t.s.ro.FS(c.root)
	if err != nil {
		return Result{}, fmt.Errorf("grep: %w", err)
	}
	fi, err := t.s.ro.Stat(c.root, c.rel)
	if err != nil {
		return Result{}, fmt.Errorf("grep: %w", err)
	}
	maxChars := t.s.limits.GrepMaxLineChars
	g := &grepSearch{t: t, c: c, maxChars: maxChars, sc: newScanner(c.m, scanBufSize, scanMaxLine, maxChars*4)}
	searchFile := func(rel string, d fs.DirEntry) error { return g.file(ctx, rel, d) }
	switch {
	case fi.IsDir():
		err = walkTree(ctx, fsys, c.rel, c.root.Name == RootRepo, searchFile)
	case !fi.Mode().IsRegular():
		return Result{}, fmt.Errorf("grep: %s is a %s, not a regular file; only regular files are searched", sandbox.SafeName(c.root.Display(c.rel)), specialKind(fi.Mode()))
	default:
		err = searchFile(c.rel, fs.FileInfoToDirEntry(fi))
	}
	if err != nil {
		return Result{}, fmt.Errorf("grep: %w", err)
	}
	out := t.format(c, &g.b, g.files, g.total, g.searched, g.binaries, g.refused+sandbox.CredentialsSkipped(fsys))
	if c.in.OutputMode == grepFiles {
		for i, f := range g.files {
			if i == c.limit {
				break
			}
			g.ev.WriteString(f.shown + "\n")
		}
	}
	t.s.show("grep", c.root, c.root.Display(c.rel), g.ev.String())
	return Result{Content: out}, nil
}

// grepSearch is one grep's progress over the files it searches: what it
// shows, the evidence of it (path:text, no line numbers) and the counts
// the trailer reports.
type grepSearch struct {
	t          *grepTool
	c          *grepCall
	sc         *scanner
	maxChars   int
	b, ev      strings.Builder
	files      []grepFile
	total      int64
	shownLines int
	binaries   int
	searched   int
	refused    int
}

// file searches one file, rel, found as d.
func (g *grepSearch) file(ctx context.Context, rel string, d fs.DirEntry) error {
	c := g.c
	if c.in.Glob != "" && !globMatches(c.in.Glob, c.rel, rel) {
		return nil
	}
	f, err := g.t.s.ro.Open(c.root, rel)
	if errors.Is(err, sandbox.ErrCredential) {
		g.refused++ // a hard link of a key, say: counted, never searched
		return nil
	}
	if err != nil {
		return nil // vanished or unreadable: not the model's problem
	}
	defer f.Close()
	g.searched++
	shown := sandbox.SafeName(c.root.Display(rel))
	var fileMatches int64
	err = g.sc.scan(ctx, f, func(lineNo int64, line []byte, at int, cut bool) bool {
		fileMatches++
		if c.in.OutputMode == grepFiles {
			return false // one match is enough to list the file
		}
		if c.in.OutputMode == grepContent && g.shownLines < c.limit {
			g.shownLines++
			w := window(line, at, g.maxChars, cut)
			g.b.WriteString(shown)
			g.b.WriteByte(':')
			g.b.WriteString(strconv.FormatInt(lineNo, 10))
			g.b.WriteByte(':')
			g.b.WriteString(w)
			g.b.WriteByte('\n')
			g.ev.WriteString(shown + ":" + w + "\n")
		}
		return true
	})
	if errors.Is(err, errBinary) {
		g.binaries++
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", shown, err)
	}
	if fileMatches > 0 {
		g.total += fileMatches
		gf := grepFile{shown: shown, count: fileMatches}
		if c.in.OutputMode == grepFiles {
			if info, err := d.Info(); err == nil {
				gf.modTime = info.ModTime()
			}
		}
		g.files = append(g.files, gf)
	}
	return nil
}

// format renders the result for the output mode, with the trailer that says
// what was not shown.
func (t *grepTool) format(c *grepCall, b *strings.Builder, files []grepFile, total int64, searched, binaries, credentials int) string {
	var notes []string
	if binaries > 0 {
		notes = append(notes, fmt.Sprintf("%d binary file(s) skipped", binaries))
	}
	if credentials > 0 {
		notes = append(notes, credentialNote(credentials))
	}
	if total == 0 {
		msg := fmt.Sprintf("No matches in %d file(s).", searched)
		if len(notes) > 0 {
			msg += " (" + strings.Join(notes, "; ") + ")"
		}
		return msg
	}
	switch c.in.OutputMode {
	case grepFiles:
		sort.SliceStable(files, func(i, j int) bool {
			if !files[i].modTime.Equal(files[j].modTime) {
				return files[i].modTime.After(files[j].modTime)
			}
			return files[i].shown < files[j].shown
		})
		for i, f := range files {
			if i == c.limit {
				break
			}
			b.WriteString(f.shown + "\n")
		}
		if len(files) > c.limit {
			notes = append(notes, fmt.Sprintf("… %d more files not shown", len(files)-c.limit))
		}
		notes = append(notes, fmt.Sprintf("%d file(s) match", len(files)))
	case grepCount:
		for i, f := range files {
			if i == c.limit {
				break
			}
			fmt.Fprintf(b, "%s:%d\n", f.shown, f.count)
		}
		if len(files) > c.limit {
			notes = append(notes, fmt.Sprintf("… %d more files not shown", len(files)-c.limit))
		}
		notes = append(notes, fmt.Sprintf("%d matching line(s) in %d file(s)", total, len(files)))
	default:
		if shown := int64(min(int64(c.limit), total)); total > shown {
			notes = append(notes, fmt.Sprintf("… %d more matches not shown (%d matching lines in %d files in total); narrow the pattern, path or glob, or read around a line with offset", total-shown, total, len(files)))
		}
	}
	if len(notes) > 0 {
		b.WriteString("[" + strings.Join(notes, "; ") + "]\n")
	}
	return b.String()
}

// globMatches applies grep's glob filter to rel (relative to the root). A
// glob without a slash matches the file name, as in ripgrep; one with a slash
// matches the path relative to the searched directory.
func globMatches(glob, base, rel string) bool {
	if !strings.Contains(glob, "/") {
		ok, _ := doublestar.Match(glob, path.Base(rel))
		return ok
	}
	sub := rel
	if base != "." {
		sub = strings.TrimPrefix(rel, base+"/")
	}
	ok, _ := doublestar.Match(glob, sub)
	return ok
}

// window shows at most maxChars characters of line, centred a little before
// the match so that in a long JSONL record the match is what the model sees,
// with … where text was cut. cut says line is only the start of a longer
// one. Line endings and invalid UTF-8 are cleaned.
func window(line []byte, at, maxChars int, cut bool) string {
	if utf8.RuneCount(line) <= maxChars {
		if cut {
			return clean(line) + "…"
		}
		return clean(line)
	}
	start := 0
	if at > 0 && at <= len(line) {
		start = at
		for back := maxChars / 5; back > 0 && start > 0; back-- {
			_, size := utf8.DecodeLastRune(line[:start])
			start -= size
		}
	}
	text, dropped := truncateRunes(line[start:], maxChars)
	s := clean(text)
	if start > 0 {
		s = "…" + s
	}
	if cut || dropped > 0 || start+len(text) < len(line) {
		s += "…"
	}
	return s
}

// clean makes a line safe to show: no carriage returns, valid UTF-8.
func clean(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.TrimSuffix(s, "\r")
}
