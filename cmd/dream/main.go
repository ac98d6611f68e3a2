// Command dream consolidates an AI coding agent's long-term memory while the
// user is away: `dream maybe` from an idle or stop hook, `dream run` by hand,
// `dream demo` to see it work on a bundled example. `dream help` lists every
// command.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes of run and maybe (DESIGN.md): 0 completed or a gate closed,
// 1 failed / timed out / killed (rolled back), 2 usage error, 3 the lock is
// held by another live holder.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	exitHeld   = 3
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv))
}

// Main runs the command line; it is main without the process, for tests.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) (string, bool)) int {
	a := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, env: env}
	if len(args) == 0 {
		cmdHelp(a, nil)
		return exitUsage
	}
	name := args[0]
	cmd, ok := commandByName(name)
	if !ok {
		if name == "-h" || name == "--help" {
			return cmdHelp(a, nil)
		}
		if name == "--version" {
			return cmdVersion(a, nil)
		}
		fmt.Fprintf(stderr, "dream: unknown command %q\n\n", name)
		cmdHelp(&app{stdout: stderr}, nil)
		return exitUsage
	}
	return cmd.run(a, args[1:])
}
