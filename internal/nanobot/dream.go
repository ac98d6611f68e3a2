package nanobot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// DreamConfig is one history dream.
type DreamConfig struct {
	// Workspace is the directory read and written: the staging copy of a
	// nanobot workspace.
	Workspace string
	// DisplayWorkspace is the workspace as the model is told about it.
	DisplayWorkspace string
	// SessionsDir holds nanobot's session files, readable; may be empty.
	SessionsDir string

	Provider        llm.Provider
	Model           string
	MaxOutputTokens int
	// MaxTurns and MaxTokens are the budgets of the whole run, shared by
	// all its batches; the agent's defaults when zero.
	MaxTurns  int
	MaxTokens int64
	// BatchSize is the most entries per model run; DreamBatchSize when zero.
	BatchSize int
	// Template replaces the default dream instructions when not empty.
	Template string
	// OnEvent receives the agent's events; may be nil.
	OnEvent func(agent.Event)
	// Budget is asked before each request with the run's usage so far
	// (agent.Config.Budget); may be nil.
	Budget func(used, next llm.Usage) (int, error)
}

// DreamResult is what a run did, filled in also when it fails.
type DreamResult struct {
	Batches      int
	Consumed     int   // history entries consumed
	StartCursor  int64 // the dream cursor before the run
	Cursor       int64 // the dream cursor after it (in the workspace copy)
	Turns        int
	ToolCalls    int
	Usage        llm.Usage
	FilesTouched []string
	Summaries    []string
	// Shown is what the model was shown from outside the memory: each
	// batch's history entries (the conversations they summarise are the
	// evidence a changed value needs) and what its tools read in the
	// sessions; Citations are its checked citations (see package evidence).
	Shown     []evidence.Shown
	Citations []evidence.Citation
}

// ErrIncomplete: a batch's model run ended other than by finishing its
// turn (nanobot's dream_run_completed is false); the cursor stays.
var ErrIncomplete = errors.New("historydream: the model did not finish the batch")

// RunDream drains the backlog: while entries are above the dream cursor, it
// gives the oldest cfg.BatchSize of them to a restricted agent, and when
// that run completes (also when it changed nothing) it moves the cursor past
// them. Turns and tokens are one budget for all batches. Any failure,
// timeout, cancellation or exhausted budget returns an error; the caller
// (the Dreamer's journal) then discards every change of the run, the
// cursor included, so an entry is consumed only by a run that completed.
func RunDream(ctx context.Context, cfg DreamConfig) (res DreamResult, err error) {
	if cfg.Provider == nil {
		return res, errors.New("historydream: no provider")
	}
	cfg = cfg.withDefaults()
	memDir := filepath.Join(cfg.Workspace, "memory")
	log := OpenLog(memDir, LogOptions{ReadOnly: true})
	cursor, err := log.DreamCursor()
	if err != nil {
		return res, err
	}
	res.StartCursor, res.Cursor = cursor, cursor
	// nanobot's tools take relative paths from the workspace (its dream
	// template says "memory/MEMORY.md"), so the workspace copy is also the
	// root that relative reads resolve against; the memory root wins there,
	// so that reads are recorded for edit.
	set, err := openTools(tools.Env{MemoryDir: cfg.Workspace, MemoryDisplayDir: cfg.DisplayWorkspace, RepoDir: cfg.Workspace, SessionsDir: cfg.SessionsDir})
	if err != nil {
		return res, fmt.Errorf("historydream: opening the tool sandbox: %w", err)
	}
	defer set.Close()
	defer func() { res.Shown, res.Citations = append(res.Shown, set.set.Shown()...), set.set.Citations() }()
	system := fmt.Sprintf("You are the Dream of a nanobot agent whose workspace is %s. Paths are relative to it. read, glob, grep and ls see the workspace; write and edit reach only SOUL.md, USER.md, memory/MEMORY.md and skills/. There is no shell.", cfg.DisplayWorkspace)
	for {
		if err := ctx.Err(); err != nil {
			return res, context.Cause(ctx)
		}
		batch, err := log.After(ctx, cursor, Query{Limit: cfg.BatchSize})
		if err != nil {
			return res, err
		}
		if len(batch.Entries) == 0 {
			return res, nil
		}
		turnsLeft, tokensLeft := cfg.MaxTurns-res.Turns, cfg.MaxTokens-res.Usage.Total()
		if turnsLeft <= 0 || tokensLeft <= 0 {
			return res, fmt.Errorf("%w: the run's budget ran out with %d entries still unconsumed after cursor %d", agent.ErrBudget, len(batch.Entries), cursor)
		}
		ar, err := agent.Run(ctx, agent.Config{
			Budget:          cfg.batchBudget(res.Usage),
			Provider:        cfg.Provider,
			Model:           cfg.Model,
			MaxOutputTokens: cfg.MaxOutputTokens,
			System:          system,
			Task:            BuildDreamPrompt(cfg.Template, cfg.Workspace, batch.Entries),
			Tools:           set.Tools(),
			MaxTurns:        turnsLeft,
			MaxTokens:       tokensLeft,
			OnEvent:         cfg.OnEvent,
		})
		res.Turns += ar.Turns
		res.ToolCalls += ar.ToolCalls
		res.Usage.Add(ar.Usage)
		res.FilesTouched = appendUnique(res.FilesTouched, ar.FilesTouched...)
		if err != nil {
			return res, fmt.Errorf("historydream: batch after cursor %d: %w", cursor, err)
		}
		if ar.Stop != agent.StopEndTurn {
			return res, fmt.Errorf("%w (stop reason %s)", ErrIncomplete, ar.Stop)
		}
		var shown strings.Builder
		for _, e := range batch.Entries {
			shown.WriteString(e.Timestamp + " " + e.Content + "\n")
		}
		res.Shown = append(res.Shown, evidence.Shown{Tool: "history", Source: filepath.Join(cfg.DisplayWorkspace, "memory", LogName), Text: shown.String()})
		cursor = batch.Entries[len(batch.Entries)-1].Cursor
		// The cursor goes into the same copy as the edits: the journal lands
		// both or neither.
		if err := fsutil.WriteFileAtomic(filepath.Join(memDir, DreamCursorName), []byte(strconv.FormatInt(cursor, 10)), 0o644, true); err != nil {
			return res, fmt.Errorf("historydream: recording the dream cursor: %w", err)
		}
		res.Batches++
		res.Consumed += len(batch.Entries)
		res.Cursor = cursor
		res.Summaries = append(res.Summaries, ar.Summary)
	}
}

