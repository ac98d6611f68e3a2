// Command cacheprefix measures how cache-friendly a dream's requests are.
//
// It runs a scripted 10-turn dream through agent.Run with a recording fake
// provider and the real six tools over an example memory, repository and
// transcripts laid out in a temp dir, lays each request out in cache order
// (tools JSON, system, messages JSON) and prints, for requests 2..10, the
// common prefix with the previous request as a fraction of the previous
// request (how much of what was sent before is re-sent unchanged, hence
// cacheable) and of the current one (how much of the new request a cache
// could serve), and the input tokens of the whole dream. The baseline is
// the same dream with a per-request clock in the system prompt, a common
// mistake that breaks the prefix on every turn.
//
//	go run ./bench/cacheprefix
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/internal/prompt"
	"github.com/dreamkit/dream/internal/tools"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cacheprefix:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	root, err := os.MkdirTemp("", "cacheprefix-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	files := memoryFiles()
	ws, err := newWorkspace(root, files)
	if err != nil {
		return err
	}
	set, err := tools.NewSet(tools.Env{MemoryDir: ws.mem, RepoDir: ws.repo, SessionsDir: ws.sessions})
	if err != nil {
		return err
	}
	defer set.Close()
	sys, err := prompt.System(prompt.SystemData{MemoryDir: ws.mem, RepoDir: ws.repo, SessionsDir: ws.sessions})
	if err != nil {
		return err
	}
	task, err := prompt.Task(prompt.TaskData{Today: "2026-03-14", SessionsReviewed: 6,
		Leads: "- `testing.md` and `tests.md` look like near-duplicates\n- `build.md` names `scripts/release.sh`, not in the repository"})
	if err != nil {
		return err
	}
	rec := &recorder{script: script(files, ws)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := agent.Run(ctx, agent.Config{Provider: rec, Model: "bench", MaxOutputTokens: 8192,
		System: sys, Task: task, Tools: set.Tools()})
	if err != nil {
		return fmt.Errorf("scripted dream: %w", err)
	}
	if res.Turns != 10 {
		return fmt.Errorf("scripted dream took %d turns, want 10", res.Turns)
	}

	baseline := make([][]byte, len(rec.reqs))
	for i, req := range rec.reqs {
		req.System = fmt.Sprintf("Current time: 2026-03-14T03:%02d:%02dZ\n\n", i*2, 7+i*5%50) + req.System
		if baseline[i], err = serialize(&req); err != nil {
			return err
		}
	}

	dream, base := prefixReuse(rec.sent), prefixReuse(baseline)
	fmt.Fprintf(w, "scripted dream: %d turns, %d tool calls, files touched %v\n\n", res.Turns, res.ToolCalls, res.FilesTouched)
	fmt.Fprintf(w, "%-4s %8s %8s %8s %9s %9s   %9s %9s\n", "req", "prev B", "cur B", "common B", "of prev", "of cur", "base prev", "base cur")
	for i, p := range dream {
		b := base[i]
		fmt.Fprintf(w, "%-4d %8d %8d %8d %9.4f %9.4f   %9.4f %9.4f\n", p.Request, p.Prev, p.Cur, p.Common, p.OfPrev, p.OfCur, b.OfPrev, b.OfCur)
	}
	dp, dc := means(dream)
	bp, bc := means(base)
	fmt.Fprintf(w, "\nmean common-prefix/len(prev): dream %.4f  baseline (clock in system) %.4f  ratio %.2fx\n", dp, bp, dp/bp)
	fmt.Fprintf(w, "mean common-prefix/len(cur):  dream %.4f  baseline (clock in system) %.4f  ratio %.2fx\n", dc, bc, dc/bc)
	total, fresh, err := inputTokens(rec.sent)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "input tokens of the dream (cl100k_base, as laid out): %d sent, %d of them not a prefix already sent (the rest a prompt cache can serve)\n", total, fresh)
	return nil
}

// inputTokens counts the tokens of every request and, of each, those past
// the prefix it shares with the request before (all of the first).
func inputTokens(reqs [][]byte) (total, fresh int, err error) {
	tok, err := nanobot.NewTokenizer()
	if err != nil {
		return 0, 0, err
	}
	for i, r := range reqs {
		n := tok.Count(string(r))
		total += n
		if i == 0 {
			fresh += n
			continue
		}
		fresh += n - tok.Count(string(r[:commonPrefix(reqs[i-1], r)]))
	}
	return total, fresh, nil
}
