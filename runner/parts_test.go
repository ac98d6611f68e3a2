package runner_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/settings"
	"github.com/dreamkit/dream/spend"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/runner"
)

// largeMemory writes a Claude Code memory of n topic files of about 1.5
// KB each, in three directories, with its index.
func largeMemory(t *testing.T, dir string, n int) {
	t.Helper()
	var index strings.Builder
	index.WriteString("# Memory\n\n")
	para := func(i, k int) string {
		return fmt.Sprintf("Note %d of service %03d: it keeps its state in Postgres shard %d and its cache in Redis db %d; deploys go through "+
			"staging cluster %d first, and a schema change needs a migration reviewed by team %d before it merges.\n", k, i, i%7+k, i%5+k, i%3+k, i%11+k)
	}
	for i := range n {
		sub := []string{"services", "teams", "runbooks"}[i%3]
		rel := fmt.Sprintf("%s/topic-%03d.md", sub, i)
		body := fmt.Sprintf("---\nname: topic %03d\ndescription: what service %03d does and who owns it\ntype: project\n---\n\n# Service %03d\n\nsvc-%03d listens on port %d.\n\n%s\n%s\n%s\n",
			i, i, i, i, 9000+i, para(i, 1), para(i, 2), para(i, 3))
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&index, "- [Service %03d](%s) — port and owner of svc-%03d\n", i, rel, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(index.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestLargeMemoryInParts: a 300-topic memory does not fit one request
// under max_request_tokens, so the dream is estimated and run in parts,
// each a bounded sub-run with its own task, sharing the tools and system
// prompt; every request stays under the cap; the parts land as one dream:
// one task, one audit entry, one undo that restores the memory.
func TestLargeMemoryInParts(t *testing.T) {
	if testing.Short() {
		t.Skip("a few hundred fake model requests")
	}
	root := t.TempDir()
	mem, state := filepath.Join(root, "memory"), filepath.Join(root, "state")
	largeMemory(t, mem, 300)
	before := treeSum(t, mem)
	srv := llmtest.NewServer(llmtest.Consolidator())
	defer srv.Close()
	p, err := anthropic.New(anthropic.Options{APIKey: "test", BaseURL: srv.URL, Model: anthropic.DefaultModel, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir, s.Host = state, "claude"
	s.MaxTokens, s.MaxCostPerDream, s.MaxCostPerDay = 20_000_000, 50, 50 // a memory this large costs more than the defaults allow
	r := runner.For(p, anthropic.DefaultModel, s)
	d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Host: "claude", Settings: s.Dream, Runner: r, Provider: "anthropic", Model: anthropic.DefaultModel})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	o, err := d.Estimate(context.Background())
	if err != nil || o.Estimate == nil {
		t.Fatalf("Estimate = %+v, %v", o, err)
	}
	est := o.Estimate
	if est.Parts < 2 {
		t.Fatalf("estimated in %d part(s): the memory should not fit one request under %d tokens", est.Parts, s.MaxRequestTokens)
	}
	rep, err := d.Run(context.Background(), dream.RunOptions{})
	if err != nil || rep.Status != dream.StatusCompleted {
		t.Fatalf("Run = %s, %v (%s; %s)", rep.Status, err, rep.Error, rep.ParkReason)
	}
	// The ledger records the agent whose memory it is (`dream stats` by host).
	if ds, _, err := spend.Open(state).Dreams(); err != nil || len(ds) != 1 || ds[0].Reserve.Host != "claude" {
		t.Errorf("the ledger's dreams: %+v, %v; want one, of host claude", ds, err)
	}
	reqs := srv.Requests()
	parts := 0
	var largest int
	for _, q := range reqs {
		// The fake counts a request's input as its JSON bytes over four.
		largest = max(largest, len(q.Body)/4)
		if strings.Count(string(q.Body), `"role":"assistant"`) == 0 {
			parts++ // a part's first request
		}
	}
	t.Logf("estimate %s; %d requests in %d parts, largest %d tokens (cap %d); used %+v, cost %s", est, len(reqs), parts, largest, s.MaxRequestTokens, rep.Usage, rep.Cost)
	if parts != est.Parts {
		t.Errorf("ran %d parts, estimated %d", parts, est.Parts)
	}
	if int64(largest) > s.MaxRequestTokens {
		t.Errorf("a request carried %d tokens, over max_request_tokens %d", largest, s.MaxRequestTokens)
	}
	in := rep.Usage.InputTokens + rep.Usage.CacheReadInputTokens + rep.Usage.CacheCreationInputTokens
	estIn := est.Usage.InputTokens + est.Usage.CacheReadInputTokens + est.Usage.CacheCreationInputTokens
	if r := float64(estIn) / float64(in); r < 0.75 || r > 1.25 {
		t.Errorf("input estimate %d against %d used: %.2f", estIn, in, r)
	}
	if len(rep.FilesTouched) < parts {
		t.Errorf("the parts touched %v", rep.FilesTouched)
	}

	log, err := d.Log(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	var dreams []dream.HistoryEntry
	for _, e := range log {
		if e.Kind == "dream" {
			dreams = append(dreams, e)
		}
	}
	if len(dreams) != 1 || dreams[0].ID != rep.TaskID {
		t.Fatalf("audit history holds %d dream entries, want the one dream %s: %+v", len(dreams), rep.TaskID, log)
	}
	tasks, err := task.List(state)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %d, %v", len(tasks), err)
	}
	if _, err := d.Undo(context.Background(), rep.TaskID, false); err != nil {
		t.Fatal(err)
	}
	if treeSum(t, mem) != before {
		t.Fatal("one undo did not restore the memory as it was before the dream")
	}
}
