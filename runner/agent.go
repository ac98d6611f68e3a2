package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/internal/offline"
	"github.com/dreamkit/dream/internal/prompt"
	"github.com/dreamkit/dream/internal/providername"
	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// Agent is the model-driven dream: the zero-token offline hygiene
// first, then a restricted sub-agent with the six sandboxed tools, its own
// context and the four-phase consolidation prompt, with the offline engine's
// leads (near-duplicates, drift suspects) in its task so that it spends its
// turns on judgement rather than search.
type Agent struct {
	Provider        llm.Provider
	Model           string
	MaxTurns        int
	MaxTokens       int64
	MaxOutputTokens int
	// SkipOffline leaves the mechanical fixes to the model.
	SkipOffline bool
	// Now is the clock for resolving relative dates; nil means time.Now.
	Now func() time.Time
	// Host is the agent whose layout says which file is an index (see
	// offline.LayoutIn); empty is the one the memory's own files name, or
	// a MEMORY.md index that fits every agent that keeps one.
	Host string
	// StateDir holds the audit history, which dates lines for the offline
	// hygiene; empty reads no history.
	StateDir string
	// MaxRequestTokens caps one request's input; a memory that does not
	// fit is dreamed in parts. 0: no cap, one part.
	MaxRequestTokens int64
}

// Run implements dream.Runner. A memory that does not fit one request
// under MaxRequestTokens is dreamed in parts (see newPlan), one bounded
// sub-run after the other on the same staging, each with the same tools
// and system prompt (a prefix the provider's cache keeps) and a task that
// names its files; they land together, as one dream. A part that runs out
// of turns or of context leaves the dream Incomplete: staged for review.
func (r *Agent) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	if r.Provider == nil {
		return dream.Outcome{}, fmt.Errorf("runner: Agent has no provider")
	}
	var out dream.Outcome
	if !r.SkipOffline {
		o, err := runOffline(ctx, job, r.now(), r.Host, r.StateDir)
		if err != nil {
			return out, err
		}
		out.FilesTouched, out.Accounted = o.FilesTouched, o.Accounted
	}
	s, err := r.setup(ctx, job, true)
	if err != nil {
		return out, err
	}
	defer s.set.Close()
	var parts []string
	for k := range s.plan.parts {
		if len(s.plan.parts) > 1 {
			job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: fmt.Sprintf("part %d of %d: %d file(s)", k+1, len(s.plan.parts), len(s.plan.parts[k]))})
		}
		prior := out.Usage
		cfg := s.config(r, job, s.plan.partTask(k))
		if r.MaxTokens > 0 || len(s.plan.parts) > 1 {
			left := r.maxTokens() - prior.Total()
			if left <= 0 {
				out.Incomplete = fmt.Sprintf("the token budget ran out before part %d of %d", k+1, len(s.plan.parts))
				break
			}
			cfg.MaxTokens = left
		}
		if job.Budget != nil {
			cfg.Budget = func(used, next llm.Usage) (int, error) {
				all := prior
				all.Add(used)
				return job.Budget(all, next)
			}
		}
		res, err := agent.Run(ctx, cfg)
		out.Turns += res.Turns
		out.ToolCalls += res.ToolCalls
		out.Usage.Add(res.Usage)
		out.FilesTouched = appendUnique(out.FilesTouched, res.FilesTouched...)
		if res.Summary != "" {
			parts = append(parts, res.Summary)
		}
		out.Summary = strings.Join(parts, "\n")
		switch {
		case err == nil:
		case errors.Is(err, agent.ErrContextFull), len(s.plan.parts) > 1 && (errors.Is(err, agent.ErrMaxTurns) || errors.Is(err, agent.ErrBudget)):
			// This part is unfinished; the others still get their turn,
			// and the dream waits for review.
			note := fmt.Sprintf("part %d of %d: %v", k+1, len(s.plan.parts), err)
			if len(s.plan.parts) == 1 {
				note = err.Error()
			}
			out.Incomplete = strings.TrimPrefix(strings.Join([]string{out.Incomplete, note}, "; "), "; ")
		default:
			return out, s.finish(&out, job, err)
		}
	}
	return out, s.finish(&out, job, nil)
}

// finish adds what the dream showed the model and the evidence it cites
// to out, and, when the dream went well, the index as the model left it.
func (s *setup) finish(out *dream.Outcome, job dream.Job, err error) error {
	out.Shown, out.Citations = s.set.Shown(), s.set.Citations()
	out.Contradictions = contradictions(s.leads, job.RepoDir)
	if err != nil {
		return err
	}
	// The model may have changed the index: it is measured as it now is,
	// not as the offline pass left it.
	st, merr := offline.MeasureIndex(job.MemoryDir, s.layout)
	if merr != nil {
		return fmt.Errorf("measuring the index: %w", merr)
	}
	out.Index = indexBudget(st)
	return nil
}

// contradictions are the drift leads that are evidence: a file, or a path
// whose first directory the repository has, that memory states and the
// repository no longer has is contradicted there, so a change of it (or
// its removal) needs nothing more. Other leads are only leads: a path under
// no directory of the repository (a Vault path, a bucket key) or an
// identifier (a feature flag, a setting) may never have been code, and
// "not in the repository" says nothing about it.
func contradictions(l offline.Leads, repo string) []evidence.Contradiction {
	if repo == "" {
		return nil
	}
	out := make([]evidence.Contradiction, 0, len(l.DriftSuspects))
	for _, s := range l.DriftSuspects {
		switch s.Kind {
		case "file":
		case "path":
			first, _, _ := strings.Cut(s.Mention, "/")
			if _, err := os.Stat(filepath.Join(repo, first)); err != nil {
				continue
			}
		default:
			continue
		}
		out = append(out, evidence.Contradiction{Value: s.Mention, Why: fmt.Sprintf("the repository has no %s %s (named at %s:%d)", s.Kind, s.Mention, s.File, s.Line)})
	}
	return out
}

