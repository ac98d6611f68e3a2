// Package mcpserver is `dream mcp`: the dream tools as a Model Context
// Protocol server, through the official Go SDK, so that any MCP-capable
// agent can ask for a dream, watch it, review it and undo it without a
// shell. It is built only on the public API of package dream.
//
// Every tool's input schema is derived from its Go input type and every
// result carries structured content (schema from the Go output type) and a
// short text for the model to read. A failure the model can act on (an
// unknown id, the lock held, a dream that rolled back) is a tool error,
// never a protocol failure. The memory files are read-only resources.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/dreamid"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/internal/task"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/jobs"
)

// Options configure the server.
type Options struct {
	// Base is the Dreamer configuration of the memory dir the server was
	// started for (its MemoryDir may be empty: then every tool needs an id
	// or a memory_dir). Runner is used by dream_run.
	Base dream.Config
	// Host is the agent whose layout Base.MemoryDir is ("" for none), and
	// Backend makes the runners (the command line's provider.Choice):
	// every dream's Config comes from hostcfg.For, so that the
	// host's edit guard, runner and nanobot's flow apply as on the command
	// line. A Runner set in Base replaces the backend's (tests); Backend
	// may then be nil. Home and Env locate the layouts.
	Host    string
	Backend hostcfg.Backend
	Home    string
	Env     func(string) (string, bool)
	// Provider says who dreams and why (and, when a key is set but not
	// given to dream, how to give it), for dream_status.
	Provider string
	// Repo is the repository the server's jobs run on, and Jobs returns
	// them (dream_run with a job); nil: no job but the memory dream.
	Repo string
	Jobs func() []jobs.Job
	// Version is reported to clients.
	Version string
	// Logger receives the SDK's diagnostics; nil discards them.
	Logger *slog.Logger
}

// Server is the dream MCP server.
type Server struct {
	opts Options
	mcp  *mcp.Server

	// life is the context Run serves under: a dream a call starts ends
	// with it, not with the call (see dreamContext).
	life context.Context

	mu        sync.Mutex
	resources map[string]bool // URIs registered as resources
}

// New builds the server with every tool and the memory resources.
func New(opts Options) (*Server, error) {
	if opts.Base.StateDir == "" {
		return nil, errors.New("mcpserver: Base.StateDir is required")
	}
	if opts.Base.MemoryDir != "" {
		abs, err := filepath.Abs(opts.Base.MemoryDir)
		if err != nil {
			return nil, fmt.Errorf("mcpserver: memory dir: %w", err)
		}
		opts.Base.MemoryDir = filepath.Clean(abs)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	logger := opts.Logger
	s := &Server{opts: opts, life: context.Background(), resources: map[string]bool{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "dream", Title: "dream: memory consolidation", Version: opts.Version}, &mcp.ServerOptions{
		Logger: logger,
		Instructions: "dream consolidates this agent's long-term memory (MEMORY.md and topic files): it merges duplicates, " +
			"corrects facts the code contradicts, dates relative dates and keeps the index short. Call dream_status to see " +
			"whether a dream is due, dream_run to run one (staged for review unless apply is true), dream_diff to read a " +
			"staged dream, then dream_apply or dream_discard. dream_log, dream_show and dream_undo read and revert past dreams.",
	})
	s.addTools()
	if opts.Base.MemoryDir != "" {
		s.addMemoryTemplate()
		if err := s.refreshResources(); err != nil {
			logger.Warn("listing memory resources", "error", err.Error())
		}
	}
	return s, nil
}

// MCP returns the underlying SDK server, to Run or Connect it.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves over t (StdioTransport for `dream mcp`) until the client goes
// away or ctx ends. A dream running when the client goes away goes on and
// lands, and Run returns once it has; when ctx ends it is stopped and
// rolled back first.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	s.life = ctx
	return s.mcp.Run(ctx, t)
}

// dreamContext is the context a dream started by a call runs under: the
// server's life, not the call's. The SDK cancels a call when the client's
// input ends (EOF) or its output breaks, which rolled back a dream asked
// for with apply=true. A client that closes stdin after dream_run has
// handed the dream over: it finishes and lands (or is staged) as if the
// client had waited, and the server exits after it; nothing is lost, and
// the result is in dream log. It stops when the server does (SIGINT,
// SIGTERM), by dream_kill, or when the client cancels this very call
// (notifications/cancelled).
func (s *Server) dreamContext(call context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(call))
	stopLife := context.AfterFunc(s.life, func() { cancel(context.Cause(s.life)) })
	stopCall := context.AfterFunc(call, func() {
		// The SDK cancels with no cause for notifications/cancelled, and
		// with the read or write error when the connection ends.
		if context.Cause(call) == context.Canceled {
			cancel(errors.New("the client cancelled the call"))
			return
		}
		s.opts.Logger.Warn("the client went away during dream_run; the dream goes on and lands before the server exits (dream kill stops it)",
			"cause", context.Cause(call).Error())
	})
	return ctx, func() { stopLife(); stopCall(); cancel(nil) }
}

// maxIDLen bounds an id a tool accepts. Dream ids are short (a dream's is
// 20 bytes, an undo's adds 24 to the id it undoes, and a unique prefix of
// any id is enough), and every refusal of an id repeats it: a megabyte id
// must not come back as a megabyte error.
const maxIDLen = 256

// checkInput refuses an id or a memory dir too long to be one, echoing
// only its start.
func checkInput(memoryDir, id string) error {
	if len(id) > maxIDLen {
		return fmt.Errorf("id %s is not a dream id: ids are at most %d bytes (such as 20261130-111932-3f9a), and a unique prefix is enough; dream_tasks and dream_log list them", clip(id), maxIDLen)
	}
	if len(memoryDir) > maxPathLen {
		return fmt.Errorf("memory_dir %s is not a directory path: paths are at most %d bytes", clip(memoryDir), maxPathLen)
	}
	return nil
}

