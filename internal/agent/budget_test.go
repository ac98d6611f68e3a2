package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// TestBudgetIsAskedBeforeEachRequest: the budget sees the usage so far
// and the next request's size before each request; what it allows lowers
// the request's output cap (never raises it); its refusal stops the run
// before the request is sent.
func TestBudgetIsAskedBeforeEachRequest(t *testing.T) {
	p := &scriptProvider{steps: steps(
		calls(use("1", "read", `{"file_path":"a.md"}`)),
		calls(use("2", "write", `{"file_path":"b.md","content":"x"}`)),
		done("never sent"),
	)}
	type ask struct {
		used, next llm.Usage
	}
	var asks []ask
	refusal := &spend.OverBudgetError{Ceiling: "max_cost_per_dream", Limit: 0.1, Used: 0.09, Need: 0.02, Running: true}
	res, err := Run(context.Background(), Config{Provider: p, Task: "t", Tools: defaultTools(),
		Budget: func(used, next llm.Usage) (int, error) {
			asks = append(asks, ask{used, next})
			switch len(asks) {
			case 1:
				return 1_000_000, nil // more than the usual cap: not raised
			case 2:
				return 300, nil
			}
			return 0, refusal
		}})
	if !errors.Is(err, spend.ErrOverBudget) || res.Stop != StopCeiling {
		t.Fatalf("Run = %v, stop %q; want the budget's refusal", err, res.Stop)
	}
	reqs := p.requests()
	if len(reqs) != 2 || res.Turns != 2 {
		t.Fatalf("%d requests, %d turns; want 2 (the third refused before it was sent)", len(reqs), res.Turns)
	}
	if reqs[0].MaxTokens != 0 || reqs[1].MaxTokens != 300 {
		t.Errorf("output caps %d, %d; want the provider's default (0) then 300", reqs[0].MaxTokens, reqs[1].MaxTokens)
	}
	// The first request is all new input; later ones re-send the
	// previous one, which the provider (smallUsage shows no cache) does
	// not read from a cache: all of it is priced as new input.
	if len(asks) != 3 || asks[0].used != (llm.Usage{}) || asks[2].used != res.Usage || asks[1].next.InputTokens <= 0 ||
		asks[2].next.InputTokens <= asks[1].next.InputTokens || asks[2].next.CacheReadInputTokens != 0 {
		t.Errorf("budget asked %+v", asks)
	}
	if len(res.FilesTouched) != 1 {
		t.Errorf("files touched %v: the write before the stop is kept in the result", res.FilesTouched)
	}
}

// TestAnswerCutByTheBudget: an answer that stopped at the output cap the
// budget lowered is unfinished: the run stops at the ceiling instead of
// ending as if the model were done.
func TestAnswerCutByTheBudget(t *testing.T) {
	cut := &llm.Response{Content: []llm.Block{{Type: llm.BlockText, Text: "Merged the"}}, StopReason: llm.StopMaxTokens, Usage: smallUsage}
	p := &scriptProvider{steps: steps(cut)}
	res, err := Run(context.Background(), Config{Provider: p, Task: "t", Tools: defaultTools(),
		Budget: func(llm.Usage, llm.Usage) (int, error) { return 400, nil }})
	if !errors.Is(err, spend.ErrOverBudget) || res.Stop != StopCeiling || !strings.Contains(err.Error(), "cut at the 400") {
		t.Fatalf("Run = %v, stop %q", err, res.Stop)
	}
	// The same stop without a lowered cap is the model's own.
	p = &scriptProvider{steps: steps(cut)}
	res, err = Run(context.Background(), Config{Provider: p, Task: "t", Tools: defaultTools()})
	if err != nil || res.Stop != "model_max_tokens" {
		t.Fatalf("Run without a budget = %v, stop %q", err, res.Stop)
	}
}

// TestMaxRequestTokens: a request whose input would pass the cap is not
// sent; the run stops with ErrContextFull.
func TestMaxRequestTokens(t *testing.T) {
	big := strings.Repeat("x", 30_000)
	p := &scriptProvider{steps: steps(calls(use("1", "read", `{"file_path":"a.md"}`)), done("never sent"))}
	ts := defaultTools()
	ts[0] = &fakeTool{name: "read", execute: func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Result{Content: big}, nil }}
	res, err := Run(context.Background(), Config{Provider: p, Task: "t", Tools: ts, MaxRequestTokens: 5000})
	if !errors.Is(err, ErrContextFull) || res.Stop != StopContext || len(p.requests()) != 1 {
		t.Fatalf("Run = %v, stop %q, %d requests; want ErrContextFull after 1", err, res.Stop, len(p.requests()))
	}
}

// TestBudgetSeesTheCachedPrefix: once the provider reports its prompt
// cache at work, the re-sent previous request is offered to the budget as
// a cache read and only what was added since as new input.
func TestBudgetSeesTheCachedPrefix(t *testing.T) {
	cachedUsage := llm.Usage{CacheReadInputTokens: 900, CacheCreationInputTokens: 100, OutputTokens: 20}
	first := calls(use("1", "read", `{"file_path":"a.md"}`))
	first.Usage = cachedUsage
	p := &scriptProvider{steps: steps(first, done("ok"))}
	var nexts []llm.Usage
	_, err := Run(context.Background(), Config{Provider: p, Task: "t", Tools: defaultTools(),
		Budget: func(_, next llm.Usage) (int, error) { nexts = append(nexts, next); return 1 << 20, nil }})
	if err != nil || len(nexts) != 2 {
		t.Fatalf("Run = %v, %d budget calls", err, len(nexts))
	}
	if nexts[1].CacheReadInputTokens != 1000 || nexts[1].InputTokens <= 0 {
		t.Errorf("second request offered as %+v; want the first's 1000 input tokens as a cache read and the rest as input", nexts[1])
	}
}
