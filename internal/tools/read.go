package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dreamkit/dream/internal/sandbox"
)

// readTool shows a file with line numbers. Reading a memory file also records
// its content, which is what lets edit patch it afterwards.
type readTool struct{ s *Set }

// readInput is read's input; its tags are also its schema (see inputSpec).
// offset has minimum 0, not 1: Claude Code's Read, whose conventions models
// are trained on, declares offset as a plain number ("the line number to
// start reading from", no lower bound; see the Agent SDK's TypeScript
// reference for the Read tool's input) and models do send offset 0 to mean
// the top of the file. Refusing it would only cost a turn.
type readInput struct {
	FilePath string `json:"file_path" desc:"Absolute path, or a relative path: a memory file of that path, else a repository file"`
	Offset   *int   `json:"offset,omitempty" minimum:"0" desc:"1-based line number to start reading at (0 also means the first line)"`
	Limit    *int   `json:"limit,omitempty" minimum:"1" desc:"Number of lines to read"`
}

var readSpec = mustSpec[readInput]()

func (t *readTool) Name() string { return "read" }

func (t *readTool) Description() string {
	l := t.s.limits
	return fmt.Sprintf("Read a text file from the memory directory, the repository or the sessions directory. "+
		"file_path is absolute, or relative: a relative path names a memory file when the memory has one of that path, else a repository file "+
		"(read a repository file that shares a memory file's name by its absolute path). Lines come numbered like cat -n; "+
		"offset is the 1-based line to start at (0 also means the first) and limit the number of lines (at most %d lines, "+
		"%d characters per line and %d KiB per call; anything cut is said at the end). "+
		"Binary files are refused. Transcripts are large JSONL files: find what you need with grep first, "+
		"then read a narrow range with offset and limit. Read a memory file before editing it.",
		l.ReadMaxLines, l.ReadMaxLineChars, l.ReadMaxBytes>>10)
}

func (t *readTool) Schema() json.RawMessage { return readSpec().schema }

// parse decodes and checks the input and resolves the path.
func (t *readTool) parse(input json.RawMessage) (in readInput, root sandbox.NamedRoot, rel string, err error) {
	if err = decode("read", input, &in, readSpec()); err != nil {
		return in, root, "", err
	}
	root, rel, err = t.s.resolveRead(in.FilePath)
	if err != nil {
		return in, root, "", fmt.Errorf("read: %w", err)
	}
	return in, root, rel, nil
}

func (t *readTool) Validate(input json.RawMessage) error {
	_, _, _, err := t.parse(input)
	return err
}

func (t *readTool) Execute(ctx context.Context, input json.RawMessage) (Result, error) {
	in, root, rel, err := t.parse(input)
	if err != nil {
		return Result{}, err
	}
	shown := root.Display(rel)
	fi, err := t.s.ro.Stat(root, rel)
	if err != nil {
		return Result{}, fmt.Errorf("read: %w", err)
	}
	if fi.IsDir() {
		return Result{}, fmt.Errorf("read: %s is a directory; use ls to list it", shown)
	}
	if !fi.Mode().IsRegular() {
		// Opening would be refused anyway (a FIFO must never be opened
		// blocking); saying what it is lets the model move on.
		return Result{}, fmt.Errorf("read: %s is a %s, not a regular file; only regular files can be read", sandbox.SafeName(shown), specialKind(fi.Mode()))
	}
	offset, limit := 1, t.s.limits.ReadMaxLines
	if in.Offset != nil && *in.Offset > 0 {
		offset = *in.Offset
	}
	if in.Limit != nil && *in.Limit < limit {
		limit = *in.Limit
	}

	var src io.Reader
	if root.Name == RootMemory && fi.Size() <= int64(t.s.editMaxBytes()) {
		// A memory file is read whole so that its exact content can be
		// recorded for edit; memory files are small by construction.
		data, err := t.readAll(root, rel)
		if err != nil {
			return Result{}, err
		}
		if looksBinary(data[:min(len(data), 8<<10)]) {
			return Result{}, fmt.Errorf("read: %s is a binary file", shown)
		}
		t.s.state.record(rel, data)
		src = bytes.NewReader(data)
	} else {
		f, err := t.s.ro.Open(root, rel)
		if err != nil {
			return Result{}, fmt.Errorf("read: %w", err)
		}
		defer f.Close()
		br := bufio.NewReaderSize(f, 64<<10)
		sample, err := br.Peek(8 << 10)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return Result{}, fmt.Errorf("read %s: %w", shown, err)
		}
		if looksBinary(sample) {
			return Result{}, fmt.Errorf("read: %s is a binary file", shown)
		}
		src = br
	}
	out, err := t.render(ctx, src, offset, limit)
	if err != nil {
		return Result{}, fmt.Errorf("read %s: %w", shown, err)
	}
	t.s.show("read", root, shown, withoutLineNumbers(out))
	return Result{Content: out}, nil
}

