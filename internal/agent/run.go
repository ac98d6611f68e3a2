package agent

import (
	"context"
	"fmt"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// Run drives the loop until the model stops calling tools (success), a budget
// ends it (ErrMaxTurns, ErrBudget, ErrLooping), ctx is done, or the provider
// fails. The Result is filled in on every path.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return Result{}, err
	}
	ts, err := newToolset(cfg.Tools)
	if err != nil {
		return Result{}, err
	}
	r := &runner{cfg: cfg, tools: ts, disp: newDispatcher(ts, cfg.ToolTimeout), touched: make(map[string]bool)}
	err = r.loop(ctx)
	r.drainLate(r.res.Turns)
	return r.res, err
}

// runner is the state of one run. Nothing in it outlives Run or is shared
// with another run.
type runner struct {
	cfg     Config
	tools   *toolset
	disp    *dispatcher
	res     Result
	touched map[string]bool
}

func (r *runner) emit(e Event) {
	if r.cfg.OnEvent != nil {
		r.cfg.OnEvent(e)
	}
}

func (r *runner) loop(ctx context.Context) error {
	// The conversation only ever grows: earlier messages are never rewritten,
	// so each request is a byte-identical prefix of the next one.
	msgs := []llm.Message{{
		Role:    llm.RoleUser,
		Content: []llm.Block{{Type: llm.BlockText, Text: r.cfg.Task}},
	}}
	// lastInput is the input side of the previous request. The next request
	// re-sends all of it, so it is a lower bound of what the next one costs.
	var lastInput int64
	// cached says the last answer showed the provider's prompt cache at
	// work (see Config.Budget).
	cached := false
	// sentMsgs is how many messages the previous request carried: what
	// was added since is what the next one costs on top of lastInput.
	sentMsgs := 0
	fixed := estimateFixed(r.cfg.System, r.tools.defs)
	refusedTurns := 0
	for {
		turn := r.res.Turns + 1
		r.drainLate(turn - 1)
		if err := r.mayTurn(ctx, turn); err != nil {
			return err
		}
		// Estimate the request before sending it: what the last one cost
		// (it is all re-sent) plus what was added since, or, before the
		// first answer, the whole request by size.
		next := lastInput + estimateTokens(msgs[sentMsgs:])
		if sentMsgs == 0 {
			next = fixed + estimateTokens(msgs)
		}
		maxOut, capped, err := r.admit(turn, next, lastInput, cached && sentMsgs > 0)
		if err != nil {
			return err
		}
		sentMsgs = len(msgs)
		resp, err := r.complete(ctx, turn, msgs, maxOut)
		if err != nil {
			return err
		}
		lastInput, cached = r.account(turn, resp)
		if capped && resp.StopReason == llm.StopMaxTokens {
			// The answer was cut at what the ceiling left: what it says
			// is unfinished, and acting on it would be acting on half.
			r.res.Stop = StopCeiling
			return fmt.Errorf("agent: request %d was cut at the %d output tokens the spending ceiling left: %w", turn, maxOut, spend.ErrOverBudget)
		}
		calls := resp.ToolCalls()
		if len(calls) == 0 {
			// A finished dream is kept even if its last answer crossed the
			// budget: the tokens are spent either way, and failing here would
			// roll back completed work.
			r.res.Stop = stopFor(resp.StopReason)
			return nil
		}
		if used := r.res.Usage.Total(); used > r.cfg.MaxTokens {
			r.res.Stop = StopBudget
			return fmt.Errorf("agent: %d tokens used after turn %d, budget %d: %w", used, turn, r.cfg.MaxTokens, ErrBudget)
		}

		answered, allRefused, err := r.answer(ctx, turn, resp, calls)
		if err != nil {
			return err
		}
		msgs = append(msgs, answered...)
		if !allRefused {
			refusedTurns = 0
			continue
		}
		refusedTurns++
		if refusedTurns >= r.cfg.MaxRefusedTurns {
			r.res.Stop = StopLoop
			return fmt.Errorf("agent: every tool call refused for %d consecutive turns: %w", refusedTurns, ErrLooping)
		}
	}
}

