package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Rule says which files below a sessions directory are the sessions an
// agent itself counts, and how the agent names the current one. Each host
// layout (internal/host) builds one from that agent's own conventions, so
// that the session gate opens on the sessions the user had with the agent,
// not on sub-agent transcripts, exec runs or internal jobs that merely
// share the folder.
//
// The zero Rule (or a nil *Rule) is the generic one: every *.jsonl at any
// depth outside directories named "subagents", the current session matched
// as ID.jsonl, *_ID.jsonl or *-ID.jsonl.
//
// The scan calls a Rule's functions from several goroutines at once (it
// lists directories and stats the files of a big one in parallel), so they
// must be safe for concurrent use.
type Rule struct {
	// Match reports whether the regular file name, depth directories below
	// the sessions root (0: directly in it), is a session, and returns the
	// session id the file carries in the form Same compares. Nil means the
	// generic *.jsonl match with the whole stem as id.
	Match func(depth int, name string) (id string, ok bool)
	// Descend reports whether the directory name, depth directories below
	// the root, is entered. Nil means every directory but "subagents".
	Descend func(depth int, name string) bool
	// Keep, when set, is asked about a file that Match accepted and that
	// was modified after the cutoff: it receives the file's first line (at
	// most HeadLimit bytes) and decides from the agent's own metadata
	// (Codex's session_meta.source, say). Only candidates are read, so the
	// scan stays one stat per file plus one short read per new session.
	Keep func(firstLine []byte) bool
	// Alias, when set, names the file that supersedes name in the same
	// directory (Gemini migrates session-x.json to session-x.jsonl and
	// keeps both): a file whose alias exists is not counted, so a migrated
	// session counts once.
	Alias func(name string) string
	// Same reports whether the session with id is the current one, given
	// the id the agent hands its hooks. Nil means the generic suffix match.
	Same func(id, current string) bool
}

// HeadLimit bounds how much of a file Rule.Keep is shown. Codex writes its
// base instructions into the first line, which can be tens of kilobytes.
const HeadLimit = 256 << 10

func (r *Rule) match(depth int, name string) (string, bool) {
	if r == nil || r.Match == nil {
		stem, ok := strings.CutSuffix(name, transcriptExt)
		return stem, ok
	}
	return r.Match(depth, name)
}

func (r *Rule) descend(depth int, name string) bool {
	if r == nil || r.Descend == nil {
		return name != subagentsDir
	}
	return r.Descend(depth, name)
}

func (r *Rule) same(id, current string) bool {
	if current == "" {
		return false
	}
	if r == nil || r.Same == nil {
		return genericSame(id, current)
	}
	return r.Same(id, current)
}

// genericSame is the historical exclusion: ID, *_ID (channel-prefixed keys)
// and *-ID (Codex rollout-<timestamp>-<id>).
func genericSame(id, current string) bool {
	rest, ok := strings.CutSuffix(id, current)
	if !ok {
		return false
	}
	return rest == "" || strings.HasSuffix(rest, "_") || strings.HasSuffix(rest, "-")
}

// shadowed reports whether name in dir has a live alias.
func (r *Rule) shadowed(dir, name string) bool {
	if r == nil || r.Alias == nil {
		return false
	}
	alias := r.Alias(name)
	if alias == "" || alias == name {
		return false
	}
	info, err := os.Lstat(filepath.Join(dir, alias))
	return err == nil && info.Mode().IsRegular()
}

// keep asks Rule.Keep about the file name in dir. A file that cannot be
// read does not count: undercounting only postpones a dream. The path is
// only built when there is a Keep to ask.
func (r *Rule) keep(dir, name string) bool {
	if r == nil || r.Keep == nil {
		return true
	}
	line, ok := FirstLine(filepath.Join(dir, name))
	if !ok {
		return false
	}
	return r.Keep(line)
}

// FirstLine returns the first line of the regular file at path without its
// newline, at most HeadLimit bytes; a symbolic link is never followed.
func FirstLine(path string) ([]byte, bool) {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	// Read in growing chunks until the first newline: most first lines are
	// short, and a long one (Codex's) is read once, without a second copy.
	buf := make([]byte, 0, 8<<10)
	for len(buf) < HeadLimit {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(cap(buf), HeadLimit-len(buf)))...)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		if i := bytes.IndexByte(buf[len(buf):len(buf)+n], '\n'); i >= 0 {
			buf = buf[:len(buf)+i]
			break
		}
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	buf = bytes.TrimRight(buf, "\r")
	return buf, len(buf) > 0
}

// depthOf is how many directories path lies below root.
func depthOf(root, path string) int {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." {
		return 0
	}
	return strings.Count(filepath.ToSlash(rel), "/") + 1
}
