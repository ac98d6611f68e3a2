package main

import (
	"flag"
	"io"
)

// settingFlag is a flag that sets a settings key: the key is the flag name
// with '-' replaced by '_'. The help text quotes the value's placeholder
// (`DIR`), which help and messages show (flag.UnquoteUsage).
type settingFlag struct{ name, help string }

// flagGroup is a set of flags several commands read, shown together in
// their help under its title.
type flagGroup struct {
	title    string
	settings []settingFlag
	// session and hook are the app's own --session and --hook.
	session, hook bool
}

var (
	// groupLocation: where the memory, its transcripts, the code and
	// dream's own state are.
	groupLocation = flagGroup{title: "Location", settings: []settingFlag{
		{"memory-dir", "the memory `DIR` to consolidate"},
		{"sessions-dir", "the `DIR` of the agent's *.jsonl transcripts"},
		{"repo", "the code the memory describes, a `DIR` (default: the current directory)"},
		{"host", "derive the locations from an agent's layout: `NAME` is claude, codex, gemini, nanobot, codebot or dir"},
		{"state-dir", "the `DIR` where dream keeps tasks, telemetry, journals and audit history"},
	}}
	// groupSession: the session the caller is in, which never counts.
	groupSession = flagGroup{title: "Session", session: true}
	// groupHook: the same, read from an agent hook's payload.
	groupHook = flagGroup{title: "Session", hook: true}
	// groupModel: which model dreams, and its budget.
	groupModel = flagGroup{title: "Model", settings: []settingFlag{
		{"provider", "`NAME`: anthropic, openai or offline (default: by the keys that are set)"},
		{"model", "the model `NAME`"},
		{"base-url", "the provider's base `URL` (Ollama, vLLM, OpenRouter, a proxy ...)"},
		{"max-turns", "at most `N` model turns per dream"},
		{"max-tokens", "at most `N` tokens (input+output, cached included) per dream"},
		{"timeout", "the longest a dream may run, a `DURATION` such as 10m"},
	}}
	// groupGates: when a dream may start by itself.
	groupGates = flagGroup{title: "Gate", settings: []settingFlag{
		{"min-hours", "`HOURS` since the last consolidation before a dream may start"},
		{"min-sessions", "`N` sessions touched since the last consolidation before a dream may start"},
	}}
	// groupLock: the consolidation lock's backend.
	groupLock = flagGroup{title: "Lock", settings: []settingFlag{
		{"lock", "the consolidation lock's `BACKEND`: file or etcd"},
		{"etcd-endpoints", "etcd client `URLS` for --lock etcd, ';'-separated"},
	}}
	// groupSync: the memory's history on a git remote.
	groupSync = flagGroup{title: "Sync", settings: []settingFlag{
		{"sync-remote", "the git `URL` the memory's history is pulled from and pushed to"},
		{"sync-branch", "this memory's `BRANCH` on the sync remote (default: from the memory dir's path under $HOME)"},
	}}
)

// commandFlags lists the flag groups each command reads, besides its own
// flags and --json, which every command takes. A command missing here
// (one added later) gets every group, as every command did before.
func commandFlags(name string) []flagGroup {
	dreaming := []flagGroup{groupLocation, groupSession, groupHook, groupModel, groupGates, groupLock, groupSync}
	history := []flagGroup{groupLocation, groupLock}
	switch name {
	case "run", "maybe", "daemon", "mcp", "config":
		return dreaming
	case "status":
		return []flagGroup{groupLocation, groupSession, groupHook, groupGates, groupLock, groupSync}
	case "hook":
		// Every flag `dream maybe` takes: a hook line names what its
		// detached maybe needs (--provider, --lock, --timeout ...), and the
		// hook passes them on; a flag it refused would silently stop every
		// dream, since a hook always exits 0.
		return []flagGroup{groupLocation, groupSession, groupModel, groupGates, groupLock, groupSync}
	case "tasks", "kill", "stats", "log", "show", "diff", "discard":
		return []flagGroup{groupLocation}
	case "undo", "apply":
		return history
	case "sync":
		return []flagGroup{groupLocation, groupLock, groupSync}
	case "doctor":
		return []flagGroup{groupLocation, groupModel, groupGates}
	case "eval", "demo":
		return []flagGroup{groupModel}
	case "history":
		return []flagGroup{groupLocation, groupSession}
	case "compact":
		return []flagGroup{groupLocation, groupModel}
	case "init", "trust":
		return []flagGroup{{title: "Location", settings: groupLocation.settings[2:3]}}
	case "version", "help":
		return nil
	}
	return dreaming
}

// newFlags returns the FlagSet of command name with the groups it reads
// (commandFlags) and --json; the settings flags are collected as raw
// strings so that the settings package can validate them and name their
// source.
func (a *app) newFlags(name string) (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("dream "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	raw := make(map[string]*string)
	for _, g := range commandFlags(name) {
		for _, f := range g.settings {
			if raw[f.name] == nil {
				raw[f.name] = fs.String(f.name, "", f.help)
			}
		}
		if g.session {
			fs.StringVar(&a.session, "session", "", "the current session `ID`, excluded from the session gate (ID.jsonl or *_ID.jsonl)")
		}
		if g.hook {
			fs.BoolVar(&a.hook, "hook", false, "read an agent hook's JSON payload on stdin (Claude Code, Codex, Gemini: session_id, cwd) for --session and --repo")
		}
	}
	fs.BoolVar(&a.jsonOut, "json", false, "print one JSON value on stdout (an error too: {\"error\": {...}})")
	return fs, raw
}
