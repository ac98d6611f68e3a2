package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/dreamkit/dream/cmd/dream/internal/cmdline"
)

// cmdHelp lists every command, or prints one command's help: `dream help
// COMMAND` is `dream COMMAND --help`, word for word.
func cmdHelp(a *app, args []string) error {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "-help" {
		if len(args) > 1 {
			return usagef("help takes one command; got %q (dream help lists every command)", args[1:])
		}
		c, ok := commandByName(args[0])
		if !ok {
			return unknownCommand(args[0])
		}
		if c.name != "help" {
			return c.run(a, []string{"--help"})
		}
	}
	if len(args) > 0 {
		printCommandHelp(a.stdout, "help", flag.NewFlagSet("dream help", flag.ContinueOnError))
		return nil
	}
	w := a.stdout
	fmt.Fprintln(w, "dream: background memory consolidation for AI coding agents")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: dream COMMAND [ARGS] [FLAGS]   (flags may come before or after arguments)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name)+1+len(c.args))
	}
	for _, c := range commands() {
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Where:  --memory-dir DIR --sessions-dir DIR --repo DIR --state-dir DIR, or --host NAME")
	fmt.Fprintln(w, "        (claude, codex, gemini, nanobot, codebot, dir) to derive them from an agent's layout")
	fmt.Fprintln(w, "Model:  --provider NAME (anthropic, openai, offline) --model NAME --max-turns N --max-tokens N --timeout DURATION")
	fmt.Fprintln(w, "Jobs:   --job NAME runs or shows another job than the memory dream: health, review or a [[job]] of config.toml (dream jobs)")
	fmt.Fprintln(w, "Output: --json prints one JSON value on stdout; an error too, as {\"error\": {\"code\": ..., \"message\": ...}}")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes: 0 done (or a gate is closed, or the dream was staged for review), 1 failed or killed")
	fmt.Fprintln(w, "(rolled back), 2 usage error, 3 the lock is held by another live process.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Start with: dream demo        Details: dream help COMMAND (or dream COMMAND --help)")
	return nil
}

// examples holds one typical invocation per command, shown in its help.
// TestHelpEveryCommand fails for a command without one.
var examples = map[string][]string{
	"run":     {"dream run --host claude", "dream run --memory-dir ~/notes/memory --review --timeout 5m", "dream run --job health    # the code health check, offline with no key"},
	"maybe":   {"dream maybe --host claude --hook    # from a stop hook: the hook's JSON on stdin names the session"},
	"status":  {"dream status --host claude", "dream status --job health"},
	"jobs":    {"dream jobs", "dream jobs --json"},
	"tasks":   {"dream tasks", "dream tasks --host claude --json"},
	"kill":    {"dream kill 20261201-101500-3f2a"},
	"log":     {"dream log --host claude --limit 5"},
	"show":    {"dream show 20261201-101500-3f2a --host claude"},
	"undo":    {"dream undo 20261201-101500-3f2a --host claude", "dream undo 20261201-101500-3f2a --host claude --force"},
	"diff":    {"dream diff --host claude    # the staged review runs", "dream diff 20261201-101500-3f2a --host claude"},
	"apply":   {"dream apply 20261201-101500-3f2a --host claude"},
	"discard": {"dream discard 20261201-101500-3f2a --host claude"},
	"stats":   {"dream stats --since 168h"},
	"eval":    {"dream eval --dir testdata/eval"},
	"history": {"dream history append --host nanobot \"decided to pin Go 1.26\"", "dream history show --host nanobot --unprocessed", "dream history tail --host nanobot --n 5"},
	"compact": {"dream compact cli:direct --host nanobot"},
	"demo":    {"dream demo", "dream demo --keep"},
	"hook":    {"echo '{\"session_id\":\"abc\",\"cwd\":\"/src/app\"}' | dream hook --host claude"},
	"init":    {"dream init claude", "dream init claude --model-dreams", "dream init claude --project --dry-run", "dream init codex --remove"},
	"doctor":  {"dream doctor --host claude"},
	"daemon":  {"dream daemon --listen 127.0.0.1:9464", "dream daemon add ~/src/app --host claude", "dream daemon install --dry-run"},
	"mcp":     {"dream mcp --host claude"},
	"sync":    {"dream sync --host claude --sync-remote git@example.com:me/memory.git", "dream sync --host claude --resolved    # after a conflict, once you edited the files it named"},
	"config":  {"dream config --host claude"},
	"trust":   {"dream trust", "dream trust ~/src/app --remove", "dream trust --list"},
	"version": {"dream version --json"},
	"help":    {"dream help undo"},
}

// printCommandHelp prints one command's usage, summary, example and flags:
// its own first, then each shared group, values by their placeholder.
func printCommandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	c, _ := commandByName(name)
	usage := "dream " + name
	if c.args != "" {
		usage += " " + c.args
	}
	fmt.Fprintf(w, "Usage: %s [FLAGS]\n\n%s\n", usage, c.summary)
	if ex := examples[name]; len(ex) > 0 {
		fmt.Fprintf(w, "\nExample%s:\n", map[bool]string{true: "s"}[len(ex) > 1])
		for _, e := range ex {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	grouped := map[string]string{}
	var titles []string
	for _, g := range cmdline.Groups(name) {
		names := g.Names()
		if len(names) == 0 {
			continue
		}
		if _, seen := indexOf(titles, g.Title); !seen {
			titles = append(titles, g.Title)
		}
		for _, n := range names {
			if _, ok := grouped[n]; !ok {
				grouped[n] = g.Title
			}
		}
	}
	var own []*flag.Flag
	byTitle := map[string][]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) {
		if t, ok := grouped[f.Name]; ok {
			byTitle[t] = append(byTitle[t], f)
		} else {
			own = append(own, f)
		}
	})
	section := func(title string, flags []*flag.Flag) {
		if len(flags) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, f := range flags {
			_, u := flag.UnquoteUsage(f)
			left := "--" + f.Name
			if p := placeholder(f); p != "" {
				left += " " + p
			}
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
				u += fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(w, "  %-26s %s\n", left, u)
		}
	}
	section("Flags", own)
	for _, t := range titles {
		section(t+" flags", byTitle[t])
	}
}

func indexOf(list []string, s string) (int, bool) {
	for i, x := range list {
		if x == s {
			return i, true
		}
	}
	return -1, false
}

// placeholder is the typed name of a flag's value in help and messages: the
// `NAME` its usage text quotes (DIR, ID, PATH, URL ...), else one from its
// type (DURATION, N, NUMBER); "" for a boolean flag, which takes none.
func placeholder(f *flag.Flag) string {
	if f == nil {
		return "VALUE"
	}
	name, _ := flag.UnquoteUsage(f)
	switch name {
	case "duration":
		return "DURATION"
	case "int", "uint", "int64", "uint64":
		return "N"
	case "float":
		return "NUMBER"
	case "value", "string":
		return "VALUE"
	}
	return name
}
