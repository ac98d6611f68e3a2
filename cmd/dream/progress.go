package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/lossguard"
	"github.com/dreamkit/dream/llm"
)

// progressView shows a running dream: one live line on a terminal (phase,
// turn, files touched, tokens, the latest action), plain lines otherwise so
// that logs and CI output stay readable.
type progressView struct {
	w     io.Writer
	live  bool
	quiet bool

	mu     sync.Mutex
	phase  string
	turn   int
	files  map[string]bool
	usage  llm.Usage
	last   string
	drawAt time.Time   // when the live line was last drawn; zero: never
	later  *time.Timer // draws what a skipped draw left unshown
	task   string
}

// redrawEvery is how often at most the live line is drawn again: a dream
// of a big memory reports tens of thousands of files written, and a
// terminal redrawing a line for each costs the dream more than the
// writing, for a change no one can read that fast.
const redrawEvery = 100 * time.Millisecond

func newProgressView(w io.Writer, live, quiet bool) *progressView {
	return &progressView{w: w, live: live, quiet: quiet, phase: "starting", files: map[string]bool{}}
}

// on is the Dreamer's OnProgress callback.
func (v *progressView) on(taskID string, p dream.Progress) {
	if v.quiet {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var line string
	switch p.Kind {
	case dream.ProgressTurn:
		if p.Turn > v.turn {
			v.turn = p.Turn
		}
		v.last = oneLine(p.Text, 80)
		line = fmt.Sprintf("turn %d: %s", p.Turn, oneLine(p.Text, 160))
		if p.Turn == 0 {
			line = oneLine(p.Text, 160)
		}
	case dream.ProgressToolCall:
		v.last = p.Tool + " " + oneLine(p.Text, 60)
		mark := ""
		if p.IsError {
			mark = " (refused)"
		}
		line = fmt.Sprintf("  %s %s%s", p.Tool, oneLine(p.Text, 140), mark)
	case dream.ProgressFileTouched:
		v.phase = "updating"
		v.files[p.Path] = true
		v.last = "wrote " + printable(p.Path)
		line = "  wrote " + printable(p.Path)
	case dream.ProgressUsage:
		v.usage = p.Usage
		if !v.live {
			return
		}
	}
	if v.live {
		v.task = taskID
		now := time.Now()
		if wait := redrawEvery - now.Sub(v.drawAt); !v.drawAt.IsZero() && wait > 0 {
			// Too soon: drawn when the interval is up, so that the line
			// never stays behind the last event.
			if v.later == nil {
				v.later = time.AfterFunc(wait, v.redraw)
			}
			return
		}
		v.draw(now)
		return
	}
	if line != "" {
		fmt.Fprintln(v.w, line)
	}
}

// draw draws the live line; the caller holds v.mu.
func (v *progressView) draw(now time.Time) {
	fmt.Fprintf(v.w, "\r\033[K%s", v.status(v.task))
	v.drawAt = now
}

// redraw is the timer's deferred draw.
func (v *progressView) redraw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.later == nil {
		return // done stopped it
	}
	v.later = nil
	v.draw(time.Now())
}

func (v *progressView) status(taskID string) string {
	s := fmt.Sprintf("dream %s: %s · turn %d · %d file(s) · %s tokens", taskID, v.phase, v.turn, len(v.files), humanCount(v.usage.Total()))
	if v.last != "" {
		s += " · " + v.last
	}
	return oneLine(s, 150)
}

// done clears the live line.
func (v *progressView) done() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.later != nil {
		v.later.Stop()
		v.later = nil
	}
	if v.live && !v.drawAt.IsZero() {
		fmt.Fprint(v.w, "\r\033[K")
	}
}

