package dream

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dreamkit/dream/internal/history"
	"github.com/dreamkit/dream/internal/historydream"
	"github.com/dreamkit/dream/internal/host"
)

// HostNanobot is the host name of nanobot's flow.
const HostNanobot = "nanobot"

// nanobotFinishTimeout bounds the git commit and the history compaction that
// follow a landed nanobot dream.
const nanobotFinishTimeout = 2 * time.Minute

// ConfigForProject returns the Config of a dream on p as p's agent requires
// it, so that every front end (the command line, `dream daemon`, `dream
// mcp`) dreams one host the same way. It is the one place that knows:
//
//   - the host layout's edit guard (CheckEdit), so that what the agent
//     cannot load (a log it replays, a cursor, a Codex MEMORY.md block whose
//     header changed) never lands;
//   - the layout's session rule;
//   - nanobot's flow: the memory dir is the workspace, the runner is the
//     history dream (HistoryDreamRunner; the offline engine without a
//     model), the guard is widened only by what that flow writes (skills/
//     and a forward-moving memory/.dream_cursor), and a landed dream is
//     followed by FinishNanobotDream, whichever method ran it.
//
// base supplies everything not about the host (StateDir, Settings,
// CurrentSession, OnProgress, OnDone, Logf, PersistThrottle, Now); a Runner
// set in base is kept (tests, the demo), otherwise it is chosen from choice
// for the host. home and env locate the agent's layout (env:
// os.LookupEnv). A project with no Host gets no layout: only the sandbox
// confines its dreams.
func ConfigForProject(p Project, choice Choice, base Config, home string, env func(string) (string, bool)) (Config, error) {
	cfg := base
	nanobot := p.Host == HostNanobot
	mem := p.MemoryDir
	if mem != "" {
		mem = filepath.Clean(mem)
	}
	if nanobot && filepath.Base(mem) == "memory" && !IsNanobotWorkspace(mem) {
		// WORKSPACE/memory names the workspace nanobot's flow dreams over.
		mem = filepath.Dir(mem)
	}
	cfg.MemoryDir, cfg.SessionsDir, cfg.RepoDir = mem, p.SessionsDir, p.RepoDir
	if cfg.Provider == "" {
		cfg.Provider, cfg.Model = choice.Name, choice.Model
	}
	runnerSettings := cfg.Settings
	runnerSettings.Host = p.Host
	if cfg.StateDir != "" {
		runnerSettings.StateDir = cfg.StateDir
	}
	if p.Host == "" {
		if cfg.Runner == nil {
			cfg.Runner = RunnerFor(choice, runnerSettings)
		}
		return cfg, nil
	}
	l, err := host.Resolve(p.Host, p.RepoDir, home, env)
	if err != nil {
		return Config{}, fmt.Errorf("dream: the %s layout: %w", p.Host, err)
	}
	if cfg.SessionRule == nil && (p.SessionsDir == "" || samePath(p.SessionsDir, l.SessionsDir)) {
		cfg.SessionRule = sessionRuleOf(l.Sessions)
	}
	// The layout's file list describes its own memory dir; nanobot's is
	// relative to any workspace, so it guards every one.
	if cfg.CheckEdit == nil && (nanobot || samePath(mem, l.MemoryDir)) {
		cfg.CheckEdit = l.CheckEdit
		if nanobot {
			cfg.CheckEdit = nanobotCheckEdit(l.CheckEdit)
		}
	}
	if cfg.Runner == nil {
		if nanobot && choice.Provider != nil {
			s := runnerSettings
			cfg.Runner = &HistoryDreamRunner{Provider: choice.Provider, Model: choice.Model, MaxTurns: s.MaxTurns, MaxTokens: s.MaxTokens}
		} else {
			cfg.Runner = RunnerFor(choice, runnerSettings)
		}
	}
	if nanobot {
		cfg.nanobot = &nanobotFinisher{prefix: historydream.CommitPeriodic}
	}
	return cfg, nil
}

func samePath(a, b string) bool {
	return a != "" && b != "" && filepath.Clean(a) == filepath.Clean(b)
}

// nanobotCheckEdit widens the nanobot layout's edit guard by what the
// history dream itself writes: skills/ (nanobot's Dream may create and edit
// skills, memory.py build_dream_tools) and memory/.dream_cursor, which only
// the runner writes (the model's tools refuse it) and only forward, to a
// non-negative integer.
func nanobotCheckEdit(inner func(rel string, before, after []byte) error) func(rel string, before, after []byte) error {
	return func(rel string, before, after []byte) error {
		rel = filepath.ToSlash(rel)
		switch {
		case rel == "memory/"+history.DreamCursorName:
			next, err := strconv.ParseInt(strings.TrimSpace(string(after)), 10, 64)
			if after == nil || err != nil || next < 0 {
				return fmt.Errorf("%s: the dream cursor must stay a non-negative integer", rel)
			}
			if prev, err := strconv.ParseInt(strings.TrimSpace(string(before)), 10, 64); before != nil && err == nil && next < prev {
				return fmt.Errorf("%s: the dream cursor may only move forward (%d to %d)", rel, prev, next)
			}
			return nil
		case historydream.Writable(rel) && strings.HasPrefix(rel, historydream.SkillsDir+"/"):
			return nil
		}
		return inner(rel, before, after)
	}
}

// nanobotFinisher runs FinishNanobotDream after each landed dream of a
// Dreamer built for nanobot's flow, and keeps the last result for
// RunNanobot's report.
type nanobotFinisher struct {
	mu        sync.Mutex
	prefix    string
	commit    string
	compacted int
	err       error
}

// finish commits and compacts. The landed dream's follow-up is not the
// caller's to cancel half-way (a daemon shutting down), so it runs on a
// context detached from ctx's cancellation, bounded by its own timeout.
func (f *nanobotFinisher) finish(ctx context.Context, workspace string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nanobotFinishTimeout)
	defer cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commit, f.compacted, f.err = FinishNanobotDream(ctx, workspace, f.prefix)
	return f.err
}
