package tools

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dreamkit/dream/internal/sandbox"
)

// Names of the read-only roots. A relative path in write and edit is in the
// memory dir; in read, a memory file of that path, else a repository file
// (see resolveRead); in glob, grep and ls, the repository.
const (
	RootRepo     = "repo"
	RootMemory   = "memory"
	RootSessions = "sessions"
	// RootAgentMemory is the agent's memory, read by a job that may.
	RootAgentMemory = "agent memory"
)

// Env says where a dream's tools look and write.
type Env struct {
	// MemoryDir is the directory actually written: the user's memory dir or
	// a staging copy of it kept by the journal.
	MemoryDir string
	// MemoryDisplayDir is the memory dir as the model is told about it;
	// absolute paths under it map onto MemoryDir. Empty means MemoryDir.
	MemoryDisplayDir string
	// RepoDir is the code the memory describes (read-only). Optional.
	RepoDir string
	// SessionsDir holds the agent's transcripts (read-only). Optional.
	SessionsDir string
	// AgentMemoryDir is the agent's memory dir, read-only, for a job that
	// may read it (its own write dir is MemoryDir). Optional.
	AgentMemoryDir string
	// Writable, when set, narrows the files write and edit may change
	// (rel is slash-separated, relative to MemoryDir): a job's write
	// scope, which WritableText names for the model.
	Writable     func(rel string) bool
	WritableText string
	// Limits caps tool output; zero fields take the defaults.
	Limits Limits
}

// Limits caps what one tool call may return or write, so that a single call
// can neither flood the model's context nor bloat the memory.
type Limits struct {
	ReadMaxLines     int // lines returned by one read (default 2000)
	ReadMaxLineChars int // characters kept of each line read (default 2000)
	ReadMaxBytes     int // bytes returned by one read (default 256 KiB)
	GlobMax          int // paths returned by one glob (default 200)
	GrepMaxMatches   int // entries returned by one grep (default 100)
	GrepMaxLineChars int // characters shown of each matching line (default 500)
	LsMax            int // entries returned by one ls (default 500)
	WriteMaxBytes    int // size of a file written or edited (default 256 KiB)
}

// DefaultLimits are the limits used for zero fields.
func DefaultLimits() Limits {
	return Limits{
		ReadMaxLines:     2000,
		ReadMaxLineChars: 2000,
		ReadMaxBytes:     256 << 10,
		GlobMax:          200,
		GrepMaxMatches:   100,
		GrepMaxLineChars: 500,
		LsMax:            500,
		WriteMaxBytes:    256 << 10,
	}
}

// withDefaults replaces every zero or negative field with its default.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	pick := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	return Limits{
		ReadMaxLines:     pick(l.ReadMaxLines, d.ReadMaxLines),
		ReadMaxLineChars: pick(l.ReadMaxLineChars, d.ReadMaxLineChars),
		ReadMaxBytes:     pick(l.ReadMaxBytes, d.ReadMaxBytes),
		GlobMax:          pick(l.GlobMax, d.GlobMax),
		GrepMaxMatches:   pick(l.GrepMaxMatches, d.GrepMaxMatches),
		GrepMaxLineChars: pick(l.GrepMaxLineChars, d.GrepMaxLineChars),
		LsMax:            pick(l.LsMax, d.LsMax),
		WriteMaxBytes:    pick(l.WriteMaxBytes, d.WriteMaxBytes),
	}
}

// Set is the six tools of one dream sharing one read-state, so that edit
// knows what read has shown. Build a new Set per dream: the read-state must
// not leak from one dream to the next.
type Set struct {
	env    Env
	limits Limits
	ro     *sandbox.ReadOnly
	mem    *sandbox.Memory
	state  *readState
	log    shownLog
	tools  []Tool
}

// NewSet opens the roots of env and builds the tools.
func NewSet(env Env) (*Set, error) {
	if env.MemoryDir == "" {
		return nil, errors.New("tools: the memory directory is required")
	}
	if env.MemoryDisplayDir == "" {
		env.MemoryDisplayDir = env.MemoryDir
	}
	mem, err := sandbox.OpenMemory(env.MemoryDir, env.MemoryDisplayDir)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	ro, err := sandbox.OpenReadOnly(
		sandbox.NamedRoot{Name: RootRepo, RealDir: env.RepoDir},
		sandbox.NamedRoot{Name: RootMemory, RealDir: env.MemoryDir, DisplayDir: env.MemoryDisplayDir},
		sandbox.NamedRoot{Name: RootSessions, RealDir: env.SessionsDir},
		sandbox.NamedRoot{Name: RootAgentMemory, RealDir: env.AgentMemoryDir},
	)
	if err != nil {
		_ = mem.Close()
		return nil, fmt.Errorf("tools: %w", err)
	}
	s := &Set{env: env, limits: env.Limits.withDefaults(), ro: ro, mem: mem, state: newReadState()}
	s.tools = []Tool{
		&readTool{s: s},
		&globTool{s: s},
		&grepTool{s: s},
		&lsTool{s: s},
		&writeTool{s: s},
		&editTool{s: s},
	}
	return s, nil
}

// checkScope refuses a file outside the write scope (Env.Writable).
func (s *Set) checkScope(rel string) error {
	if s.env.Writable == nil || s.env.Writable(filepath.ToSlash(rel)) {
		return nil
	}
	return fmt.Errorf("%s is outside this job's write scope: it may write only %s", s.mem.Display(rel), s.env.WritableText)
}

// Tools returns the tools in a stable order (read, glob, grep, ls, write,
// edit), so that the tool list a provider caches never changes between turns.
func (s *Set) Tools() []Tool { return append([]Tool(nil), s.tools...) }

// editMaxBytes is the largest memory file read whole (and so editable). It
// is above WriteMaxBytes so that an oversized file can still be shrunk.
func (s *Set) editMaxBytes() int { return 4 * s.limits.WriteMaxBytes }

// Limits returns the effective limits.
func (s *Set) Limits() Limits { return s.limits }

// Close releases the roots.
func (s *Set) Close() error {
	return errors.Join(s.ro.Close(), s.mem.Close())
}
