package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/journal"
)

// A history's scope is the part of the memory dir it records. By default
// that is everything but dream's own files and nested repositories; a host
// whose memory dir is a whole workspace (nanobot's holds sessions/*.jsonl,
// memory/history.jsonl and the agent's own git store beside the three
// memory files) names the memory files, so that conversations and logs
// never enter the history, and so are never pushed to a sync remote.
//
// The scope is a file beside the repository, <stateDir>/audit/<memkey>.scope,
// written by whoever knows the host layout (SetScope) and read by every
// Open: the rule lives in one place, and `dream log`, `undo`, sync and the
// pipeline all record under it without being told.

// scopeFile is the scope's path for a memory dir.
func scopeFile(stateDir, memoryDir string) (string, error) {
	key, err := journal.MemKey(memoryDir)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(abs, "audit", key+".scope"), nil
}

// SetScope limits what the history of memoryDir records to paths (slash
// paths relative to the memory dir; one ending in "/" names a directory and
// everything under it). Nil or empty records the whole memory dir again.
// Files already recorded out of scope are dropped from the next record.
func SetScope(stateDir, memoryDir string, paths []string) error {
	if stateDir == "" {
		return errors.New("audit: scope: state dir is empty")
	}
	p, err := scopeFile(stateDir, memoryDir)
	if err != nil {
		return fmt.Errorf("audit: scope: %w", err)
	}
	if len(paths) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("audit: scope: %w", err)
		}
		return nil
	}
	var body bytes.Buffer
	body.WriteString("# written by dream: the only paths the audit history records\n")
	for _, e := range paths {
		e, err := cleanScopeEntry(e)
		if err != nil {
			return fmt.Errorf("audit: scope: %w", err)
		}
		body.WriteString(e + "\n")
	}
	if cur, err := os.ReadFile(p); err == nil && bytes.Equal(cur, body.Bytes()) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("audit: scope: %w", err)
	}
	if err := fsutil.WriteFileAtomic(p, body.Bytes(), 0o600, true); err != nil {
		return fmt.Errorf("audit: scope: %w", err)
	}
	return nil
}

// cleanScopeEntry accepts a local slash path, keeping a trailing "/".
func cleanScopeEntry(e string) (string, error) {
	dir := strings.HasSuffix(e, "/")
	c := path.Clean(strings.TrimSuffix(e, "/"))
	if e == "" || strings.ContainsAny(e, "\n\r") || !filepath.IsLocal(filepath.FromSlash(c)) || c == "." {
		return "", fmt.Errorf("bad path %q", e)
	}
	if dir {
		c += "/"
	}
	return c, nil
}

// readScope reads the scope of a history; nil when there is none.
func readScope(stateDir, memoryDir string) ([]string, error) {
	p, err := scopeFile(stateDir, memoryDir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := cleanScopeEntry(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// inScope reports whether the history records rel.
// InScope reports whether the history records rel (slash-separated,
// relative to the memory dir). A sync pull lands only paths in scope, so a
// narrowed scope's dropped files are never deleted from, or written to, a
// peer's memory dir.
func (h *History) InScope(rel string) bool { return h.inScope(rel) }

func (h *History) inScope(rel string) bool {
	if len(h.scope) == 0 {
		return true
	}
	for _, e := range h.scope {
		if d, ok := strings.CutSuffix(e, "/"); ok {
			if strings.HasPrefix(rel, d+"/") {
				return true
			}
		} else if rel == e {
			return true
		}
	}
	return false
}

// pathspec is what a whole-dir record looks at: the scope's paths, or the
// whole dir, and never dream's own files.
func (h *History) pathspec() []string {
	if len(h.scope) == 0 {
		return append([]string(nil), addPathspec...)
	}
	var out []string
	for _, e := range h.scope {
		out = append(out, ":(top,literal)"+strings.TrimSuffix(e, "/"))
	}
	return append(out, addPathspec[1:]...)
}