// withDefaults is cfg with its zero fields given their defaults.
func (cfg DreamConfig) withDefaults() DreamConfig {
	if cfg.DisplayWorkspace == "" {
		cfg.DisplayWorkspace = cfg.Workspace
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DreamBatchSize
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = agent.DefaultMaxTurns
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = agent.DefaultMaxTokens
	}
	if cfg.Template == "" {
		cfg.Template = DefaultDreamTemplate()
	}
	return cfg
}

// batchBudget is cfg.Budget for one batch's agent, which counts only its
// own usage: prior, what the earlier batches used, is added. nil without a
// Budget.
func (cfg DreamConfig) batchBudget(prior llm.Usage) func(used, next llm.Usage) (int, error) {
	if cfg.Budget == nil {
		return nil
	}
	return func(used, next llm.Usage) (int, error) {
		all := prior
		all.Add(used)
		return cfg.Budget(all, next)
	}
}

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

// Per batch, besides its prompt: the three files nanobot's Dream reads
// (SOUL.md, USER.md, memory/MEMORY.md) in one turn, two edits in another,
// then the summary.
const (
	callTokens    = 40
	editTokens    = 300
	summaryTokens = 80
)

// EstimateDream plays the batches RunDream would send over the unconsumed history
// (spend.Simulate), counting text with count; writes says the provider
// writes new input to its prompt cache (Anthropic). It returns the usage
// and the number of requests.
func EstimateDream(ctx context.Context, cfg DreamConfig, count func(string) int64, writes bool) (llm.Usage, int, error) {
	var u llm.Usage
	batchSize := cfg.BatchSize
	if batchSize <= 0 {
		batchSize = DreamBatchSize
	}
	template := cfg.Template
	if template == "" {
		template = DefaultDreamTemplate()
	}
	if cfg.DisplayWorkspace == "" {
		cfg.DisplayWorkspace = cfg.Workspace
	}
	memDir := filepath.Join(cfg.Workspace, "memory")
	log := OpenLog(memDir, LogOptions{ReadOnly: true})
	cursor, err := log.DreamCursor()
	if err != nil {
		return u, 0, err
	}
	set, err := openTools(tools.Env{MemoryDir: cfg.Workspace, MemoryDisplayDir: cfg.DisplayWorkspace, RepoDir: cfg.Workspace, SessionsDir: cfg.SessionsDir})
	if err != nil {
		return u, 0, fmt.Errorf("historydream: opening the tool sandbox: %w", err)
	}
	defer set.Close()
	var fixed int64
	for _, t := range set.Tools() {
		fixed += count(t.Name()+t.Description()) + count(string(t.Schema()))
	}
	var files int64
	for _, rel := range []string{"SOUL.md", "USER.md", "memory/MEMORY.md"} {
		if b, err := os.ReadFile(filepath.Join(cfg.Workspace, rel)); err == nil {
			files += count(string(b)) + int64(strings.Count(string(b), "\n"))*2
		}
	}
	requests := 0
	for {
		batch, err := log.After(ctx, cursor, Query{Limit: cfg.BatchSize})
		if err != nil {
			return u, requests, err
		}
		if len(batch.Entries) == 0 {
			return u, requests, nil
		}
		first := fixed + count(BuildDreamPrompt(template, cfg.Workspace, batch.Entries)) + 150 // the system prompt
		turns := []spend.Turn{{Output: 3 * callTokens, Results: files}, {Output: 2 * (callTokens + editTokens), Results: 50}}
		bu, n, _ := spend.Simulate(first, fixed, turns, summaryTokens, writes)
		u.Add(bu)
		requests += n
		cursor = batch.Entries[len(batch.Entries)-1].Cursor
	}
}
