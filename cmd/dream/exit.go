package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/nanobot"
)

// Exit codes (DESIGN.md): 0 completed, staged or a gate closed; 1 failed,
// timed out or killed (rolled back); 2 usage error; 3 the lock is held by
// another live holder (nothing was sent to any model). exitCode is the only
// place an error becomes one of them.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	exitHeld   = 3
)

// errUsage marks an error that is the user's input, exit code 2.
type errUsage struct{ msg string }

func (e errUsage) Error() string { return e.msg }

func usagef(format string, args ...any) error { return errUsage{fmt.Sprintf(format, args...)} }

// reportedError is a failure the command has already shown on stdout (a
// dream's report with its error, doctor's FAIL lines, eval's table): the
// exit code still says it failed, but nothing is printed twice. Under --json
// the message also goes to stderr, since stdout was the JSON.
type reportedError struct {
	code int
	err  error
}

func (e reportedError) Error() string { return e.err.Error() }
func (e reportedError) Unwrap() error { return e.err }

// reported wraps err (never nil) as already shown, with its exit code.
func reported(code int, err error) error { return reportedError{code, err} }

// cliError is what `--json` prints on stdout for a command that failed:
// {"error": {...}}. Code is a stable snake_case word scripts can switch on;
// Message is the sentence stderr shows.
type cliError struct {
	Code     string            `json:"code"`
	Message  string            `json:"message"`
	ExitCode int               `json:"exit_code"`
	Holder   *dream.LockHolder `json:"holder,omitempty"`
}

// Error codes of cliError.Code.
const (
	codeUsage       = "usage"
	codeLockHeld    = "lock_held"
	codeFailed      = "failed"
	codeNoRemote    = "no_remote"
	codeLocked      = "session_locked"
	codeActive      = "session_active"
	codeInterrupted = "interrupted"
	// codeUndoConflict: later edits touch what the undo would restore;
	// --force restores anyway.
	codeUndoConflict = "undo_conflict"
)

// classify maps err to its exit code and its JSON form. It is the one place
// that decides which failure is which.
// classify maps err to its code, exit code and message. hint spells a
// command to paste (app.hint: quoted, with the state dir it needs); nil
// spells it plainly.
func classify(err error, hint func(args ...string) string) cliError {
	if hint == nil {
		hint = plainHint
	}
	e := cliError{Code: codeFailed, ExitCode: exitFailed, Message: message(err)}
	var u errUsage
	var held *dream.LockHeldError
	var rep reportedError
	var conflict *undoConflictError
	switch {
	case errors.As(err, &u):
		e.Code, e.ExitCode = codeUsage, exitUsage
	case errors.As(err, &held):
		e.Code, e.ExitCode = codeLockHeld, exitHeld
		h := held.LockHolder
		if h.Since != nil {
			since := h.Since.UTC()
			h.Since = &since
		}
		e.Holder = &h
		e.Message += lockHeldHint(held, time.Now(), hint)
	case errors.Is(err, dream.ErrLockHeld):
		e.Code, e.ExitCode = codeLockHeld, exitHeld
	case errors.As(err, &conflict):
		e.Code = codeUndoConflict
	case errors.Is(err, nanobot.ErrSessionsLocked):
		e.Code, e.ExitCode = codeLocked, exitHeld
	case errors.Is(err, nanobot.ErrSessionActive):
		e.Code = codeActive
	case errors.Is(err, dream.ErrNoRemote):
		e.Code, e.ExitCode = codeNoRemote, exitUsage
	case errors.Is(err, errInterrupted):
		e.Code = codeInterrupted
	}
	if errors.As(err, &rep) && rep.code != 0 {
		e.ExitCode = rep.code
	}
	return e
}

// errInterrupted: the user stopped the command (SIGINT, SIGTERM) before it
// finished.
var errInterrupted = errors.New("interrupted")

// message is err as one line for the user, said once: errors from the
// library begin with "dream: ", and the CLI prints that prefix itself.
func message(err error) string { return oneMessage(err.Error()) }

// oneMessage is message for an error already turned into text (a report's
// error field).
func oneMessage(s string) string {
	for strings.HasPrefix(s, "dream: ") {
		s = strings.TrimPrefix(s, "dream: ")
	}
	return strings.ReplaceAll(s, ": dream: ", ": ")
}

// exit turns what a command returned into the process's exit code, printing
// the message on stderr and, under --json, the error object on stdout. A
// request for help (flag.ErrHelp, the help already printed) is success.
func (a *app) exit(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	e := classify(err, a.hint)
	var rep reportedError
	shown := errors.As(err, &rep)
	jsonOut := a.jsonOut || a.askedJSON
	if !shown || jsonOut {
		fmt.Fprintf(a.stderr, "dream: %s\n", e.Message)
	}
	if jsonOut && !shown {
		writeJSON(a.stdout, a.stderr, struct {
			Error cliError `json:"error"`
		}{e})
	}
	return e.ExitCode
}

// writeJSON writes v as indented JSON on w; a failure to encode is said on
// errw.
func writeJSON(w, errw io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Messages and diffs carry <, > and &; JSON needs no HTML escapes.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(errw, "dream: encoding JSON: %v\n", err)
	}
}

// wantsJSON reports whether args ask for --json, for the errors that happen
// before the flags are parsed (an unknown command, a bad flag ahead of
// --json).
func wantsJSON(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			return false
		}
		switch arg {
		case "--json", "-json", "--json=true", "-json=true", "--json=1", "-json=1":
			return true
		}
	}
	return false
}

// lockHeldHint is what the user can do about a held lock: how long it has
// been held, and how to wait for or stop the holder.
func lockHeldHint(h *dream.LockHeldError, now time.Time, hint func(args ...string) string) string {
	if hint == nil {
		hint = plainHint
	}
	var b strings.Builder
	if h.Since != nil && now.After(*h.Since) {
		fmt.Fprintf(&b, " (%s ago)", now.Sub(*h.Since).Round(time.Second))
	}
	local, _ := os.Hostname()
	switch {
	case h.Host != "" && h.Host != local:
		fmt.Fprintf(&b, "; the dream runs on %s: wait for it to finish there (or for its lease to run out, if it died)", h.Host)
	case h.TaskID != "":
		fmt.Fprintf(&b, "; wait for it to finish, or stop it with: %s", hint("kill", h.TaskID))
	default:
		b.WriteString("; another dream or agent is consolidating this memory: wait for it to finish (dream status shows the holder; one that died is recovered at the next look)")
	}
	return b.String()
}

// undoConflictError is an undo refused because later changes touch the
// same lines; it names --force, the way past it.
type undoConflictError struct {
	id  string
	err error
	// force is the command that forces the undo, as app.hint spells it.
	force string
}

func (e *undoConflictError) Error() string {
	// The library's text ends with how to force it as a Go caller would
	// ("use force ..."); the command line says it with the flag.
	detail := message(e.err)
	if i := strings.Index(detail, " (use force"); i >= 0 {
		detail = detail[:i]
	}
	if _, after, ok := strings.Cut(detail, dream.ErrUndoConflict.Error()+": "); ok {
		detail = after
	}
	force := e.force
	if force == "" {
		force = plainHint("undo", e.id, "--force")
	}
	return fmt.Sprintf("cannot undo %s: the memory changed since that dream: %s; `%s` restores these files to their content before the dream, dropping the later changes to them (they stay in the history: dream log)", e.id, detail, force)
}

func (e *undoConflictError) Unwrap() error { return e.err }

// plainHint spells a command without the flags app.hint adds.
func plainHint(args ...string) string {
	words := append([]string{"dream"}, args...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}
