package offline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Transcripts is the Provenance read from an agent's session transcripts:
// the tool calls that wrote memory files, and when.
//
// Formats, from the agents' own transcripts:
//   - Claude Code (~/.claude/projects/<project>/<session>.jsonl): each line is
//     a record with "timestamp" and a "message" whose "content" holds
//     {"type":"tool_use","name":"Write"|"Edit"|"MultiEdit","input":{...}}
//     blocks; Write carries file_path and content, Edit file_path and
//     new_string, MultiEdit file_path and edits[].new_string.
//   - Codex CLI (~/.codex/sessions/.../rollout-*.jsonl): each line is
//     {"timestamp", "type":"response_item", "payload":{...}} where a file
//     write is an apply_patch call (a function_call whose arguments, or a
//     custom_tool_call whose input, hold "*** Begin Patch"); "*** Add File:"
//     and "*** Update File:" name the file, "+" lines are written.
type Transcripts struct {
	// byBase maps a file's base name to the files of that name that calls
	// wrote, each with the earliest time each line was written.
	byBase map[string][]writtenFile
}

type writtenFile struct {
	path  string
	lines map[string]time.Time
}

// Limits on reading transcripts: a session log can be gigabytes, and only
// lines naming a write tool are decoded.
const (
	maxTranscriptLine  = 16 << 20
	maxTranscriptBytes = 512 << 20
)

// LoadTranscripts reads every *.jsonl under dir. A missing dir is no
// provenance, not an error; an unreadable or malformed line is skipped, as
// transcripts are untrusted input.
func LoadTranscripts(ctx context.Context, dir string) (*Transcripts, error) {
	t := &Transcripts{byBase: map[string][]writtenFile{}}
	if dir == "" {
		return t, nil
	}
	var total int64
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && os.IsNotExist(err) {
				return filepath.SkipAll
			}
			return nil
		}
		if e.IsDir() || !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if total > maxTranscriptBytes {
			return filepath.SkipAll
		}
		n, err := t.readFile(p)
		total += n
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("transcripts: %w", err)
	}
	return t, nil
}

func (t *Transcripts) readFile(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, nil
	}
	defer f.Close()
	return t.read(f)
}

// read consumes one transcript.
func (t *Transcripts) read(r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var n int64
	for {
		line, err := readLine(br, maxTranscriptLine)
		n += int64(len(line))
		if len(line) > 0 && (bytes.Contains(line, []byte(`"tool_use"`)) || bytes.Contains(line, []byte("Begin Patch"))) {
			t.record(line)
		}
		if err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
	}
}

// readLine reads one line, dropping (not buffering) any beyond max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= max {
			buf = append(buf, chunk...)
		} else {
			buf = buf[:0:0]
			max = -1 // too long: skip the rest of it
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if max < 0 {
			return nil, err
		}
		return buf, err
	}
}

type transcriptRecord struct {
	Timestamp string          `json:"timestamp"`
	Message   json.RawMessage `json:"message"`
	Payload   json.RawMessage `json:"payload"`
}

type toolUse struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

func (t *Transcripts) record(line []byte) {
	var rec transcriptRecord
	if json.Unmarshal(line, &rec) != nil {
		return
	}
	at, err := time.Parse(time.RFC3339Nano, rec.Timestamp)
	if err != nil {
		return
	}
	if len(rec.Message) > 0 {
		var msg struct {
			Content []toolUse `json:"content"`
		}
		if json.Unmarshal(rec.Message, &msg) == nil {
			for _, c := range msg.Content {
				if c.Type == "tool_use" {
					t.claudeCall(c, at)
				}
			}
		}
	}
	if len(rec.Payload) > 0 {
		var p struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
			Input     string `json:"input"`
		}
		if json.Unmarshal(rec.Payload, &p) == nil {
			for _, s := range []string{p.Input, p.Arguments} {
				if strings.Contains(s, "*** Begin Patch") {
					if strings.HasPrefix(strings.TrimSpace(s), "{") {
						// function_call arguments: {"command":["apply_patch","*** Begin Patch..."]}
						var a struct {
							Command []string `json:"command"`
							Input   string   `json:"input"`
						}
						if json.Unmarshal([]byte(s), &a) == nil {
							for _, c := range append(a.Command, a.Input) {
								if strings.Contains(c, "*** Begin Patch") {
									t.patch(c, at)
								}
							}
						}
						continue
					}
					t.patch(s, at)
				}
			}
		}
	}
}

