package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

func cmdHelp(a *app, args []string) error {
	if len(args) > 0 {
		c, ok := commandByName(args[0])
		if !ok {
			return usagef("unknown command %q (see dream help)", args[0])
		}
		return c.run(a, []string{"-h"})
	}
	w := a.stdout
	fmt.Fprintln(w, "dream: background memory consolidation for AI coding agents")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: dream COMMAND [ARGS] [FLAGS]   (flags may come before or after arguments)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		fmt.Fprintf(w, "  %-16s %s\n", name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Common flags: --memory-dir DIR --sessions-dir DIR --repo DIR --session ID --host NAME")
	fmt.Fprintln(w, "              --provider anthropic|openai|offline --model M --max-turns N --max-tokens N --timeout D --json")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes of run and maybe: 0 completed (or a gate is closed), 1 failed or killed (rolled back),")
	fmt.Fprintln(w, "2 usage error, 3 the lock is held by another live process.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Start with: dream demo        Details: dream help COMMAND")
	return nil
}

// printCommandHelp prints one command's usage and flags.
func printCommandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	c, _ := commandByName(name)
	usage := "dream " + name
	if c.args != "" {
		usage += " " + c.args
	}
	fmt.Fprintf(w, "Usage: %s [FLAGS]\n\n%s\n\nFlags:\n", usage, c.summary)
	fs.VisitAll(func(f *flag.Flag) {
		kind, u := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if kind != "" {
			left += " " + strings.ToUpper(kind)
		}
		fmt.Fprintf(w, "  %-24s %s\n", left, u)
	})
}