func oneLine(s string, max int) string {
	s = printable(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// printable shows each control character of s as its \x escape: a file
// name or a memory line holding an escape sequence (planted, or synced
// from another machine) would otherwise drive the user's terminal.
func printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 }

func humanCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// printReport prints a finished dream for a person; hint spells the
// commands it suggests (app.hint), so they work when pasted.
func printReport(w io.Writer, r dream.Report, hint func(args ...string) string) {
	u := r.Usage
	fmt.Fprintf(w, "dream %s: %s in %.1fs · %d turn(s) · %d tool call(s) · tokens in %s out %s cache read %s created %s\n",
		r.TaskID, r.Status, float64(r.DurationMS)/1000, r.Turns, r.ToolCalls,
		humanCount(u.InputTokens), humanCount(u.OutputTokens), humanCount(u.CacheReadInputTokens), humanCount(u.CacheCreationInputTokens))
	if r.Estimate != nil || r.Cost != nil {
		printSpend(w, r)
	}
	overBudget := r.Index != nil && r.Index.OverBudget
	if r.Error != "" {
		fmt.Fprintf(w, "error: %s\n", oneMessage(r.Error))
		if r.Status != dream.StatusCompleted {
			fmt.Fprintln(w, "the memory is unchanged and the lock was rolled back")
		}
	}
	if r.ParkReason != "" && strings.HasPrefix(r.ParkReason, dream.ParkIncomplete) {
		fmt.Fprintf(w, "%s\n", oneMessage(r.ParkReason))
	}
	switch {
	case r.Status == dream.StatusStaged:
		fmt.Fprintf(w, "staged %d change(s) for review: %s · %s · %s\n", len(r.Changes), hint("diff", r.TaskID), hint("apply", r.TaskID), hint("discard", r.TaskID))
	case r.Status == dream.StatusCompleted && len(r.FilesTouched) > 0 && r.Job != "":
		fmt.Fprintf(w, "job %s wrote %d file(s) in %s: %s\n", r.Job, len(r.FilesTouched), r.MemoryDir, printable(strings.Join(r.FilesTouched, ", ")))
		fmt.Fprintf(w, "see the diff: %s · undo it: %s\n", hint("show", r.TaskID), hint("undo", r.TaskID))
	case r.Status == dream.StatusCompleted && len(r.FilesTouched) > 0:
		fmt.Fprintf(w, "Improved %d memor%s: %s\n", len(r.FilesTouched), plural(len(r.FilesTouched), "y", "ies"), printable(strings.Join(r.FilesTouched, ", ")))
		fmt.Fprintf(w, "see the diff: %s · undo it: %s\n", hint("show", r.TaskID), hint("undo", r.TaskID))
	case r.Status == dream.StatusDryRun && len(r.Changes) == 0 && overBudget:
		fmt.Fprintln(w, "dry run: a dream now would change nothing, and the index would stay over budget")
	case r.Status == dream.StatusDryRun && len(r.Changes) == 0:
		fmt.Fprintln(w, "dry run: nothing needs changing")
	case r.Status == dream.StatusDryRun:
		fmt.Fprintf(w, "dry run: a dream now would change %d file(s); nothing was written and the time gate did not move\n", len(r.Changes))
		printChanges(w, r.Changes)
		writeDiff(w, r.Diff, isTerminal(w))
	case r.Status == dream.StatusCompleted && overBudget:
		fmt.Fprintln(w, "nothing was changed, and the index is still over budget")
	case r.Status == dream.StatusCompleted:
		fmt.Fprintln(w, "nothing needed changing")
	}
	if overBudget {
		fmt.Fprintf(w, "index over budget: %s\n", r.Index.Message)
	}
	if len(r.ForReview) > 0 && r.ReviewID != "" {
		fmt.Fprintf(w, "held for review while the rest landed: %s · %s · %s · %s\n", printable(strings.Join(r.ForReview, ", ")), hint("diff", r.ReviewID), hint("apply", r.ReviewID), hint("discard", r.ReviewID))
	}
	if r.Status == dream.StatusCompleted || r.Status == dream.StatusStaged || r.Status == dream.StatusDryRun {
		printUnits(w, r.Units)
		if r.Summary != "" {
			fmt.Fprintf(w, "summary: %s\n", oneLine(r.Summary, 400))
		}
		if r.ModelSummary != "" && len(r.Changes) > 0 { // a claim of a dream that changed nothing is no news
			fmt.Fprintf(w, "the model's own summary (unchecked): %s\n", oneLine(r.ModelSummary, 400))
		}
	}
	if s := r.Sync; s != nil {
		fmt.Fprintf(w, "sync: pulled %d commit(s), pushed %d\n", s.Pulled, s.Pushed)
		if s.Error != "" {
			fmt.Fprintf(w, "sync error: %s\n", oneMessage(s.Error))
		}
	}
}

// maxUnitsShown bounds the units a report prints; --json has them all.
const maxUnitsShown = 40

// printUnits lists what became of each unit a model dream removed or
// rewrote, and of each changed value its evidence or why it is held:
// `dream run` and `dream show` print alike.
func printUnits(w io.Writer, raw []json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	units := make([]lossguard.Entry, 0, len(raw))
	for _, r := range raw {
		var u lossguard.Entry
		if json.Unmarshal(r, &u) == nil {
			units = append(units, u)
		}
	}
	fmt.Fprintln(w, "units removed or rewritten:")
	for i, u := range units {
		if i == maxUnitsShown {
			fmt.Fprintf(w, "  … and %d more (--json lists them all)\n", len(units)-maxUnitsShown)
			break
		}
		line := fmt.Sprintf("  %-9s %s:%d %q", u.Fate, printable(u.File), u.Line, oneLine(u.Text, 70))
		if u.To != nil {
			line += fmt.Sprintf(" → %s:%d %q", printable(u.To.File), u.To.Line, oneLine(u.To.Text, 70))
			if u.Lost {
				line += " (most of its words are gone)"
			}
		}
		fmt.Fprintln(w, line)
		switch {
		case u.Held != "":
			fmt.Fprintf(w, "            held for review: %s\n", strings.TrimPrefix(u.Held, dream.ParkLossGuard))
		case u.Evidence != nil:
			fmt.Fprintf(w, "            evidence (%s): %s: %s\n", u.Evidence.By, u.Evidence.Source, oneLine(u.Evidence.Quote, 120))
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