// Estimate implements dream.Estimator: what Run would send, counted
// before it runs (see dreamPlan), on job.MemoryDir as it is now.
func (r *Agent) Estimate(ctx context.Context, job dream.Job) (spend.Estimate, error) {
	if r.Provider == nil {
		return spend.Estimate{}, fmt.Errorf("runner: Agent has no provider")
	}
	s, err := r.setup(ctx, job, false)
	if err != nil {
		return spend.Estimate{}, err
	}
	defer s.set.Close()
	turns := r.MaxTurns
	if turns <= 0 {
		turns = agent.DefaultMaxTurns
	}
	u, n, _ := s.plan.estimate(turns, r.Provider.Name() == providername.Anthropic)
	return spend.Estimate{Provider: r.Provider.Name(), Model: r.Model, Requests: n, Parts: len(s.plan.parts), Usage: u, Basis: s.plan.basis(turns)}, nil
}

// setup is what Run and Estimate share: the leads, the sandboxed tools,
// the prompts, and the plan of what the dream will read. forRun says it
// is Run's: a memory whose leads cannot be found fails the dream. An
// estimate, which reads the user's memory dir rather than the dream's
// staging, counts such a memory as one without leads.
type setup struct {
	set    *tools.Set
	system string
	plan   *dreamPlan
	leads  offline.Leads
	layout offline.Layout
}

func (r *Agent) setup(ctx context.Context, job dream.Job, forRun bool) (*setup, error) {
	layout := offline.LayoutIn(r.Host, job.MemoryDir)
	// The leads as the model gets them: after the offline pass, which
	// dates what the transcripts and the audit history can date (an
	// estimate, made before that pass, must not count those as leads).
	tr, err := offline.LoadTranscripts(ctx, job.SessionsDir)
	if err != nil {
		return nil, fmt.Errorf("finding leads: %w", err)
	}
	var prov offline.Provenance = tr
	if ap := newAuditProvenance(ctx, r.StateDir, job.MemoryDisplayDir); ap != nil {
		prov = offline.Chain{tr, ap}
	}
	lo := offline.Options{MemoryDir: job.MemoryDir, RepoDir: job.RepoDir, Layout: layout, Now: r.now(), Provenance: prov}
	leads, err := offline.FindLeadsWith(ctx, lo)
	if err != nil && (forRun || ctx.Err() != nil) {
		return nil, fmt.Errorf("finding leads: %w", err)
	}
	set, err := tools.NewSet(tools.Env{MemoryDir: job.MemoryDir, MemoryDisplayDir: job.MemoryDisplayDir, RepoDir: job.RepoDir, SessionsDir: job.SessionsDir})
	if err != nil {
		return nil, fmt.Errorf("opening the tool sandbox: %w", err)
	}
	system, err := prompt.System(prompt.SystemData{MemoryDir: job.MemoryDisplayDir, RepoDir: job.RepoDir, SessionsDir: job.SessionsDir})
	if err != nil {
		set.Close()
		return nil, err
	}
	taskText, err := prompt.Task(prompt.TaskData{Today: r.now().Format("2006-01-02"), SessionsReviewed: job.SessionsReviewed, Leads: leads.Markdown(offline.LeadsPromptBytes), Pinned: job.Pinned, Previous: job.Previous})
	if err != nil {
		set.Close()
		return nil, err
	}
	var defs []llm.Tool
	for _, t := range set.Tools() {
		defs = append(defs, llm.Tool{Name: t.Name(), Description: t.Description(), InputSchema: t.Schema()})
	}
	turns := r.MaxTurns
	if turns <= 0 {
		turns = agent.DefaultMaxTurns
	}
	plan, err := newPlan(ctx, job.MemoryDir, job.SessionsDir, job.SessionsReviewed, system, taskText, defs, leads, layout.Index, r.MaxRequestTokens, turns)
	if err != nil {
		set.Close()
		return nil, err
	}
	return &setup{set: set, system: system, plan: plan, leads: leads, layout: layout}, nil
}

// config is one part's agent.Config.
func (s *setup) config(r *Agent, job dream.Job, task string) agent.Config {
	return agent.Config{
		Provider:         r.Provider,
		Model:            r.Model,
		MaxOutputTokens:  r.MaxOutputTokens,
		System:           s.system,
		Task:             task,
		Tools:            s.set.Tools(),
		MaxTurns:         r.MaxTurns,
		MaxTokens:        r.MaxTokens,
		MaxRequestTokens: r.MaxRequestTokens,
		OnEvent: func(e agent.Event) {
			job.Progress(dream.Progress{Kind: dream.ProgressKind(e.Kind), Turn: e.Turn, Text: e.Text, Tool: e.Tool, Path: e.Path, IsError: e.IsError, Usage: e.Usage})
		},
	}
}

func (r *Agent) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Agent) maxTokens() int64 {
	if r.MaxTokens > 0 {
		return r.MaxTokens
	}
	return agent.DefaultMaxTokens
}

// ReplacesFiles implements dream.FileReplacer: the offline engine and the
// sandbox's write and edit tools both replace files atomically.
func (*Agent) ReplacesFiles() bool { return true }

func appendUnique(dst []string, add ...string) []string {
	seen := make(map[string]bool, len(dst))
	for _, s := range dst {
		seen[s] = true
	}
	for _, s := range add {
		if !seen[s] {
			seen[s] = true
			dst = append(dst, s)
		}
	}
	return dst
}
