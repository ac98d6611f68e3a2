// Package cmdline is the part of dream's command line that both of its
// starts read: the flags each command takes, their parsing, and the
// settings they layer onto. The full command (package main) and the early
// start of the hook path (package early, which runs before the SDKs and
// the rest of the binary initialise) must read one command line the same
// way, so the table and the rules live here once. It imports nothing
// heavier than the settings package: whatever it imports initialises
// before the early start can answer.
package cmdline

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"strings"
)

// SettingFlag is a flag that sets a settings key: the key is the flag name
// with '-' replaced by '_'. The help text quotes the value's placeholder
// (`DIR`), which help and messages show (flag.UnquoteUsage).
type SettingFlag struct{ Name, Help string }

// Group is a set of flags several commands read, shown together in
// their help under its title.
type Group struct {
	Title    string
	Settings []SettingFlag
	// Session and Hook are the command's own --session and --hook.
	Session, Hook bool
}

// Names is the names of the flags g registers.
func (g Group) Names() []string {
	var names []string
	for _, f := range g.Settings {
		names = append(names, f.Name)
	}
	if g.Session {
		names = append(names, "session")
	}
	if g.Hook {
		names = append(names, "hook")
	}
	return names
}

var (
	// groupLocation: where the memory, its transcripts, the code and
	// dream's own state are.
	groupLocation = Group{Title: "Location", Settings: []SettingFlag{
		{"memory-dir", "the memory `DIR` to consolidate"},
		{"sessions-dir", "the `DIR` of the agent's *.jsonl transcripts"},
		{"repo", "the code the memory describes, a `DIR` (default: the current directory)"},
		{"host", "derive the locations from an agent's layout: `NAME` is claude, codex, gemini, nanobot, codebot or dir"},
		{"state-dir", "the `DIR` where dream keeps tasks, telemetry, journals and audit history"},
	}}
	// groupSession: the session the caller is in, which never counts.
	groupSession = Group{Title: "Session", Session: true}
	// groupHook: the same, read from an agent hook's payload.
	groupHook = Group{Title: "Session", Hook: true}
	// groupModel: which model dreams, and its budget.
	groupModel = Group{Title: "Model", Settings: []SettingFlag{
		{"provider", "`NAME`: anthropic, openai or offline (default: by the keys that are set)"},
		{"model", "the model `NAME`"},
		{"base-url", "the provider's base `URL` (Ollama, vLLM, OpenRouter, a proxy ...)"},
		{"max-turns", "at most `N` model turns per dream"},
		{"max-tokens", "at most `N` tokens (input+output, cached included) per dream"},
		{"timeout", "the longest a dream may run, a `DURATION` such as 10m"},
	}}
	// groupGates: when a dream may start by itself.
	groupGates = Group{Title: "Gate", Settings: []SettingFlag{
		{"min-hours", "`HOURS` since the last consolidation before a dream may start"},
		{"min-sessions", "`N` sessions touched since the last consolidation before a dream may start"},
	}}
	// groupLock: the consolidation lock's backend.
	groupLock = Group{Title: "Lock", Settings: []SettingFlag{
		{"lock", "the consolidation lock's `BACKEND`: file or etcd"},
		{"etcd-endpoints", "etcd client `URLS` for --lock etcd, ';'-separated"},
	}}
	// groupSync: the memory's history on a git remote.
	groupSync = Group{Title: "Sync", Settings: []SettingFlag{
		{"sync-remote", "the git `URL` the memory's history is pulled from and pushed to"},
		{"sync-branch", "this memory's `BRANCH` on the sync remote (default: from the memory dir's path under $HOME)"},
	}}
)

