// Package hostcfg builds the Config of a dream on a project as the
// project's agent requires it, so that every front end (the command line,
// `dream daemon`, `dream mcp`) dreams one host the same way: the layout's
// edit guard and session rule, whose the memory is, nanobot's flow, and the
// runner the backend makes.
package hostcfg

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/settings"
)

// Backend makes the Runner of a project's dreams when the Config brings
// none. It is an interface, not a provider choice, so that package dream
// links no model SDK and none of the shipped runners: provider.Choice is the
// Backend of the command line, the daemon and the MCP server (runner.For
// picks its runner), and a host with its own Runner needs no Backend.
type Backend interface {
	// Runner returns the runner for a dream with settings s: the
	// Config's settings.Dream, with Host the project's host and StateDir
	// the dream's state dir (the other inputs are empty: the backend
	// holds its provider and model).
	Runner(s settings.Settings) dream.Runner
	// Names returns the provider and the model recorded with each dream
	// (the task registry, the audit history): "offline" and "" for the
	// offline engine.
	Names() (provider, model string)
}

// For returns the Config of a dream on p as p's agent requires
// it, so that every front end (the command line, `dream daemon`, `dream
// mcp`) dreams one host the same way. It is the one place that knows:
//
//   - the host layout's edit guard (CheckEdit), so that what the agent
//     cannot load (a log it replays, a cursor, a Codex MEMORY.md block whose
//     header changed) never lands;
//   - the layout's session rule (Codex's counting exec runs with
//     codex_exec_sessions);
//   - whose the memory is: one the agent consolidates itself without
//     honouring the lock (Codex's memories feature) is left to it unless
//     codex_memory_owner hands it to dream;
//   - nanobot's flow: the memory dir is the workspace, the backend is
//     handed the host so that it can pick the history dream (runner.For
//     does; the offline engine without a model), the guard is widened only by what that flow writes (skills/
//     and a forward-moving memory/.dream_cursor), and a landed dream is
//     followed by nanobot.FinishDream, whichever method ran it.
//
// base supplies everything not about the host (StateDir, Settings,
// CurrentSession, OnProgress, OnDone, Logf, PersistThrottle, Now); a Runner
// set in base is kept (tests, the demo, a host's own), otherwise backend
// makes one for the host, and names the provider and model recorded unless
// base does; backend may be nil when base has a Runner. home and env locate the agent's layout (env:
// os.LookupEnv). A project with no Host gets no layout: only the sandbox
// confines its dreams.
//
// A job (base.Job not the memory dream) gets its own Config instead: see
// jobConfig.
func For(p host.Project, backend Backend, base dream.Config, home string, env func(string) (string, bool)) (dream.Config, error) {
	if !base.Job.IsMemory() {
		return jobConfig(p, backend, base, home, env)
	}
	cfg := base
	isNanobot := p.Host == nanobot.HostName
	mem := p.MemoryDir
	if mem != "" {
		mem = filepath.Clean(mem)
	}
	if isNanobot && filepath.Base(mem) == "memory" && !nanobot.IsWorkspace(mem) {
		// WORKSPACE/memory names the workspace nanobot's flow dreams over.
		mem = filepath.Dir(mem)
	}
	cfg.MemoryDir, cfg.SessionsDir, cfg.RepoDir = mem, p.SessionsDir, p.RepoDir
	if cfg.Provider == "" && backend != nil {
		cfg.Provider, cfg.Model = backend.Names()
		if ex, ok := backend.(interface{ Explain() string }); ok && cfg.ProviderWhy == "" {
			cfg.ProviderWhy = ex.Explain()
		}
	}
	if p.Host != "" {
		cfg.Host = p.Host
	}
	if cfg.Runner == nil && backend != nil {
		cfg.Runner = backend.Runner(settings.Settings{Dream: cfg.Settings, Host: cfg.Host, StateDir: cfg.StateDir})
	}
	if p.Host == "" {
		return cfg, nil
	}
	l, err := host.Resolve(p.Host, p.RepoDir, home, env)
	if err != nil {
		return dream.Config{}, fmt.Errorf("dream: the %s layout: %w", p.Host, err)
	}
	if cfg.Settings.CodexExecSessions {
		host.CountCodexExec(&l)
	}
	if samePath(mem, l.MemoryDir) && cfg.Disabled == "" {
		cfg.Disabled = host.AgentOwns(l, cfg.Settings.CodexMemoryOwner)
	}
	if cfg.SessionRule == nil && (p.SessionsDir == "" || samePath(p.SessionsDir, l.SessionsDir)) {
		cfg.SessionRule = sessionRule(l.Sessions)
	}
	// The layout's file list describes its own memory dir; nanobot's is
	// relative to any workspace, so it guards every one.
	if cfg.CheckEdit == nil && (isNanobot || samePath(mem, l.MemoryDir)) {
		cfg.CheckEdit = l.CheckEdit
		if isNanobot {
			cfg.CheckEdit = nanobot.CheckEdit(l.CheckEdit)
		}
	}
	if isNanobot {
		cfg.AfterLand = afterBoth(nanobot.AfterLand, base.AfterLand)
		if err := setAuditScope(cfg.StateDir, mem, nanobot.AuditScope(l)); err != nil {
			return dream.Config{}, fmt.Errorf("dream: the nanobot workspace's audit scope: %w", err)
		}
	} else if err := setAuditScope(cfg.StateDir, mem, nil); err != nil {
		// Another agent's layout names this dir: its history records every
		// memory file again, whatever an earlier nanobot run narrowed.
		return dream.Config{}, fmt.Errorf("dream: the audit scope: %w", err)
	}
	return cfg, nil
}

