package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/offline"
)

// Offline is the zero-token dream: only what is mechanical and
// certain (exact duplicates, relative dates, dangling pointers, unindexed
// topics, an index over budget). It sends nothing anywhere.
type Offline struct {
	// Now is the clock of the run; nil means time.Now. Relative dates are
	// resolved from when their lines were written, never from this.
	Now func() time.Time
	// Host is the agent whose layout says which file is an index (see
	// offline.LayoutIn); empty is the one the memory's own files name, or
	// a MEMORY.md index that fits every agent that keeps one.
	Host string
	// StateDir holds the audit history, which dates lines; empty reads no
	// history.
	StateDir string
}

// Run implements dream.Runner.
func (r *Offline) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	out, err := runOffline(ctx, job, now(), r.Host, r.StateDir)
	out.Strict = true // the engine may change only what its fixes name
	return out, err
}

// ReplacesFiles implements dream.FileReplacer: the offline engine writes
// each file to a temporary file and renames it.
func (*Offline) ReplacesFiles() bool { return true }

func runOffline(ctx context.Context, job dream.Job, now time.Time, host, stateDir string) (dream.Outcome, error) {
	tr, err := offline.LoadTranscripts(ctx, job.SessionsDir)
	if err != nil {
		return dream.Outcome{}, fmt.Errorf("offline engine: %w", err)
	}
	// Provenance, in order: the transcript call that wrote a line, then the
	// audit history's one-day windows (a dated heading comes first of all).
	var prov offline.Provenance = tr
	if ap := newAuditProvenance(ctx, stateDir, job.MemoryDisplayDir); ap != nil {
		prov = offline.Chain{tr, ap}
	}
	opts := offline.Options{MemoryDir: job.MemoryDir, RepoDir: job.RepoDir, Now: now, Layout: offline.LayoutIn(host, job.MemoryDir), Provenance: prov, Leads: true}
	rep, err := offline.Run(ctx, opts)
	if err != nil {
		return dream.Outcome{}, fmt.Errorf("offline engine: %w", err)
	}
	var accounted []dream.Accounted
	for _, f := range rep.Fixes {
		accounted = append(accounted, dream.Accounted{File: f.File, Start: f.Start, End: f.End})
	}
	for _, f := range rep.Fixes {
		text := f.Kind + " " + f.File
		if f.Detail != "" {
			text += ": " + f.Detail
		}
		job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: text})
	}
	for _, p := range rep.FilesTouched {
		job.Progress(dream.Progress{Kind: dream.ProgressFileTouched, Path: p})
	}
	summary := fmt.Sprintf("offline engine: %d fix(es) in %d file(s)", len(rep.Fixes), len(rep.FilesTouched))
	// Judgement calls are left alone offline, but the user should know
	// they are there: they are what a model dream would be handed.
	for _, l := range rep.Leads {
		at := l.File
		if l.Line > 0 {
			at = fmt.Sprintf("%s:%d", l.File, l.Line)
		}
		job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: fmt.Sprintf("lead: %s %s: %s", at, l.Kind, l.Detail)})
	}
	for _, n := range rep.Notes {
		job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: "note: " + n})
	}
	if leads := rep.Found; leads != nil {
		for _, p := range leads.CrossFileDuplicates {
			job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: fmt.Sprintf("lead: %s:%d and %s:%d hold the same text (a model dream decides whether it is one fact)", p.A.File, p.A.Line, p.B.File, p.B.Line)})
		}
		for _, r := range leads.DanglingPointers {
			job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: fmt.Sprintf("lead: %s:%d points to missing %s", r.File, r.Line, r.Text)})
		}
		for _, s := range leads.DriftSuspects {
			job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: fmt.Sprintf("lead: %s:%d names %s %q, which the repository no longer has", s.File, s.Line, s.Kind, s.Mention)})
		}
		for _, p := range leads.NearDuplicates {
			job.Progress(dream.Progress{Kind: dream.ProgressTurn, Text: fmt.Sprintf("lead: %s:%d and %s:%d say almost the same (%.0f%% alike)", p.A.File, p.A.Line, p.B.File, p.B.Line, 100*p.Similarity)})
		}
		if n := leads.Count(); n > 0 {
			summary += fmt.Sprintf("; %d lead(s) need judgement: a model dream gets them in its task", n)
		}
	}
	return dream.Outcome{FilesTouched: rep.FilesTouched, Summary: summary, Accounted: accounted, Index: indexBudget(rep.Index)}, nil
}

// indexBudget converts the engine's index state at the API's boundary.
func indexBudget(st *offline.IndexState) *dream.IndexBudget {
	if st == nil {
		return nil
	}
	l := st.Limit
	return &dream.IndexBudget{File: st.File, Lines: st.Lines, Size: st.Size, MaxLines: l.MaxLines, MaxSize: l.MaxSize, SizeUnit: l.Unit,
		OverBudget: st.OverBudget, Agent: l.Agent, Rule: l.Rule + " (" + l.Source + ")", Message: st.Message}
}