// Groups lists the flag groups each command reads, besides its own
// flags and --json, which every command takes. A command missing here
// (one added later) gets every group, as every command did before.
func Groups(name string) []Group {
	dreaming := []Group{groupLocation, groupSession, groupHook, groupModel, groupGates, groupLock, groupSync}
	history := []Group{groupLocation, groupLock}
	switch name {
	case "run", "maybe", "daemon", "mcp", "config":
		return dreaming
	case "status", "jobs":
		return []Group{groupLocation, groupSession, groupHook, groupGates, groupLock, groupSync}
	case "hook":
		// Every flag `dream maybe` takes: a hook line names what its
		// detached maybe needs (--provider, --lock, --timeout ...), and the
		// hook passes them on; a flag it refused would silently stop every
		// dream, since a hook always exits 0.
		return []Group{groupLocation, groupSession, groupModel, groupGates, groupLock, groupSync}
	case "tasks", "kill", "stats", "log", "show", "diff", "discard":
		return []Group{groupLocation}
	case "undo", "apply":
		return history
	case "sync":
		return []Group{groupLocation, groupLock, groupSync}
	case "doctor":
		return []Group{groupLocation, groupModel, groupGates}
	case "eval", "demo":
		return []Group{groupModel}
	case "history":
		return []Group{groupLocation, groupSession}
	case "compact":
		return []Group{groupLocation, groupModel}
	case "init", "trust":
		return []Group{{Title: "Location", Settings: groupLocation.Settings[2:3]}}
	case "version", "help":
		return nil
	}
	return dreaming
}

// New returns the FlagSet of command name with the groups it reads
// (Groups) and --json; the command's own --session, --hook and --json land
// in session, hook and jsonOut. The settings flags are collected as raw
// strings so that the settings package can validate them and name their
// source.
func New(name string, session *string, hook, jsonOut *bool) (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("dream "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	raw := make(map[string]*string)
	for _, g := range Groups(name) {
		for _, f := range g.Settings {
			if raw[f.Name] == nil {
				raw[f.Name] = fs.String(f.Name, "", f.Help)
			}
		}
		if g.Session {
			fs.StringVar(session, "session", "", "the current session `ID`, excluded from the session gate (ID.jsonl or *_ID.jsonl)")
		}
		if g.Hook {
			fs.BoolVar(hook, "hook", false, "read an agent hook's JSON payload on stdin (Claude Code, Codex, Gemini: session_id, cwd) for --session and --repo")
		}
	}
	fs.BoolVar(jsonOut, "json", false, "print one JSON value on stdout (an error too: {\"error\": {...}})")
	return fs, raw
}

// MissingValue finds a flag that takes a value but is followed by another
// flag (`--memory-dir --repo R`), which the flag package would silently
// take as the value; it returns the flag and what followed it, or nil.
func MissingValue(fs *flag.FlagSet, args []string) (f *flag.Flag, next string) {
	for i, arg := range args {
		if arg == "--" {
			return nil, ""
		}
		if !strings.HasPrefix(arg, "-") || strings.Contains(arg, "=") || i+1 >= len(args) {
			continue
		}
		f := fs.Lookup(strings.TrimLeft(arg, "-"))
		if f == nil {
			continue
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if next := args[i+1]; strings.HasPrefix(next, "--") && len(next) > 2 {
			return f, next
		}
	}
	return nil, ""
}

// Parse parses args allowing flags before and after positional arguments
// (`dream undo ID --memory-dir M`). It returns the positional arguments
// and the settings flags the user set, keyed as the settings package
// wants them (underscores); err is the flag package's own, flag.ErrHelp
// included.
func Parse(fs *flag.FlagSet, raw map[string]*string, args []string) (pos []string, flags map[string]string, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			pos = append(pos, rest[1:]...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	flags = map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if p, ok := raw[f.Name]; ok {
			flags[strings.ReplaceAll(f.Name, "-", "_")] = *p
		}
	})
	return pos, flags, nil
}

// HookPayloadLimit bounds what --hook reads from stdin.
const HookPayloadLimit = 1 << 20

// HookPayload takes the current session and the working directory from
// b, the JSON an agent passes its hooks on stdin, so that a stop hook can
// run `dream maybe --host claude --hook` and never count its own session.
// Flags given explicitly win: session is set only when empty, and the
// payload's cwd becomes flags["repo"] only when --repo was not given.
// Blank input (or JSON null) is no payload; anything else that does not
// decode as a payload object is an error.
func HookPayload(b []byte, session *string, flags map[string]string) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var p struct {
		SessionID string `json:"session_id"`
		CWD       string `json:"cwd"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if *session == "" {
		*session = p.SessionID
	}
	if _, set := flags["repo"]; !set && p.CWD != "" {
		flags["repo"] = p.CWD
	}
	return nil
}
