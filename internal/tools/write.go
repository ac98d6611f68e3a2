package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/sandbox"
)

// writeTool creates or replaces a memory file. It is one of the two tools
// that can change anything, so every check is repeated at execution.
type writeTool struct{ s *Set }

// writeInput is write's input; its tags are also its schema (see inputSpec).
type writeInput struct {
	FilePath string     `json:"file_path" desc:"Path of the memory file: absolute, or relative to the memory directory"`
	Content  *string    `json:"content" desc:"The complete new content of the file"`
	Evidence *citeInput `json:"evidence,omitempty" desc:"When the write changes a specific value of the file (a number, date, version, port, path, name, URL, or do/don't): the transcript or repository file you were shown that states the new value, and its words"`
}

var writeSpec = mustSpec[writeInput]()

func (t *writeTool) Name() string { return "write" }

func (t *writeTool) Description() string {
	return fmt.Sprintf("Create or replace a file in the memory directory %s (and nowhere else). "+
		"file_path is absolute, or relative to the memory directory; missing directories are created. "+
		"content is the whole new file, at most %d KiB, never empty. Writing a file's current content is refused as a no-op. "+
		"Content that contains a credential (API key, token, password, private key) is refused: record where a secret lives, never its value. "+
		"The lock file %s, .git and names starting with %s are off-limits; a name must be plain text "+
		"(valid UTF-8, no newlines or other control characters, no directory ending in .md) and never a credential. "+
		"Prefer edit for changes to an existing file. %s",
		t.s.mem.DisplayDir(), t.s.limits.WriteMaxBytes>>10, sandbox.LockFileName, fsutil.TempPrefix, evidenceRule)
}

func (t *writeTool) Schema() json.RawMessage { return writeSpec().schema }

func (t *writeTool) parse(input json.RawMessage) (rel string, content []byte, err error) {
	var in writeInput
	if err := decode("write", input, &in, writeSpec()); err != nil {
		return "", nil, err
	}
	if *in.Content == "" {
		return "", nil, fmt.Errorf("write: content is empty; memory files are never emptied — to retire a memory, remove its pointer from the index instead")
	}
	if max := t.s.limits.WriteMaxBytes; len(*in.Content) > max {
		return "", nil, fmt.Errorf("write: content is %d bytes, over the %d-byte limit for a memory file; keep memory files short and split by topic", len(*in.Content), max)
	}
	rel, err = t.s.mem.Resolve(in.FilePath)
	if err != nil {
		return "", nil, fmt.Errorf("write: %w", err)
	}
	if err := t.s.checkScope(rel); err != nil {
		return "", nil, fmt.Errorf("write refused: %w", err)
	}
	if err := sandbox.CheckSecretName(rel); err != nil {
		return "", nil, fmt.Errorf("write refused: %w", err)
	}
	return rel, []byte(*in.Content), nil
}

func (t *writeTool) Validate(input json.RawMessage) error {
	_, _, err := t.parse(input)
	return err
}

func (t *writeTool) Execute(ctx context.Context, input json.RawMessage) (Result, error) {
	rel, content, err := t.parse(input)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := t.s.checkNewPath("write", rel); err != nil {
		return Result{}, err
	}
	old, existed, err := readExisting(t.s.mem, rel)
	if err != nil {
		return Result{}, fmt.Errorf("write: %w", err)
	}
	if existed && bytes.Equal(old, content) {
		return Result{}, fmt.Errorf("write: %s already has exactly this content; nothing to do", t.s.mem.Display(rel))
	}
	if err := sandbox.CheckSecretAdded(string(old), string(content)); err != nil {
		return Result{}, fmt.Errorf("write refused: %w", err)
	}
	if err := t.s.cite("write", rel, input); err != nil {
		return Result{}, err
	}
	if err := t.s.mem.WriteFile(rel, content); err != nil {
		return Result{}, fmt.Errorf("write: %w", err)
	}
	// The model now knows the file's exact content, so edit may follow.
	t.s.state.record(rel, content)
	msg := fmt.Sprintf("Created %s (%d bytes).", t.s.mem.Display(rel), len(content))
	if existed {
		msg = fmt.Sprintf("Replaced %s (%d bytes, was %d).", t.s.mem.Display(rel), len(content), len(old))
	}
	return Result{Content: msg, Touched: rel}, nil
}

// readExisting returns a memory file's content and whether it exists; a
// missing file is not an error. Files too large to be memory are refused
// rather than loaded.
func readExisting(mem *sandbox.Memory, rel string) ([]byte, bool, error) {
	fi, err := mem.Stat(rel)
	if err != nil {
		if isNotExist(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if fi.IsDir() {
		return nil, false, fmt.Errorf("%s is a directory, not a file; write to a file inside it or choose another name", mem.Display(rel))
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file (%v); it cannot hold memory, choose another name", mem.Display(rel), fi.Mode().Type())
	}
	data, err := mem.ReadFile(rel)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}
