package audit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Log returns up to limit entries, newest first, each with its files and
// full diff (limit <= 0 means all). Everything comes from one git process,
// however many entries there are.
func (h *History) Log(ctx context.Context, limit int) ([]Entry, error) {
	args := []string{"log"}
	if limit > 0 {
		args = append(args, "-n", strconv.Itoa(limit))
	}
	out, err := h.logFull(ctx, append(args, "HEAD", "--")...)
	if err != nil {
		return nil, fmt.Errorf("audit: log: %w", err)
	}
	return out, nil
}

// logFull runs git log with files and patches and turns each commit into
// an Entry. A history with nothing recorded yet is an empty log.
func (h *History) logFull(ctx context.Context, args ...string) ([]Entry, error) {
	full := append([]string{args[0], "-z", "--root", "--no-renames", "--no-ext-diff", "--raw", "--numstat", "-p", logFullFormat}, args[1:]...)
	out, err := h.git(ctx, nil, full...)
	if err != nil {
		if exitCode(err) > 0 {
			if ok, herr := h.hasHead(ctx); herr == nil && !ok {
				return nil, nil
			}
		}
		return nil, err
	}
	commits, err := parseLogFull(out)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(commits))
	for _, c := range commits {
		e := newEntry(c.info)
		e.Files, e.Diff = c.files, c.patch
		if e.Files == nil {
			e.Files = []FileStat{}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// Show returns one entry by dream id (or "hand-..." id), a unique prefix of
// one, or a unique prefix of a commit sha. When several entries share an
// exact id, the newest wins.
func (h *History) Show(ctx context.Context, id string) (Entry, error) {
	ci, err := h.resolve(ctx, id)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: show: %w", err)
	}
	e, err := h.entry(ctx, ci)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: show %s: %w", id, err)
	}
	return e, nil
}

// FileAt returns the content of a memory file (slash path relative to the
// memory dir) as recorded at rev: an entry id, a commit sha or prefix, or
// any git revision such as "<sha>^". A memory a dream deleted stays readable
// at the revision before that dream.
func (h *History) FileAt(ctx context.Context, rev, path string) ([]byte, error) {
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(path)))
	if path == "" || clean != path || !filepath.IsLocal(filepath.FromSlash(path)) {
		return nil, fmt.Errorf("audit: file at %s: invalid path %q (want a clean path relative to the memory dir)", rev, path)
	}
	sha, err := h.commitOf(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("audit: file at: %w", err)
	}
	data, err := h.git(ctx, nil, "cat-file", "blob", sha+":"+path)
	if err != nil {
		if exitCode(err) > 0 {
			return nil, fmt.Errorf("audit: %s at %s: %w", path, short(sha), fs.ErrNotExist)
		}
		return nil, fmt.Errorf("audit: file at: %w", err)
	}
	return data, nil
}