// readAll reads a whole (small) file through the read-only root.
func (t *readTool) readAll(root sandbox.NamedRoot, rel string) ([]byte, error) {
	f, err := t.s.ro.Open(root, rel)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(t.s.editMaxBytes())+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root.Display(rel), err)
	}
	return data, nil
}

// render formats lines offset..offset+limit-1 of src like cat -n, within the
// line-length and byte caps, and ends with a note on whatever was cut.
func (t *readTool) render(ctx context.Context, src io.Reader, offset, limit int) (string, error) {
	l := t.s.limits
	// Hold a few bytes per character so that multibyte text is not cut by
	// the byte bound before the character bound.
	lr := newLineReader(src, l.ReadMaxLineChars*4)
	var b strings.Builder
	lineNo, shownLines, cutLines := 0, 0, 0
	stoppedAt := 0 // first line not shown because of the byte cap
	more := false
	for {
		if lineNo%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		line, cut, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		lineNo++
		if lineNo < offset {
			continue
		}
		if shownLines == limit {
			more = true
			break
		}
		text, dropped := truncateRunes(line, l.ReadMaxLineChars)
		suffix := "\n"
		if cut || dropped > 0 {
			cutLines++
			suffix = "…\n"
		}
		entry := strconv.Itoa(lineNo)
		entry = strings.Repeat(" ", max(0, 6-len(entry))) + entry + "\t" + string(text) + suffix
		if b.Len()+len(entry) > l.ReadMaxBytes {
			stoppedAt = lineNo
			break
		}
		b.WriteString(entry)
		shownLines++
	}
	switch {
	case lineNo == 0:
		return "(empty file)", nil
	case shownLines == 0 && stoppedAt == 0:
		return "", fmt.Errorf("offset %d is past the end of the file, which has %d lines", offset, lineNo)
	}
	var notes []string
	if cutLines > 0 {
		notes = append(notes, fmt.Sprintf("%d line(s) longer than %d characters were cut", cutLines, l.ReadMaxLineChars))
	}
	switch {
	case stoppedAt > 0:
		notes = append(notes, fmt.Sprintf("output reached the %d KiB cap; continue with offset=%d", l.ReadMaxBytes>>10, stoppedAt))
	case more:
		notes = append(notes, fmt.Sprintf("more lines follow; continue with offset=%d", offset+shownLines))
	}
	if len(notes) > 0 {
		b.WriteString("[" + strings.Join(notes, "; ") + "]\n")
	}
	return b.String(), nil
}

// withoutLineNumbers is a read's output as the file says it: the numbers
// render puts before each line are not the file's values.
func withoutLineNumbers(out string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if num, text, ok := strings.Cut(line, "\t"); ok && strings.TrimSpace(num) != "" && strings.Trim(num, " 0123456789") == "" {
			line = text
		} else if strings.HasPrefix(line, "[") {
			continue // a note on what was cut, with its counts
		}
		b.WriteString(line)
	}
	return b.String()
}