// jobBackend is a Backend that also makes a job's runner (provider.Choice
// does: runner.ForJob); a host with its own Runner needs none.
type jobBackend interface {
	JobRunner(s settings.Settings) dream.Runner
}

// jobConfig is For for a job on p: the job's write dir is the
// Dreamer's memory dir; p's memory dir is the job's to read when its read
// scope says so; the host's session rule counts its session gate. Nothing
// about the host's memory (its edit guard, nanobot's flow, the audit
// scope of its files) applies to a job's own dir.
func jobConfig(p host.Project, backend Backend, base dream.Config, home string, env func(string) (string, bool)) (dream.Config, error) {
	cfg := base
	cfg.MemoryDir, cfg.SessionsDir, cfg.RepoDir = base.Job.Dir, p.SessionsDir, p.RepoDir
	if p.Host != "" {
		cfg.Host = p.Host
	}
	if cfg.Job.Reads(jobs.ReadMemory) && cfg.Job.MemoryDir == "" {
		cfg.Job.MemoryDir = p.MemoryDir
	}
	if cfg.Provider == "" && backend != nil {
		cfg.Provider, cfg.Model = backend.Names()
	}
	if jb, ok := backend.(jobBackend); ok && cfg.Runner == nil {
		cfg.Runner = jb.JobRunner(settings.Settings{Dream: cfg.Settings, Host: cfg.Host, StateDir: cfg.StateDir})
	}
	if cfg.Runner == nil {
		return dream.Config{}, fmt.Errorf("dream: job %s: no runner (its backend makes none)", cfg.Job.Name)
	}
	if p.Host != "" && cfg.SessionRule == nil && cfg.Settings.MinSessions > 0 {
		l, err := host.Resolve(p.Host, p.RepoDir, home, env)
		if err != nil {
			return dream.Config{}, fmt.Errorf("dream: the %s layout: %w", p.Host, err)
		}
		if p.SessionsDir == "" || samePath(p.SessionsDir, l.SessionsDir) {
			cfg.SessionRule = sessionRule(l.Sessions)
		}
	}
	return cfg, nil
}

func samePath(a, b string) bool {
	return a != "" && b != "" && filepath.Clean(a) == filepath.Clean(b)
}

// afterBoth runs first's follow-up, then then's (a caller's own, kept);
// their errors are joined.
func afterBoth(first, then func(context.Context, string) error) func(context.Context, string) error {
	if then == nil {
		return first
	}
	return func(ctx context.Context, memoryDir string) error {
		return errors.Join(first(ctx, memoryDir), then(ctx, memoryDir))
	}
}

// sessionRule is a layout's session rule as a Config takes it.
func sessionRule(r *gate.Rule) *dream.SessionRule {
	if r == nil {
		return nil
	}
	return &dream.SessionRule{Match: r.Match, Descend: r.Descend, Keep: r.Keep, Alias: r.Alias, Same: r.Same}
}

// setAuditScope writes the scope of the memory's audit history where every
// audit.Open finds it (see audit.SetScope), so that `dream log`, `undo`,
// sync and the pipeline record under one rule.
func setAuditScope(stateDir, memoryDir string, scope []string) error {
	if stateDir == "" || memoryDir == "" {
		return nil
	}
	return audit.SetScope(stateDir, memoryDir, scope)
}
