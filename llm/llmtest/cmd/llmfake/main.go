// Command llmfake serves a scripted fake model on a loopback port, speaking
// the Anthropic Messages API, OpenAI Chat Completions, the OpenAI Responses
// API and Gemini's generateContent exactly as the llmtest package does in
// tests. It prints the base URL on stdout and serves until interrupted, so
// that benchmark scripts and humans can point dream (ANTHROPIC_BASE_URL or
// OPENAI_BASE_URL) or an agent (a Codex model provider's base_url,
// GOOGLE_GEMINI_BASE_URL) at it with no network and no key.
//
// Usage:
//
//	llmfake -script turns.json [-addr 127.0.0.1:0]
//
// The script is {"turns": [...]} or a bare array; each turn has the fields
// text, calls [{id, name, input}], usage, status, retry_after, repeat,
// delay ("1.5s") and stop_reason. "-" reads the script from stdin.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/dreamkit/dream/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	var usage usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "llmfake:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "llmfake:", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

// run serves until ctx ends. The URL line on stdout is the only output there,
// so a script can read it with one `read` and no parsing.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("llmfake", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scriptPath := fs.String("script", "", "JSON script of turns (- for stdin)")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on; loopback by default")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *scriptPath == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageError{errors.New("want -script FILE and no arguments")}
	}
	var data []byte
	var err error
	if *scriptPath == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(*scriptPath)
	}
	if err != nil {
		return fmt.Errorf("read script: %w", err)
	}
	turns, err := llmtest.ParseScript(data)
	if err != nil {
		return fmt.Errorf("%s: %w", *scriptPath, err)
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := llmtest.Serve(l, turns...)
	defer srv.Close()
	if _, err := fmt.Fprintln(stdout, srv.URL); err != nil {
		return fmt.Errorf("print URL: %w", err)
	}
	<-ctx.Done()
	fmt.Fprintf(stderr, "llmfake: served %d requests, %d script turns left\n", len(srv.Requests()), srv.Remaining())
	return nil
}
