package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/internal/checkup"
	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/internal/prompt"
	"github.com/dreamkit/dream/internal/providername"
	"github.com/dreamkit/dream/internal/reviewnotes"
	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// JobRunner runs a background job other than the memory dream (its
// jobs.Spec comes in Job.Spec): first the built-in engine the job uses
// (health: the code checkup; review: the commit notes), which needs no
// model and writes the job's report; then, with a model, the restricted
// sub-agent on the job's prompt (or the engine's own: an assessment on top
// of the health report, the review's notes), its tools confined to the
// job's scopes, its turns and tokens to Job.Budgets, its spending to the
// ceilings (Estimate, Job.Budget). A job with only a prompt needs a model;
// without one it fails saying so.
type JobRunner struct {
	// Provider is the model; nil runs the engine alone.
	Provider        llm.Provider
	Model           string
	MaxOutputTokens int
	// Now dates the report; nil means time.Now.
	Now func() time.Time
}

// ForJob returns the runner of a job's dreams on a model (nil: offline).
func ForJob(p llm.Provider, model string) dream.Runner {
	return &JobRunner{Provider: p, Model: model}
}

// Run implements dream.Runner.
func (r *JobRunner) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	spec := job.Spec
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	var out dream.Outcome
	report := spec.Report()
	if spec.Uses != "" {
		if report == "" {
			return out, fmt.Errorf("job %s: its first files entry must name its report (a plain path)", spec.Name)
		}
		job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: spec.Doing})
		md, found, err := engine(ctx, spec, job, now())
		if err != nil {
			return out, err
		}
		// The report is replaced whole; the job's history keeps every version.
		path := filepath.Join(job.MemoryDir, filepath.FromSlash(report))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return out, err
		}
		// Replaced, never written in place: unchanged staged files are
		// links to the user's (ReplacesFiles).
		if err := fsutil.WriteFileAtomic(path, []byte(md), 0o644, true); err != nil {
			return out, fmt.Errorf("job %s: writing its report: %w", spec.Name, err)
		}
		out.FilesTouched, out.Found = []string{report}, found
		job.Progress(dream.Progress{Kind: dream.ProgressFileTouched, Path: report})
		job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: summarize(found)})
		out.Summary = "wrote " + report + ": " + summarize(found)
	}
	if r.Provider == nil {
		if spec.Uses == "" {
			return out, fmt.Errorf("job %s runs a prompt, which needs a model, and none is configured (set provider and its key; a job that uses health or review runs offline)", spec.Name)
		}
		return out, nil
	}
	res, err := r.model(ctx, job, now(), report)
	out.Turns, out.ToolCalls, out.Usage = res.Turns, res.ToolCalls, res.Usage
	if res.Summary != "" {
		out.Summary = res.Summary
	}
	out.FilesTouched = appendUnique(out.FilesTouched, res.FilesTouched...)
	return out, err
}

// model runs the sub-agent on the job's prompt, asking job.Budget (the
// spending ceilings' reservation) before each request.
func (r *JobRunner) model(ctx context.Context, job dream.Job, now time.Time, report string) (agent.Result, error) {
	c, err := r.conversation(job, now, report)
	if err != nil {
		return agent.Result{}, err
	}
	defer c.set.Close()
	return agent.Run(ctx, agent.Config{
		Provider: r.Provider, Model: r.Model, MaxOutputTokens: r.MaxOutputTokens,
		System: c.system, Task: c.task, Tools: c.set.Tools(),
		MaxTurns: job.Budgets.MaxTurns, MaxTokens: job.Budgets.MaxTokens, Budget: job.Budget,
		OnEvent: func(e agent.Event) {
			job.Progress(dream.Progress{Kind: dream.ProgressKind(e.Kind), Turn: e.Turn, Text: e.Text, Tool: e.Tool, Path: e.Path, IsError: e.IsError, Usage: e.Usage})
		},
	})
}

// conversation is what the sub-agent is given: its tools, confined to the
// job's scopes, and its prompts. The caller closes set.
type conversation struct {
	set          *tools.Set
	system, task string
}

func (r *JobRunner) conversation(job dream.Job, now time.Time, report string) (conversation, error) {
	spec := job.Spec
	env := tools.Env{MemoryDir: job.MemoryDir, MemoryDisplayDir: job.MemoryDisplayDir, RepoDir: job.RepoDir, SessionsDir: job.SessionsDir}
	if spec.Reads(jobs.ReadMemory) {
		env.AgentMemoryDir = spec.MemoryDir
	}
	if len(spec.Files) > 0 {
		env.Writable, env.WritableText = jobs.WriteScope(spec.Files), strings.Join(spec.Files, ", ")
	}
	set, err := tools.NewSet(env)
	if err != nil {
		return conversation{}, fmt.Errorf("opening the tool sandbox: %w", err)
	}
	display := job.MemoryDisplayDir
	if display == "" {
		display = job.MemoryDir
	}
	data := prompt.JobData{Today: now.Format(time.DateOnly), SessionsReviewed: job.SessionsReviewed, Pinned: job.Pinned,
		MemoryDir: display, RepoDir: job.RepoDir, SessionsDir: job.SessionsDir, Name: spec.Name, Files: spec.Files, AgentMemoryDir: env.AgentMemoryDir}
	if report != "" {
		data.Report = filepath.Join(display, filepath.FromSlash(report))
	}
	if !job.LastRun.IsZero() {
		data.LastRun = job.LastRun.UTC().Format("2006-01-02 15:04 UTC")
	}
	c := conversation{set: set}
	if c.system, err = prompt.JobSystem(data); err == nil {
		c.task, err = prompt.JobTask(spec.Prompt, spec.Uses, data)
	}
	if err != nil {
		set.Close()
		return conversation{}, err
	}
	return c, nil
}

