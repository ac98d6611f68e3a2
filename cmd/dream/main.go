// Command dream consolidates an AI coding agent's long-term memory while the
// user is away: `dream hook` from an agent's hook (`dream init claude` puts it
// there), `dream run` by hand, `dream demo` to see it work on a bundled
// example. `dream help` lists every command.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/dreamkit/dream/cmd/dream/internal/early"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// defaultMemoryLimit is the Go runtime's soft memory limit for a dream
// process whose environment sets no GOMEMLIMIT. A dream's live heap is about
// 100 MB even on a memory of 30,000 topics, but the collector's default
// headroom (GOGC=100) lets the process grow to twice that and more; with the
// limit it collects sooner instead. It is soft: a bigger live heap still
// fits, the collector just works harder (the runtime caps it at half the
// CPU), so no memory is too big to dream.
const defaultMemoryLimit = 192 << 20

func main() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// early.Stdin: what the early start read of stdin, then the rest.
	os.Exit(Main(ctx, os.Args[1:], early.Stdin(), os.Stdout, os.Stderr, os.LookupEnv))
}

// Main runs the command line; it is main without the process, for tests.
// Every command returns an error; a.exit maps it to the exit code and the
// message.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	a := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, env: env}
	return a.exit(a.dispatch(args))
}

// dispatch runs the command args name.
func (a *app) dispatch(args []string) error {
	if len(args) == 0 {
		_ = cmdHelp(a, nil)
		return reported(exitUsage, usagef("no command given"))
	}
	a.askedJSON = wantsJSON(args[1:])
	name := args[0]
	cmd, ok := commandByName(name)
	if !ok {
		switch name {
		case "-h", "--help", "-help":
			return cmdHelp(a, nil)
		case "--version", "-version":
			return cmdVersion(a, args[1:])
		}
		return unknownCommand(name)
	}
	a.cmd = name
	return cmd.run(a, args[1:])
}
