package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
)

// repeatLimit is how many times the same call (tool and canonical input) may
// run in one dream. A model that asks a third time is not learning anything
// new from the answer; refusing tells it so and breaks the loop cheaply.
const repeatLimit = 2

// callOutcome is one executed (or refused) tool call.
type callOutcome struct {
	block   llm.Block // the tool_result sent back
	touched string    // memory file written, only on success
	errMsg  string    // why the call was refused or failed
	// refused is set when the call never ran: an unknown tool, bad JSON,
	// invalid input or a repeat. A call that ran and failed (a file that no
	// longer exists, which is exactly what a drift check finds) is a fact
	// about the world, not a sign that the model is stuck.
	refused bool
}

// dispatcher executes tool calls and remembers, for the whole run, how often
// each distinct call was made.
type dispatcher struct {
	tools   *toolset
	seen    map[string]int
	timeout time.Duration // per call; a call still running then is abandoned
	// late receives the outcome of abandoned calls that finish after all,
	// so that a write that landed late is still recorded as touched.
	late chan callOutcome
}

func newDispatcher(ts *toolset, timeout time.Duration) *dispatcher {
	return &dispatcher{tools: ts, seen: make(map[string]int), timeout: timeout, late: make(chan callOutcome, 64)}
}

// execute runs one validated call on its own goroutine and waits for it, the
// per-call timeout or ctx, whichever ends first. A tool that overruns (a
// read stuck on a hung network mount, a walk of an enormous tree) is
// abandoned with an error result: the dream's deadline holds whatever a tool
// does. The tool gets a context that ends at the same moment, so every tool
// that honours it stops promptly; if one finishes anyway, its outcome goes
// to late.
func (d *dispatcher) execute(ctx context.Context, tool tools.Tool, input json.RawMessage) (tools.Result, error) {
	callCtx, cancel := context.WithTimeout(ctx, d.timeout)
	type answer struct {
		res tools.Result
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		defer cancel()
		res, err := tool.Execute(callCtx, input)
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		return a.res, a.err
	case <-callCtx.Done():
	}
	// Prefer an answer that arrived at the same instant.
	select {
	case a := <-ch:
		return a.res, a.err
	default:
	}
	go func() {
		a := <-ch
		if a.err == nil && a.res.Touched != "" {
			select {
			case d.late <- callOutcome{touched: a.res.Touched}:
			default:
			}
		}
	}()
	why := fmt.Sprintf("it ran past its %v limit", d.timeout)
	if ctx.Err() != nil {
		why = "the dream's deadline passed (" + ctx.Err().Error() + ")"
	}
	return tools.Result{}, fmt.Errorf("%w: %s; try a narrower call", errAbandoned, why)
}

// errAbandoned marks a tool call given up on while it still ran.
var errAbandoned = errors.New("call abandoned")

// call runs one tool_use block. Every failure becomes an is_error result the
// model can correct itself from; none of them ends the run.
func (d *dispatcher) call(ctx context.Context, use llm.Block) callOutcome {
	fail := func(msg string) callOutcome {
		return callOutcome{
			block:   llm.Block{Type: llm.BlockToolResult, ID: use.ID, Text: msg, IsError: true},
			errMsg:  msg,
			refused: true,
		}
	}
	tool, ok := d.tools.byName[use.Name]
	if !ok {
		return fail(fmt.Sprintf("unknown tool %q; available tools: %s", use.Name, d.tools.names()))
	}
	input, err := canonicalJSON(use.Input)
	if err != nil {
		return fail(fmt.Sprintf("%s: %v", use.Name, err))
	}
	key := use.Name + "\x00" + string(input)
	d.seen[key]++
	if n := d.seen[key]; n > repeatLimit {
		return fail(fmt.Sprintf("%s refused: this exact call was already requested %d times in this run and its result is above; "+
			"use that result, or change the input, or finish", use.Name, n-1))
	}
	if err := tool.Validate(input); err != nil {
		return fail(fmt.Sprintf("%s: invalid input: %v", use.Name, err))
	}
	res, err := d.execute(ctx, tool, input)
	if err != nil {
		out := fail(fmt.Sprintf("%s failed: %v", use.Name, err))
		out.refused = false
		return out
	}
	if res.Touched != "" {
		// The memory changed, so reading it again is new information: the
		// repeat count starts over rather than refusing a re-read after an
		// edit as "already answered above".
		clear(d.seen)
	}
	content := res.Content
	if content == "" {
		// Some providers reject an empty tool result; say so explicitly.
		content = "(no output)"
	}
	return callOutcome{
		block:   llm.Block{Type: llm.BlockToolResult, ID: use.ID, Text: content},
		touched: res.Touched,
	}
}

// names lists the tools in their offered order, for an unknown-tool error.
func (s *toolset) names() string {
	out := ""
	for i, d := range s.defs {
		if i > 0 {
			out += ", "
		}
		out += d.Name
	}
	if out == "" {
		return "(none)"
	}
	return out
}
