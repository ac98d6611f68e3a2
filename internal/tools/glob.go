package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dreamkit/dream/internal/sandbox"
)

// globTool finds files by name pattern, newest first, which is usually what
// a dream wants: the transcripts and memories touched most recently.
type globTool struct{ s *Set }

// globInput is glob's input; its tags are also its schema (see inputSpec).
type globInput struct {
	Pattern string `json:"pattern" desc:"Glob pattern, relative to path unless absolute"`
	Path    string `json:"path,omitempty" desc:"Directory to search; default the repository"`
}

var globSpec = mustSpec[globInput]()

func (t *globTool) Name() string { return "glob" }

func (t *globTool) Description() string {
	return fmt.Sprintf("Find files by glob pattern (** matches any number of directories, {a,b} alternatives), "+
		"e.g. \"**/*.go\" or \"*.md\". path is the directory to search (absolute, or relative to the repository; default the repository); "+
		"an absolute pattern may carry its own directory. .git and .gitignore'd files in the repository are skipped. "+
		"Returns absolute paths, most recently modified first, at most %d (the rest are counted).", t.s.limits.GlobMax)
}

func (t *globTool) Schema() json.RawMessage { return globSpec().schema }

type globCall struct {
	pattern string
	root    sandbox.NamedRoot
	rel     string
}

func (t *globTool) parse(input json.RawMessage) (*globCall, error) {
	var in globInput
	if err := decode("glob", input, &in, globSpec()); err != nil {
		return nil, err
	}
	if in.Pattern == "" {
		return nil, fmt.Errorf("glob: pattern is empty")
	}
	base, pattern := in.Path, filepath.ToSlash(in.Pattern)
	if filepath.IsAbs(in.Pattern) {
		if in.Path != "" {
			return nil, fmt.Errorf("glob: give either an absolute pattern or a path, not both")
		}
		dir, rest := doublestar.SplitPattern(pattern)
		base, pattern = filepath.FromSlash(dir), rest
	}
	pattern = strings.TrimPrefix(pattern, "./")
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("glob: %q is not a valid glob pattern", in.Pattern)
	}
	if base == "" {
		base = "."
	}
	root, rel, err := t.s.ro.Resolve(base)
	if err != nil {
		return nil, fmt.Errorf("glob: %w", err)
	}
	return &globCall{pattern: pattern, root: root, rel: rel}, nil
}

func (t *globTool) Validate(input json.RawMessage) error {
	_, err := t.parse(input)
	return err
}

type globHit struct {
	shown   string
	modTime time.Time
}

func (t *globTool) Execute(ctx context.Context, input json.RawMessage) (Result, error) {
	c, err := t.parse(input)
	if err != nil {
		return Result{}, err
	}
	fi, err := t.s.ro.Stat(c.root, c.rel)
	if err != nil {
		return Result{}, fmt.Errorf("glob: %w", err)
	}
	if !fi.IsDir() {
		return Result{}, fmt.Errorf("glob: %s is not a directory", c.root.Display(c.rel))
	}
	fsys, err := t.s.ro.FS(c.root)
	if err != nil {
		return Result{}, fmt.Errorf("glob: %w", err)
	}
	var hits []globHit
	err = walkTree(ctx, fsys, c.rel, c.root.Name == RootRepo, func(rel string, d fs.DirEntry) error {
		sub := rel
		if c.rel != "." {
			sub = strings.TrimPrefix(rel, c.rel+"/")
		}
		if ok, _ := doublestar.Match(c.pattern, sub); !ok {
			return nil
		}
		h := globHit{shown: sandbox.SafeName(c.root.Display(rel))}
		if info, err := d.Info(); err == nil {
			h.modTime = info.ModTime()
		}
		hits = append(hits, h)
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("glob: %w", err)
	}
	skipped := sandbox.CredentialsSkipped(fsys)
	if len(hits) == 0 {
		msg := fmt.Sprintf("No files match %q in %s.", c.pattern, c.root.Display(c.rel))
		if skipped > 0 {
			msg += " (" + credentialNote(skipped) + ")"
		}
		return Result{Content: msg}, nil
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].modTime.Equal(hits[j].modTime) {
			return hits[i].modTime.After(hits[j].modTime)
		}
		return hits[i].shown < hits[j].shown
	})
	var b strings.Builder
	max := t.s.limits.GlobMax
	for i, h := range hits {
		if i == max {
			break
		}
		b.WriteString(h.shown + "\n")
	}
	if len(hits) > max {
		fmt.Fprintf(&b, "[… %d more files not shown (%d in total); narrow the pattern or path]\n", len(hits)-max, len(hits))
	}
	if skipped > 0 {
		b.WriteString("[" + credentialNote(skipped) + "]\n")
	}
	var ev strings.Builder // the paths alone, as evidence (no counts)
	for i := 0; i < len(hits) && i < max; i++ {
		ev.WriteString(hits[i].shown + "\n")
	}
	t.s.show("glob", c.root, c.root.Display(c.rel), ev.String())
	return Result{Content: b.String()}, nil
}
