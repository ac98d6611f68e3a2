package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/dreamkit/dream/internal/sandbox"
)

// lsTool lists one directory.
type lsTool struct{ s *Set }

// lsInput is ls's input; its tags are also its schema (see inputSpec).
type lsInput struct {
	Path string `json:"path,omitempty" desc:"Directory to list; default the repository"`
}

var lsSpec = mustSpec[lsInput]()

func (t *lsTool) Name() string { return "ls" }

func (t *lsTool) Description() string {
	return fmt.Sprintf("List a directory: one entry per line, directories with a trailing /, files with their size in bytes, "+
		"symbolic links with a trailing @. path is absolute, or relative to the repository (default the repository). "+
		"At most %d entries are shown; use glob to find files deeper down.", t.s.limits.LsMax)
}

func (t *lsTool) Schema() json.RawMessage { return lsSpec().schema }

func (t *lsTool) parse(input json.RawMessage) (sandbox.NamedRoot, string, error) {
	var in lsInput
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	if err := decode("ls", input, &in, lsSpec()); err != nil {
		return sandbox.NamedRoot{}, "", err
	}
	p := in.Path
	if p == "" {
		p = "."
	}
	root, rel, err := t.s.ro.Resolve(p)
	if err != nil {
		return root, "", fmt.Errorf("ls: %w", err)
	}
	return root, rel, nil
}

func (t *lsTool) Validate(input json.RawMessage) error {
	_, _, err := t.parse(input)
	return err
}

func (t *lsTool) Execute(ctx context.Context, input json.RawMessage) (Result, error) {
	root, rel, err := t.parse(input)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	fsys, err := t.s.ro.FS(root)
	if err != nil {
		return Result{}, fmt.Errorf("ls: %w", err)
	}
	shown := root.Display(rel)
	entries, err := fs.ReadDir(fsys, rel)
	if err != nil {
		if fi, serr := fs.Stat(fsys, rel); serr == nil && !fi.IsDir() {
			return Result{}, fmt.Errorf("ls: %s is a file, not a directory; use read to see it", shown)
		}
		return Result{}, fmt.Errorf("ls: %s: %w", shown, err)
	}
	var b, ev strings.Builder // ev: the entries' paths, as evidence (no sizes)
	b.WriteString(sandbox.SafeName(shown) + "/\n")
	if n := sandbox.CredentialsSkipped(fsys); n > 0 {
		b.WriteString("[" + credentialNote(n) + "]\n")
	}
	if len(entries) == 0 {
		b.WriteString("(empty directory)\n")
	}
	max := t.s.limits.LsMax
	for i, e := range entries { // fs.ReadDir sorts by name
		if i == max {
			fmt.Fprintf(&b, "[… %d more entries not shown (%d in total); use glob to narrow]\n", len(entries)-max, len(entries))
			break
		}
		// A name with a newline or invalid UTF-8 is quoted, so that one
		// entry stays one line and the model sees exactly what is there.
		name := sandbox.SafeName(e.Name())
		ev.WriteString(sandbox.SafeName(root.Display(path.Join(rel, e.Name()))) + "\n")
		switch {
		case e.IsDir():
			b.WriteString("  " + name + "/\n")
		case e.Type()&fs.ModeSymlink != 0:
			b.WriteString("  " + name + "@\n")
		case !e.Type().IsRegular():
			fmt.Fprintf(&b, "  %s (%s, not readable)\n", name, specialKind(e.Type()))
		default:
			size := int64(-1)
			if info, err := e.Info(); err == nil {
				size = info.Size()
			}
			fmt.Fprintf(&b, "  %s (%d bytes)\n", name, size)
		}
	}
	t.s.show("ls", root, shown, ev.String())
	return Result{Content: b.String()}, nil
}

// specialKind names a non-regular, non-directory entry for a listing.
func specialKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
