package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/internal/trust"
	"github.com/dreamkit/dream/provider"
)

// checkWritable refuses dir as a place this command writes when it holds
// credentials (trust.CheckWritableDir): history append and compact write
// outside a dream, so the check New makes for a dream is made here too.
func (a *app) checkWritable(role, dir string) error {
	home := a.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return trust.CheckWritableDir(role, dir, a.env, home)
}

// historyMemoryDir is the directory holding history.jsonl: WORKSPACE/memory
// for --host nanobot; for --memory-dir DIR, DIR itself when it holds the log
// or is named "memory", else DIR/memory.
func (a *app) historyMemoryDir() (string, error) {
	mem, _, _, err := a.locations()
	if err != nil {
		return "", err
	}
	if a.isNanobot() {
		return filepath.Join(mem, "memory"), nil
	}
	if _, err := os.Stat(filepath.Join(mem, nanobot.LogName)); err == nil || filepath.Base(filepath.Clean(mem)) == "memory" {
		return mem, nil
	}
	if fi, err := os.Stat(filepath.Join(mem, "memory")); err == nil && fi.IsDir() {
		return filepath.Join(mem, "memory"), nil
	}
	return mem, nil
}

// historyView is the JSON of `dream history show|tail`.
type historyView struct {
	Entries      []nanobot.Entry   `json:"entries"`
	Problems     []nanobot.Problem `json:"problems"`
	DreamCursor  int64             `json:"dream_cursor"`
	LatestCursor int64             `json:"latest_cursor"`
	Path         string            `json:"path"`
}

// historyFlags are `dream history`'s own flags, shared by its subcommands.
type historyFlags struct {
	maxChars    int
	since       int64
	limit, n    int
	unified     bool
	unprocessed bool
}

// cmdHistory reads and appends nanobot's history.jsonl: append, show, tail.
func cmdHistory(a *app, args []string) error {
	var f historyFlags
	pos, err := a.standardCommand("history", args, func(fs *flag.FlagSet) {
		fs.IntVar(&f.maxChars, "max-chars", 0, "append: cap the entry at this many characters (default 64000)")
		fs.Int64Var(&f.since, "since", 0, "show: entries after this `CURSOR`")
		fs.BoolVar(&f.unprocessed, "unprocessed", false, "show: entries after the dream cursor (what the next dream reads)")
		fs.IntVar(&f.limit, "limit", 0, "show: at most this many entries (0: all)")
		fs.IntVar(&f.n, "n", 10, "tail: how many entries")
		fs.BoolVar(&f.unified, "unified", false, "show/tail with --session: this session's entries plus every non-internal session's")
	})
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("history takes append, show or tail (see dream help history)")
	}
	dir, err := a.historyMemoryDir()
	if err != nil {
		return err
	}
	log := nanobot.OpenLog(dir, nanobot.LogOptions{})
	switch pos[0] {
	case "append":
		return a.historyAppend(log, dir, pos, f)
	case "show", "tail":
		if len(pos) > 1 {
			return usagef("history %s takes no further arguments; got %q", pos[0], pos[1])
		}
		return a.historyShow(log, pos[0], f)
	default:
		return unknownWord("history subcommand", pos[0], []string{"append", "show", "tail"}, "use append, show or tail")
	}
}

// historyAppend is `dream history append`: the text from the arguments, or
// from stdin when there are none (or "-"), as one entry of the log in dir.
func (a *app) historyAppend(log *nanobot.Log, dir string, pos []string, f historyFlags) error {
	if err := a.checkWritable("history dir", dir); err != nil {
		return err
	}
	text := strings.Join(pos[1:], " ")
	if len(pos) == 1 || text == "-" {
		b, err := io.ReadAll(io.LimitReader(a.stdin, 4<<20))
		if err != nil {
			return err
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return usagef("history append: nothing to append (give the text as arguments, or on stdin)")
	}
	e, err := log.Append(a.ctx, text, nanobot.AppendOptions{MaxChars: f.maxChars, SessionKey: a.session})
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(e)
	} else {
		fmt.Fprintf(a.stdout, "appended cursor %d\n", e.Cursor)
	}
	return nil
}

// historyShow is `dream history show` and `dream history tail`: the same
// view of the log, from a cursor or from the end.
func (a *app) historyShow(log *nanobot.Log, sub string, f historyFlags) error {
	q := nanobot.Query{Session: a.session, Unified: f.unified}
	dc, err := log.DreamCursor()
	if err != nil {
		return err
	}
	var res nanobot.ReadResult
	if sub == "show" {
		since := f.since
		if f.unprocessed {
			since = dc
		}
		q.Limit = f.limit
		res, err = log.After(a.ctx, since, q)
	} else {
		res, err = log.Tail(a.ctx, f.n, q)
	}
	if err != nil {
		return err
	}
	latest, _ := log.LatestCursor(a.ctx)
	v := historyView{Entries: res.Entries, Problems: res.Problems, DreamCursor: dc, LatestCursor: latest, Path: log.Path()}
	if v.Problems == nil {
		v.Problems = []nanobot.Problem{}
	}
	if a.jsonOut {
		a.printJSON(v)
		return nil
	}
	a.printHistory(v)
	return nil
}