// What a job's model run is expected to do besides its prompts, in tokens:
// orient (an ls), read its report or notes and some of its read scope, then
// write its report (or notes) whole, and a summary.
const (
	jobReportTokens = 1500 // a report not yet written, as the model reads and writes it
	jobReadTokens   = 4000 // what it reads of its scope besides the report
)

// Estimate implements dream.Estimator, so that a job's dreams on a model
// pass the same spending ceilings, and land in the same ledger, as the
// memory dream's: its tools, system prompt and task as counted, then a
// few turns that orient, read the report (its current version, if any)
// and about jobReadTokens of the job's scope, and write the report whole.
// A job without a model sends nothing: an estimate of no requests.
func (r *JobRunner) Estimate(ctx context.Context, job dream.Job) (spend.Estimate, error) {
	if r.Provider == nil {
		return spend.Estimate{}, nil
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	report := job.Spec.Report()
	if _, err := os.Stat(job.MemoryDir); errors.Is(err, fs.ErrNotExist) {
		// A job's write dir is made by its first run: its tools are
		// counted on an empty stand-in, the prompts still name the dir.
		tmp, err := os.MkdirTemp("", "dream-estimate-*")
		if err != nil {
			return spend.Estimate{}, err
		}
		defer os.RemoveAll(tmp)
		if job.MemoryDisplayDir == "" {
			job.MemoryDisplayDir = job.MemoryDir
		}
		job.MemoryDir = tmp
	}
	c, err := r.conversation(job, now(), report)
	if err != nil {
		return spend.Estimate{}, err
	}
	defer c.set.Close()
	var defs []llm.Tool
	for _, t := range c.set.Tools() {
		defs = append(defs, llm.Tool{Name: t.Name(), Description: t.Description(), InputSchema: t.Schema()})
	}
	toolsJSON, err := json.Marshal(defs)
	if err != nil {
		return spend.Estimate{}, err
	}
	counter := nanobot.DefaultCounter()
	count := func(s string) int64 { return int64(counter.Count(s)) }
	doc := int64(jobReportTokens)
	if report != "" {
		if b, err := os.ReadFile(filepath.Join(job.MemoryDir, filepath.FromSlash(report))); err == nil {
			doc = max(count(string(b)), doc)
		}
	}
	turns := []spend.Turn{
		{Output: 2 * callTokens, Results: 2*frameTokens + 200},
		{Output: readsPerTurn * callTokens, Results: readsPerTurn*frameTokens + doc + jobReadTokens},
		{Output: callTokens + doc, Results: frameTokens + editResultTokens},
	}
	last := int64(summaryTokens)
	if limit := job.Budgets.MaxTurns; limit > 0 && len(turns) > limit-1 {
		turns, last = turns[:max(limit-1, 0)], callTokens
	}
	u, n, _ := spend.Simulate(count(string(toolsJSON))+count(c.system)+count(c.task), 0, turns, last, r.Provider.Name() == providername.Anthropic)
	return spend.Estimate{Provider: r.Provider.Name(), Model: r.Model, Requests: n, Parts: 1, Usage: u,
		Basis: fmt.Sprintf("%s: the job's tools and prompts, then orienting, reading its report and about %d tokens of its scope, and writing the report whole", counter.Name(), jobReadTokens)}, nil
}

// engine runs the built-in engine spec uses.
func engine(ctx context.Context, spec jobs.Spec, job dream.Job, now time.Time) (string, map[string]int, error) {
	if job.RepoDir == "" {
		return "", nil, fmt.Errorf("job %s uses %s, which reads the repository: its read scope must name repo", spec.Name, spec.Uses)
	}
	switch spec.Uses {
	case jobs.Health:
		exclude := ""
		if rel, err := filepath.Rel(job.RepoDir, job.MemoryDisplayDir); err == nil && filepath.IsLocal(rel) {
			exclude = filepath.ToSlash(rel)
		}
		res, err := checkup.Run(ctx, checkup.Options{Repo: job.RepoDir, Since: job.LastRun, Now: now, Exclude: exclude, ModCache: modCache()})
		return res.Markdown, res.Found, err
	case jobs.Review:
		res, err := reviewnotes.Run(ctx, reviewnotes.Options{Repo: job.RepoDir, Since: job.LastRun, Now: now})
		return res.Markdown, res.Found, err
	}
	return "", nil, errors.New("job " + spec.Name + ": unknown engine " + spec.Uses)
}

// modCache is the Go module cache as the go command finds it, without
// running it: GOMODCACHE, else the first GOPATH entry's pkg/mod, else
// ~/go/pkg/mod.
func modCache() string {
	if v := os.Getenv("GOMODCACHE"); v != "" {
		return v
	}
	if gp := filepath.SplitList(os.Getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// summarize puts a job's findings in one line, kinds in name order.
func summarize(found map[string]int) string {
	if len(found) == 0 {
		return "nothing found"
	}
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", strings.ReplaceAll(k, "_", " "), found[k]))
	}
	return strings.Join(parts, ", ")
}

// ReplacesFiles implements dream.FileReplacer: the report is written to a
// new file renamed into place, and the sub-agent's tools replace files.
func (*JobRunner) ReplacesFiles() bool { return true }