// commitOf turns an entry id or any git revision into a full commit sha.
func (h *History) commitOf(ctx context.Context, rev string) (string, error) {
	if isFullSHA(rev) {
		// A commit named in full (provenance reads one file at each of
		// 50 entries) needs no scan of the whole history to resolve.
		out, err := h.git(ctx, nil, "rev-parse", "--verify", "-q", rev+"^{commit}")
		if err == nil {
			return strings.TrimSpace(string(out)), nil
		}
		if exitCode(err) <= 0 {
			return "", err
		}
	}
	if ci, err := h.resolve(ctx, rev); err == nil {
		return ci.sha, nil
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, " \t\n:") {
		return "", fmt.Errorf("%w: %q", ErrNotFound, rev)
	}
	out, err := h.git(ctx, nil, "rev-parse", "--verify", "-q", rev+"^{commit}")
	if err != nil {
		if exitCode(err) > 0 {
			return "", fmt.Errorf("%w: %q", ErrNotFound, rev)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// isFullSHA reports whether s is a whole commit id (40 hex digits).
func isFullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// hasHead reports whether anything was ever recorded.
func (h *History) hasHead(ctx context.Context) (bool, error) {
	_, err := h.git(ctx, nil, "rev-parse", "--verify", "-q", "HEAD")
	if err == nil {
		return true, nil
	}
	if exitCode(err) > 0 {
		return false, nil
	}
	return false, err
}

// commits lists commits newest first, without files or diffs.
func (h *History) commits(ctx context.Context, limit int) ([]commitInfo, error) {
	ok, err := h.hasHead(ctx)
	if err != nil || !ok {
		return nil, err
	}
	args := []string{"log", "-z", logFormat}
	if limit > 0 {
		args = append(args, "-n", strconv.Itoa(limit))
	}
	out, err := h.git(ctx, nil, append(args, "HEAD", "--")...)
	if err != nil {
		return nil, err
	}
	return parseLog(out)
}

// resolve finds the commit for an id: exact entry id (newest), else a
// unique prefix of an entry id or commit sha.
func (h *History) resolve(ctx context.Context, id string) (commitInfo, error) {
	if id == "" {
		return commitInfo{}, fmt.Errorf("%w: empty id", ErrNotFound)
	}
	all, err := h.commits(ctx, 0)
	if err != nil {
		return commitInfo{}, err
	}
	for _, ci := range all {
		if entryID(ci) == id {
			return ci, nil
		}
	}
	var match []commitInfo
	for _, ci := range all {
		if strings.HasPrefix(entryID(ci), id) || strings.HasPrefix(ci.sha, strings.ToLower(id)) {
			match = append(match, ci)
		}
	}
	switch len(match) {
	case 0:
		return commitInfo{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	case 1:
		return match[0], nil
	}
	names := make([]string, 0, len(match))
	for _, ci := range match {
		names = append(names, entryID(ci))
	}
	return commitInfo{}, fmt.Errorf("id %q is ambiguous: matches %s", id, strings.Join(names, ", "))
}

func entryID(ci commitInfo) string {
	if id := ci.trailers["Dream-Id"]; id != "" {
		return id
	}
	return "hand-" + short(ci.sha)
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

// newEntry is an entry's identity from its commit, without files or diff.
func newEntry(ci commitInfo) Entry {
	e := Entry{ID: entryID(ci), Commit: ci.sha, Kind: ci.trailers["Dream-Kind"], Status: ci.trailers["Dream-Status"], StartedAt: ci.time, Units: ci.units,
		Undoes: ci.trailers[undoesTrailer]}
	if e.Kind == "" {
		e.Kind = KindHand
	}
	if t, err := time.Parse(time.RFC3339, ci.trailers["Dream-Started-At"]); err == nil {
		e.StartedAt = t
	}
	return e
}

// entry completes a commit with its files and diff against its parent (the
// empty tree for the first commit), in one git process.
func (h *History) entry(ctx context.Context, ci commitInfo) (Entry, error) {
	es, err := h.logFull(ctx, "log", "-n", "1", ci.sha, "--")
	if err != nil {
		return Entry{}, err
	}
	if len(es) != 1 {
		return Entry{}, fmt.Errorf("git log %s: %d commits", short(ci.sha), len(es))
	}
	return es[0], nil
}

// HeadFile is path as the history last recorded it, read by one git
// process without resolving entry ids: fs.ErrNotExist when HEAD does not
// hold it (or nothing is recorded yet). The pipeline reads a changed
// file's "before" from here when the file was edited during the dream:
// RecordHandEdits recorded the memory just before the dream began.
func (h *History) HeadFile(ctx context.Context, path string) ([]byte, error) {
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(path)))
	if path == "" || clean != path || !filepath.IsLocal(filepath.FromSlash(path)) {
		return nil, fmt.Errorf("audit: head file: invalid path %q (want a clean path relative to the memory dir)", path)
	}
	data, err := h.git(ctx, nil, "cat-file", "blob", "HEAD:"+path)
	if err != nil {
		if exitCode(err) > 0 {
			return nil, fmt.Errorf("audit: %s at HEAD: %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("audit: head file: %w", err)
	}
	return data, nil
}