// maxPathLen is PATH_MAX on Linux, the longest memory_dir accepted.
const maxPathLen = 4096

// clip quotes an untrusted string for an error message: whole when short,
// else its first 60 bytes and its length.
func clip(s string) string {
	const keep = 60
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	n := keep
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:n]), len(s))
}

// resolveMemoryDir picks the memory dir a call is about: the one the caller
// named, the one dream id worked on, or the server's own. A named one must
// be the server's or one the state dir has dreamt before: a model must not
// point a dream at an arbitrary directory.
func (s *Server) resolveMemoryDir(ctx context.Context, named, id string) (string, error) {
	if err := checkInput(named, id); err != nil {
		return "", err
	}
	base := s.opts.Base.MemoryDir
	if named != "" {
		if !filepath.IsAbs(named) {
			return "", fmt.Errorf("memory_dir %q must be an absolute path", named)
		}
		named = filepath.Clean(named)
		if named == base {
			return named, nil
		}
		reg, err := task.Open(s.opts.Base.StateDir)
		if err != nil {
			return "", err
		}
		tasks, err := reg.List()
		if err != nil {
			return "", err
		}
		for _, t := range tasks {
			if filepath.Clean(t.MemoryDir) == named {
				return named, nil
			}
		}
		return "", fmt.Errorf("memory_dir %s is neither this server's memory dir (%s) nor one dream has worked on; start `dream mcp` with --memory-dir or --host for it", named, orNone(base))
	}
	if id != "" {
		mem, err := dreamid.MemoryDir(ctx, s.opts.Base.StateDir, id)
		if err == nil {
			return mem, nil
		}
		if base == "" || !errors.Is(err, dreamid.ErrUnknown) {
			return "", fmt.Errorf("%v (list dreams with dream_tasks or dream_log)", err)
		}
		return base, nil
	}
	if base == "" {
		return "", errors.New("this server has no memory dir: pass memory_dir, or start `dream mcp` with --memory-dir or --host")
	}
	return base, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// dreamerFor opens the Dreamer that holds dream id's records, and its
// configuration: a job's when the id's task names one of the server's
// jobs (a job stages and records its dreams apart from the memory's),
// else the memory's, from memory_dir or the id. The caller closes it.
func (s *Server) dreamerFor(ctx context.Context, named, id string) (*dream.Dreamer, dream.Config, error) {
	if err := checkInput(named, id); err != nil {
		return nil, dream.Config{}, err
	}
	var cfg dream.Config
	var err error
	if t, terr := task.Lookup(s.opts.Base.StateDir, id); terr == nil && t.Job != "" && t.Job != jobs.Memory {
		if cfg, err = s.jobConfig(t.Job); err == nil && named != "" && filepath.Clean(named) != filepath.Clean(cfg.MemoryDir) {
			err = fmt.Errorf("dream %s is job %s's, which writes %s, not %s: leave out memory_dir", id, t.Job, cfg.MemoryDir, named)
		}
	} else {
		var mem string
		if mem, err = s.resolveMemoryDir(ctx, named, id); err == nil {
			cfg, err = s.config(mem)
		}
	}
	if err != nil {
		return nil, dream.Config{}, err
	}
	cfg.OnDone, cfg.OnProgress = nil, nil
	d, err := dream.New(cfg)
	return d, cfg, err
}

// dreamer opens a Dreamer on mem with the server's settings. The caller
// closes it.
func (s *Server) dreamer(mem string) (*dream.Dreamer, error) {
	cfg, err := s.config(mem)
	if err != nil {
		return nil, err
	}
	cfg.OnDone, cfg.OnProgress = nil, nil
	return dream.New(cfg)
}

// config is the Dreamer configuration for mem, fitted to its host. Another
// memory dir than the server's has no known transcripts or code, but it
// keeps its agent's guard: a model must not slip past a host's edit guard
// (nanobot's history, a Codex block header) by naming the dir.
func (s *Server) config(mem string) (dream.Config, error) {
	base := s.opts.Base
	p := host.Project{MemoryDir: mem, Host: s.opts.Host, SessionsDir: base.SessionsDir, RepoDir: base.RepoDir}
	if mem != base.MemoryDir {
		p = host.Project{MemoryDir: mem, Host: s.hostOf(mem)}
		base.CurrentSession, base.SessionRule, base.CheckEdit = nil, nil, nil
	}
	return hostcfg.For(p, s.opts.Backend, base, s.opts.Home, s.opts.Env)
}

// hostOf names the agent whose memory dir mem is, from the agents' own
// layouts: a nanobot workspace, the dir a layout resolves to without a
// repository (Codex, Gemini), or one of the per-project dirs the agents
// have transcripts for (Claude Code). "" when no layout claims it.
func (s *Server) hostOf(mem string) string {
	if nanobot.IsWorkspace(mem) {
		return nanobot.HostName
	}
	target, err := os.Stat(mem)
	if err != nil {
		return ""
	}
	same := func(dir string) bool {
		fi, err := os.Stat(dir)
		return dir != "" && err == nil && os.SameFile(fi, target)
	}
	for _, name := range host.Names() {
		if p, err := host.ResolveProject(name, "", s.opts.Home, s.opts.Env); err == nil && p.Host != "dir" && filepath.IsAbs(p.MemoryDir) && same(p.MemoryDir) {
			return name
		}
	}
	ps, _ := host.Discover(s.opts.Home, s.opts.Env)
	for _, p := range ps {
		if same(p.MemoryDir) {
			return p.Host
		}
	}
	return ""
}