// printHistory prints a history view for a person: one line per entry,
// marked when a dream has consumed it, then the cursors; skipped lines go
// to stderr.
func (a *app) printHistory(v historyView) {
	dc := v.DreamCursor
	for _, e := range v.Entries {
		mark := " "
		if e.Cursor <= dc {
			mark = "✓" // consumed by a dream
		}
		key := ""
		if e.SessionKey != "" {
			key = " (" + e.SessionKey + ")"
		}
		fmt.Fprintf(a.stdout, "%s %6d [%s]%s %s\n", mark, e.Cursor, e.Timestamp, key, strings.ReplaceAll(nanobot.Truncate(e.Content, 300), "\n", "\n         "))
	}
	for _, p := range v.Problems {
		fmt.Fprintf(a.stderr, "dream: %s: skipped the line at byte %d: %s\n", v.Path, p.Offset, p.Reason)
	}
	fmt.Fprintf(a.stdout, "%d entr%s; dream cursor %d, latest %d\n", len(v.Entries), map[bool]string{true: "y", false: "ies"}[len(v.Entries) == 1], dc, v.LatestCursor)
}

// compactView is the JSON of `dream compact`.
type compactView struct {
	nanobot.SessionReport
	Session string `json:"session"`
	File    string `json:"file"`
	Raw     bool   `json:"raw_only,omitempty"`
}

func cmdCompact(a *app, args []string) error {
	var (
		force         bool
		idleAfter     time.Duration
		contextWindow int
		maxOutput     int
		ratio         float64
	)
	pos, err := a.standardCommand("compact", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&force, "force", false, "compact even if the session was used within --idle-after (never while its files are locked)")
		fs.DurationVar(&idleAfter, "idle-after", nanobot.DefaultIdleAfter, "how long the session must have been idle")
		fs.IntVar(&contextWindow, "context-window", nanobot.DefaultContextWindow, "the model's context window, in tokens")
		fs.IntVar(&maxOutput, "max-output", nanobot.DefaultMaxOutput, "the model's output budget, in tokens")
		fs.Float64Var(&ratio, "ratio", nanobot.DefaultRatio, "target share of the budget (0.1-0.95)")
	})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("compact takes one session: a session file, or a session key found in --sessions-dir")
	}
	if ratio < nanobot.MinRatio || ratio > nanobot.MaxRatio {
		return usagef("--ratio %g: want %g to %g", ratio, nanobot.MinRatio, nanobot.MaxRatio)
	}
	_, sessions, _, err := a.locations()
	if err != nil {
		return err
	}
	path, err := nanobot.FindSession(sessions, pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	memDir, err := a.historyMemoryDir()
	if err != nil {
		return err
	}
	if err := a.checkWritable("history dir", memDir); err != nil {
		return err
	}
	if err := a.checkWritable("sessions dir", filepath.Dir(path)); err != nil {
		return err
	}
	choice, err := provider.Choose(a.loaded.Settings, a.getenv)
	if err != nil {
		return usagef("%v", err)
	}
	if choice.Provider == nil && !a.jsonOut {
		a.note("dream: no model (%s): the session is archived raw, unsummarised", choice.Why)
	}
	c := &nanobot.Consolidator{Provider: choice.Provider, Model: choice.Model, ContextWindow: contextWindow, MaxOutput: maxOutput, Ratio: ratio, Archive: nanobot.WorkspaceHistory(memDir)}
	rep, err := nanobot.CompactFile(a.ctx, c, path, nanobot.CompactFileOptions{IdleAfter: idleAfter, Force: force})
	switch {
	case errors.Is(err, nanobot.ErrSessionsLocked):
		return fmt.Errorf("refused: %w", err)
	case errors.Is(err, nanobot.ErrSessionActive):
		return fmt.Errorf("refused: %w (pass --force to compact it anyway)", err)
	case err != nil:
		return err
	}
	key, _ := nanobot.KeyFromName(path)
	if s, lerr := nanobot.LoadSession(path); lerr == nil {
		key = s.Key
	}
	v := compactView{SessionReport: rep, Session: key, File: path, Raw: choice.Provider == nil}
	if a.jsonOut {
		a.printJSON(v)
		return nil
	}
	fmt.Fprintf(a.stdout, "%s: %s; %d message(s) archived (%d summar%s, %d raw, %d nothing), last_consolidated %d, prompt %d -> %d tokens (%s)\n",
		key, rep.Stopped, rep.Archived, rep.Summaries, map[bool]string{true: "y", false: "ies"}[rep.Summaries == 1], rep.RawArchives, rep.NothingAnswers, rep.LastConsolidated, rep.TokensBefore, rep.TokensAfter, rep.Counter)
	return nil
}
