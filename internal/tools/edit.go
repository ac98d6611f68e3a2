package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dreamkit/dream/internal/sandbox"
)

// editTool replaces an exact string in a memory file the model has read.
// Requiring the read, and that the file has not changed since, means the
// model never patches text it has not seen, and never overwrites a change
// the user made while the dream was running.
type editTool struct{ s *Set }

// editInput is edit's input; its tags are also its schema (see inputSpec).
type editInput struct {
	FilePath   string     `json:"file_path" desc:"Path of the memory file: absolute, or relative to the memory directory"`
	OldString  *string    `json:"old_string" desc:"Exact text to replace"`
	NewString  *string    `json:"new_string" desc:"Text to put in its place"`
	ReplaceAll bool       `json:"replace_all,omitempty" default:"false" desc:"Replace every occurrence instead of exactly one"`
	Evidence   *citeInput `json:"evidence,omitempty" desc:"When the edit changes a specific value (a number, date, version, port, path, name, URL, or do/don't): the transcript or repository file you were shown that states the new value, and its words"`
}

var editSpec = mustSpec[editInput]()

func (t *editTool) Name() string { return "edit" }

func (t *editTool) Description() string {
	return fmt.Sprintf("Replace text in a file in the memory directory %s (and nowhere else). "+
		"Read the file with read first; the edit is refused if the file changed since. "+
		"old_string must match the file exactly (whitespace included) and occur once, unless replace_all is true; "+
		"new_string must differ from it. The result may be at most %d KiB and must not add a credential. "+
		"file_path is absolute, or relative to the memory directory. "+
		"%s",
		t.s.mem.DisplayDir(), t.s.limits.WriteMaxBytes>>10, evidenceRule)
}

func (t *editTool) Schema() json.RawMessage { return editSpec().schema }

type editCall struct {
	rel        string
	old, new   string
	replaceAll bool
}

func (t *editTool) parse(input json.RawMessage) (*editCall, error) {
	var in editInput
	if err := decode("edit", input, &in, editSpec()); err != nil {
		return nil, err
	}
	if *in.OldString == "" {
		return nil, fmt.Errorf("edit: old_string is empty; quote the exact text to replace (use write to create a file)")
	}
	if *in.OldString == *in.NewString {
		return nil, fmt.Errorf("edit: old_string and new_string are the same; the edit would change nothing")
	}
	rel, err := t.s.mem.Resolve(in.FilePath)
	if err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	if err := t.s.checkScope(rel); err != nil {
		return nil, fmt.Errorf("edit refused: %w", err)
	}
	if err := sandbox.CheckSecretName(rel); err != nil {
		return nil, fmt.Errorf("edit refused: %w", err)
	}
	return &editCall{rel: rel, old: *in.OldString, new: *in.NewString, replaceAll: in.ReplaceAll}, nil
}

func (t *editTool) Validate(input json.RawMessage) error {
	_, err := t.parse(input)
	return err
}

func (t *editTool) Execute(ctx context.Context, input json.RawMessage) (Result, error) {
	c, err := t.parse(input)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := t.s.checkSpelling("edit", c.rel); err != nil {
		return Result{}, err
	}
	shown := t.s.mem.Display(c.rel)
	fi, err := t.s.mem.Stat(c.rel)
	if err != nil {
		if isNotExist(err) {
			return Result{}, fmt.Errorf("edit: %s does not exist%s; use write to create it", shown, t.s.probablyMeant(c.rel))
		}
		return Result{}, fmt.Errorf("edit: %w", err)
	}
	if fi.IsDir() {
		return Result{}, fmt.Errorf("edit: %s is a directory, not a file", shown)
	}
	if !fi.Mode().IsRegular() {
		return Result{}, fmt.Errorf("edit: %s is not a regular file (%v) and cannot be edited", shown, fi.Mode().Type())
	}
	if fi.Size() > int64(t.s.editMaxBytes()) {
		return Result{}, fmt.Errorf("edit: %s is %d bytes, too large to edit as memory", shown, fi.Size())
	}
	data, err := t.s.mem.ReadFile(c.rel)
	if err != nil {
		return Result{}, fmt.Errorf("edit: %w", err)
	}
	switch seen, unchanged := t.s.state.check(c.rel, data); {
	case !seen:
		return Result{}, fmt.Errorf("edit: %s has not been read in this session; read it with the read tool first", shown)
	case !unchanged:
		return Result{}, fmt.Errorf("edit: %s has changed on disk since it was read; read it again before editing", shown)
	}
	before := string(data)
	after, n, err := applyEdit(before, c.old, c.new, c.replaceAll)
	if err != nil {
		return Result{}, fmt.Errorf("edit %s: %w", shown, err)
	}
	if after == "" {
		return Result{}, fmt.Errorf("edit: the edit would leave %s empty; memory files are never emptied — remove its pointer from the index instead", shown)
	}
	if max := t.s.limits.WriteMaxBytes; len(after) > max && len(after) > len(before) {
		return Result{}, fmt.Errorf("edit: the result would be %d bytes, over the %d-byte limit for a memory file", len(after), max)
	}
	if err := sandbox.CheckSecretAdded(before, after); err != nil {
		return Result{}, fmt.Errorf("edit refused: %w", err)
	}
	if err := t.s.cite("edit", c.rel, input); err != nil {
		return Result{}, err
	}
	if err := t.s.mem.WriteFile(c.rel, []byte(after)); err != nil {
		return Result{}, fmt.Errorf("edit: %w", err)
	}
	t.s.state.record(c.rel, []byte(after))
	return Result{Content: fmt.Sprintf("Edited %s: replaced %d occurrence(s).", shown, n), Touched: c.rel}, nil
}

// Errors of applyEdit, distinguishable for tests and callers.
var (
	errEditNoop      = errors.New("old_string and new_string are the same; the edit would change nothing")
	errEditEmptyOld  = errors.New("old_string is empty")
	errEditNotFound  = errors.New("old_string was not found")
	errEditNotUnique = errors.New("old_string is not unique")
)

// applyEdit replaces old with new in content: exactly one occurrence, or all
// of them with replaceAll. It returns the result and how many were replaced.
func applyEdit(content, old, new string, replaceAll bool) (string, int, error) {
	if old == "" {
		return "", 0, errEditEmptyOld
	}
	if old == new {
		return "", 0, errEditNoop
	}
	n := strings.Count(content, old)
	switch {
	case n == 0:
		hint := " (it must match exactly, including whitespace and indentation; read the file again to copy it)"
		if strings.Contains(content, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
			hint = " (the file uses CRLF line endings)"
		}
		return "", 0, fmt.Errorf("%w%s", errEditNotFound, hint)
	case n > 1 && !replaceAll:
		return "", 0, fmt.Errorf("%w: it occurs %d times; include more surrounding text to pick one, or set replace_all", errEditNotUnique, n)
	}
	if replaceAll {
		return strings.ReplaceAll(content, old, new), n, nil
	}
	return strings.Replace(content, old, new, 1), 1, nil
}