func (t *Transcripts) claudeCall(c toolUse, at time.Time) {
	var in struct {
		FilePath  string `json:"file_path"`
		Content   string `json:"content"`
		NewString string `json:"new_string"`
		Edits     []struct {
			NewString string `json:"new_string"`
		} `json:"edits"`
	}
	if json.Unmarshal(c.Input, &in) != nil || in.FilePath == "" {
		return
	}
	switch c.Name {
	case "Write":
		t.wrote(in.FilePath, in.Content, at)
	case "Edit":
		t.wrote(in.FilePath, in.NewString, at)
	case "MultiEdit":
		for _, e := range in.Edits {
			t.wrote(in.FilePath, e.NewString, at)
		}
	}
}

// patch reads an apply_patch body.
func (t *Transcripts) patch(body string, at time.Time) {
	file := ""
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if p, ok := strings.CutPrefix(l, "*** Add File: "); ok {
			file = strings.TrimSpace(p)
			continue
		}
		if p, ok := strings.CutPrefix(l, "*** Update File: "); ok {
			file = strings.TrimSpace(p)
			continue
		}
		if strings.HasPrefix(l, "*** ") {
			file = ""
			continue
		}
		if file != "" && strings.HasPrefix(l, "+") {
			t.wrote(file, l[1:], at)
		}
	}
}

// wrote records that text was written to file at time at.
func (t *Transcripts) wrote(file, text string, at time.Time) {
	file = strings.ReplaceAll(file, "\\", "/")
	base := path.Base(file)
	var wf *writtenFile
	for i := range t.byBase[base] {
		if t.byBase[base][i].path == file {
			wf = &t.byBase[base][i]
		}
	}
	if wf == nil {
		t.byBase[base] = append(t.byBase[base], writtenFile{path: file, lines: map[string]time.Time{}})
		wf = &t.byBase[base][len(t.byBase[base])-1]
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if prev, ok := wf.lines[l]; !ok || at.Before(prev) {
			wf.lines[l] = at
		}
	}
}

// WrittenOn implements Provenance: the earliest call that wrote this line
// to a file whose path ends in rel. Two files of that name in different
// places that disagree make the day unknown.
func (t *Transcripts) WrittenOn(rel, line string) (time.Time, bool) {
	if t == nil {
		return time.Time{}, false
	}
	var found time.Time
	for _, wf := range t.byBase[path.Base(rel)] {
		if wf.path != rel && !strings.HasSuffix(wf.path, "/"+rel) {
			continue
		}
		at, ok := wf.lines[line]
		if !ok {
			continue
		}
		if !found.IsZero() && localDay(found) != localDay(at) {
			return time.Time{}, false
		}
		if found.IsZero() || at.Before(found) {
			found = at
		}
	}
	if found.IsZero() {
		return time.Time{}, false
	}
	return found.In(time.Local), true
}

func localDay(t time.Time) string { return t.In(time.Local).Format("2006-01-02") }

// Version is one recorded state of a memory file.
type Version struct {
	At      time.Time
	Content []byte
	// Since is when the memory was recorded before this version (the
	// previous record of any file); zero means the file's previous version.
	Since time.Time
}

// History is the Provenance of recorded versions (the audit history): a
// line first seen in a version is known to be written between the previous
// version and that one; when both fall on the same day, that is its day.
type History struct {
	files map[string][]Version
}

// NewHistory takes each file's versions, oldest first.
func NewHistory(files map[string][]Version) *History { return &History{files: files} }

// WrittenOn implements Provenance.
func (h *History) WrittenOn(rel, line string) (time.Time, bool) {
	if h == nil {
		return time.Time{}, false
	}
	vs := h.files[rel]
	for k, v := range vs {
		if !containsLine(v.Content, line) {
			continue
		}
		since := v.Since
		if since.IsZero() && k > 0 {
			since = vs[k-1].At
		}
		if since.IsZero() || localDay(since) != localDay(v.At) {
			return time.Time{}, false
		}
		return v.At.In(time.Local), true
	}
	return time.Time{}, false
}

func containsLine(content []byte, line string) bool {
	for _, l := range strings.Split(string(content), "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// Chain asks each provenance in turn.
type Chain []Provenance

// WrittenOn implements Provenance.
func (c Chain) WrittenOn(rel, line string) (time.Time, bool) {
	for _, p := range c {
		if p == nil {
			continue
		}
		if t, ok := p.WrittenOn(rel, line); ok {
			return t, true
		}
	}
	return time.Time{}, false
}