// answer runs the tool calls of turn's answer, resp, and returns the two
// messages the history grows by (the answer and the results) and whether
// every call was refused. The calls go into the history with oversized
// inputs cut (a refused 10 MB write must not ride along in every later
// request). They have not been sent yet, so each request is still a prefix
// of the next and the prompt cache holds.
func (r *runner) answer(ctx context.Context, turn int, resp *llm.Response, calls []llm.Block) ([]llm.Message, bool, error) {
	assistant := assistantContent(resp.Content)
	results, allRefused, err := r.runCalls(ctx, turn, calls)
	if err != nil {
		return nil, false, err
	}
	compactCalls(assistant, results)
	return []llm.Message{
		{Role: llm.RoleAssistant, Content: assistant},
		{Role: llm.RoleUser, Content: results},
	}, allRefused, nil
}

// mayTurn says why turn must not start: the run was cancelled or its
// turns are spent; nil when it may.
func (r *runner) mayTurn(ctx context.Context, turn int) error {
	if err := ctx.Err(); err != nil {
		r.res.Stop = StopCanceled
		return fmt.Errorf("agent: stopped before turn %d: %w", turn, err)
	}
	if r.res.Turns >= r.cfg.MaxTurns {
		r.res.Stop = StopMaxTurns
		return fmt.Errorf("agent: %d turns used: %w", r.res.Turns, ErrMaxTurns)
	}
	return nil
}

// account adds turn's answer to the run (usage, summary, events) and
// returns the input side of its request, which the next one re-sends, and
// whether the provider's prompt cache was at work: it then reads the next
// request's re-sent prefix from it.
func (r *runner) account(turn int, resp *llm.Response) (lastInput int64, cached bool) {
	r.res.Usage.Add(resp.Usage)
	if text := resp.Text(); text != "" {
		r.res.Summary = text
	}
	r.emit(Event{Kind: EventTurn, Turn: turn, Text: turnSummary(resp)})
	r.emit(Event{Kind: EventUsage, Turn: turn, Usage: r.res.Usage})
	u := resp.Usage
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens, u.CacheReadInputTokens+u.CacheCreationInputTokens > 0
}

// admit checks request turn, estimated at next input tokens, before it is
// sent: against the run's token budget, the cap on one request and the
// spending ceiling (Config.Budget), which may also cap its answer (capped:
// at maxOut). cachedPrefix says the provider will read the lastInput tokens
// re-sent from its prompt cache.
func (r *runner) admit(turn int, next, lastInput int64, cachedPrefix bool) (maxOut int, capped bool, err error) {
	if used := r.res.Usage.Total(); used+next > r.cfg.MaxTokens {
		r.res.Stop = StopBudget
		return 0, false, fmt.Errorf("agent: %d tokens used, next request needs about %d more, budget %d: %w",
			used, next, r.cfg.MaxTokens, ErrBudget)
	}
	if c := r.cfg.MaxRequestTokens; c > 0 && next > c {
		r.res.Stop = StopContext
		return 0, false, fmt.Errorf("agent: request %d would carry about %d input tokens, over the cap of %d: %w", turn, next, c, ErrContextFull)
	}
	maxOut = r.cfg.MaxOutputTokens
	if r.cfg.Budget == nil {
		return maxOut, false, nil
	}
	in := llm.Usage{InputTokens: next}
	if cachedPrefix {
		in = llm.Usage{CacheReadInputTokens: lastInput, InputTokens: max(next-lastInput, 0)}
	}
	allowed, err := r.cfg.Budget(r.res.Usage, in)
	if err != nil {
		r.res.Stop = StopCeiling
		return 0, false, fmt.Errorf("agent: before request %d: %w", turn, err)
	}
	usual := maxOut
	if usual == 0 {
		usual = DefaultMaxOutputTokens
	}
	if allowed < usual {
		return allowed, true, nil
	}
	return maxOut, false, nil
}

