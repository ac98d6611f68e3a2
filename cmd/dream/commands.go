package main

// command is one subcommand of dream.
type command struct {
	name    string
	args    string // usage of the positional arguments
	summary string
	run     func(a *app, args []string) error
}

// commands lists every subcommand in the order `dream help` shows them.
// It is a function, not a package variable, so that tests never share
// state through it.
func commands() []command {
	return []command{
		{"run", "", "one dream now: skips the time, throttle and session gates, takes the lock", cmdRun},
		{"maybe", "", "the gate funnel: dreams in the foreground if every gate opens, else says which gate is closed", cmdMaybe},
		{"status", "", "why a dream would or would not start now: each gate, the lock holder, last consolidation, the index as its agent counts it, who would dream and what it would cost", cmdStatus},
		{"jobs", "", "each job (the memory dream, health, review, your [[job]]s): its gates, its last run, what opens next", cmdJobs},
		{"tasks", "", "running and recent dreams", cmdTasks},
		{"kill", "ID", "stop a running dream (it rolls back)", cmdKill},
		{"log", "", "past dreams with their real diffs, newest first", cmdLog},
		{"show", "ID", "one past dream: its diff and the units it removed or rewrote", cmdShow},
		{"undo", "ID", "restore the memory to its state before a dream, as a new audited change", cmdUndo},
		{"diff", "ID", "the staged changes of a review run (dream run --review)", cmdDiff},
		{"apply", "ID", "land the staged changes of a review run", cmdApply},
		{"discard", "ID", "drop the staged changes of a review run", cmdDiscard},
		{"stats", "", "fired:completed:failed, tokens and cache hit rate over a window; what model dreams spent by day, model and host, and each one's estimate against its cost", cmdStats},
		{"eval", "", "score dreams on scenarios with planted defects and probe facts; exit 1 on harm or a fix not made", cmdEval},
		{"history", "append|show|tail", "nanobot's history.jsonl: append an entry, show entries after a cursor, or the last ones", cmdHistory},
		{"compact", "SESSION", "archive an idle nanobot session's unarchived turns into the history (refused while active or locked)", cmdCompact},
		{"demo", "", "a full dream on a bundled example memory, in a temp dir, no setup", cmdDemo},
		{"hook", "", "for an agent's hook: reads its JSON on stdin, runs the cheap gates, starts the dream detached, returns at once, exit 0", cmdHook},
		{"init", "AGENT", "install (or --remove) dream's hook in claude, codex or gemini settings; instructions for nanobot, codebot; --model-dreams lets the hook's dreams spend the agent's key", cmdInit},
		{"doctor", "", "what is set up and what is missing, each with the command that fixes it", cmdDoctor},
		{"daemon", "[install|add PATH]", "watch projects' transcripts and dream when they go idle; loopback /metrics and /status", cmdDaemon},
		{"mcp", "", "an MCP server over stdio with the dream tools", cmdMCP},
		{"sync", "", "pull and push the memory's history through sync_remote", cmdSync},
		{"config", "", "the effective value of each setting and where it came from", cmdConfig},
		{"trust", "[PATH]", "let a project's .dream.toml set every key (until then it may only tune gates and budgets); --remove, --list", cmdTrust},
		{"version", "", "print the version", cmdVersion},
		{"help", "[COMMAND]", "this list, or one command's flags", cmdHelp},
	}
}

func commandByName(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}