// complete sends request turn, msgs with an answer of at most maxOut
// tokens, and counts the turn.
func (r *runner) complete(ctx context.Context, turn int, msgs []llm.Message, maxOut int) (*llm.Response, error) {
	req := &llm.Request{
		Model:  r.cfg.Model,
		Tools:  r.tools.defs,
		System: r.cfg.System,
		// Capacity capped so a provider that appends to the slice can
		// never overwrite the loop's next message.
		Messages:  msgs[:len(msgs):len(msgs)],
		MaxTokens: maxOut,
	}
	resp, err := r.cfg.Provider.Complete(ctx, req)
	r.res.Turns = turn
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			r.res.Stop = StopCanceled
			return nil, fmt.Errorf("agent: turn %d: %w", turn, ctxErr)
		}
		r.res.Stop = StopError
		return nil, fmt.Errorf("agent: turn %d: %s provider: %w", turn, r.cfg.Provider.Name(), err)
	}
	if resp == nil {
		r.res.Stop = StopError
		return nil, fmt.Errorf("agent: turn %d: %s provider returned no response", turn, r.cfg.Provider.Name())
	}
	return resp, nil
}

// runCalls executes a turn's tool calls in order and returns one tool_result
// per call, in call order, and whether every call was refused without
// running.
func (r *runner) runCalls(ctx context.Context, turn int, calls []llm.Block) ([]llm.Block, bool, error) {
	results := make([]llm.Block, 0, len(calls))
	allRefused := true
	for _, c := range calls {
		if err := ctx.Err(); err != nil {
			r.res.Stop = StopCanceled
			return nil, false, fmt.Errorf("agent: stopped during turn %d before calling %s: %w", turn, c.Name, err)
		}
		out := r.disp.call(ctx, c)
		r.res.ToolCalls++
		r.emit(Event{
			Kind: EventToolCall, Turn: turn, Tool: c.Name, Text: inputSummary(c.Input),
			IsError: out.block.IsError, Error: out.errMsg,
		})
		if !out.refused {
			allRefused = false
		}
		if !out.block.IsError && out.touched != "" {
			r.touch(turn, out.touched)
		}
		results = append(results, out.block)
	}
	return results, allRefused, nil
}

// compactCalls replaces, in the assistant's tool_use blocks, every input
// field too large to keep by a note of its size: a field over
// keepRefusedField when the call's result is an error, over
// keepSucceededField otherwise.
func compactCalls(assistant, results []llm.Block) {
	failed := make(map[string]bool, len(results))
	for _, res := range results {
		failed[res.ID] = res.IsError
	}
	for i, b := range assistant {
		if b.Type != llm.BlockToolUse {
			continue
		}
		if failed[b.ID] {
			assistant[i].Input = compactInput(b.Input, keepRefusedField, "the call was refused or failed; its result says why")
		} else {
			assistant[i].Input = compactInput(b.Input, keepSucceededField, "the call succeeded; read the file to see what it holds")
		}
	}
}

// drainLate records files written by calls that were abandoned and then
// finished after all.
func (r *runner) drainLate(turn int) {
	for {
		select {
		case out := <-r.disp.late:
			r.touch(turn, out.touched)
		default:
			return
		}
	}
}

// touch records a successful write to a memory file.
func (r *runner) touch(turn int, path string) {
	if !r.touched[path] {
		r.touched[path] = true
		r.res.FilesTouched = append(r.res.FilesTouched, path)
	}
	r.emit(Event{Kind: EventFileTouched, Turn: turn, Path: path})
}

// assistantContent copies the response content for the history, dropping
// empty text blocks, which providers reject when they are sent back.
func assistantContent(blocks []llm.Block) []llm.Block {
	out := make([]llm.Block, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == llm.BlockText && b.Text == "" {
			continue
		}
		out = append(out, b)
	}
	return out
}

// stopFor names a model stop that carried no tool calls.
func stopFor(reason llm.StopReason) string {
	if reason == "" || reason == llm.StopEndTurn || reason == llm.StopToolUse {
		return StopEndTurn
	}
	return "model_" + string(reason)
}
