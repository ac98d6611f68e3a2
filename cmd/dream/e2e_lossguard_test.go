package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
)

// opsFacts are the ten facts of the ops topic the loss-guard tests use.
var opsFacts = []string{
	"The staging database is rebuilt from the nightly dump.",
	"Deploys go through the blue/green script in ops/deploy.sh.",
	"Page the on-call through PagerDuty, never by phone.",
	"Disk alerts fire at 85% and page at 95%.",
	"Redis runs with maxmemory-policy allkeys-lru.",
	"Backups are kept for 35 days in the cold bucket.",
	"TLS certificates renew through cert-manager.",
	"The payments queue must drain before a deploy.",
	"Feature flags live in the flags service, not in config.",
	"Log retention is 14 days in Loki.",
}

func writeOps(w *world) {
	var b strings.Builder
	b.WriteString("---\nname: ops\ndescription: how production is run\ntype: project\n---\n\n# Ops\n\n")
	for _, f := range opsFacts {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	w.write(w.mem, "ops.md", b.String())
	w.write(w.mem, "MEMORY.md", "# Memory\n\n- [Build](build.md) — how the project builds\n- [Ops](ops.md) — how production is run\n")
}

// TestModelDeletingMemoryIsStaged: a scripted model rewrites ops.md keeping
// three of its ten facts, about 40% of the memory's units. The loss guard
// holds the dream for review: the memory is untouched, the report says it is
// staged and names what would be lost, and `dream diff` shows it.
func TestModelDeletingMemoryIsStaged(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeOps(w)
	pre := snapshot(t, w.mem)
	kept := "---\nname: ops\ndescription: how production is run\ntype: project\n---\n\n# Ops\n\n- " + strings.Join(opsFacts[:3], "\n- ") + "\n"
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": filepath.Join(w.mem, "ops.md")}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "ops.md", "content": kept}}}},
		llmtest.Turn{Text: "Improved ops.md: removed outdated notes."},
	)
	defer srv.Close()
	r := w.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
	if r.code != 0 {
		t.Fatalf("a held dream is staged, not failed:\n%s", r)
	}
	rep := decodeJSON[dream.Report](t, r)
	if rep.Status != dream.StatusStaged || !rep.Review {
		t.Fatalf("status %q review %v, want staged:\n%s", rep.Status, rep.Review, r)
	}
	if fmt.Sprint(snapshot(t, w.mem)) != fmt.Sprint(pre) {
		t.Fatal("the loss guard let the deletion land")
	}
	if !strings.Contains(rep.Summary, "loss guard") || !strings.Contains(rep.Summary, "ops.md") {
		t.Errorf("the report does not say the loss guard held it: %q", rep.Summary)
	}
	for _, lost := range opsFacts[3:5] { // the first lost facts are named
		if !strings.Contains(rep.Summary, lost) {
			t.Errorf("the report does not name %q: %q", lost, rep.Summary)
		}
	}
	if strings.Contains(rep.Summary, opsFacts[0]) {
		t.Errorf("a kept fact is reported lost: %q", rep.Summary)
	}
	d := w.dream(nil, append([]string{"diff", rep.TaskID}, w.locFlags()...)...)
	if d.code != 0 || !strings.Contains(d.stdout, "-- "+opsFacts[9]) {
		t.Fatalf("diff of the held dream:\n%s", d)
	}
}

// TestModelMovingMemoryLands: the same amount of text moved to another file
// is not lost, so the dream lands.
func TestModelMovingMemoryLands(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeOps(w)
	kept := "---\nname: ops\ndescription: how production is run\ntype: project\n---\n\n# Ops\n\n- " + strings.Join(opsFacts[:6], "\n- ") + "\n\nMore in [runbook](runbook.md).\n"
	moved := "---\nname: runbook\ndescription: operational detail\ntype: project\n---\n\n# Runbook\n\n- " + strings.Join(opsFacts[6:], "\n- ") + "\n"
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "runbook.md", "content": moved}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "ops.md", "content": kept}}}},
		llmtest.Turn{Text: "Split ops into ops and runbook."},
	)
	defer srv.Close()
	r := w.dream(modelEnv("openai", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
	rep := decodeJSON[dream.Report](t, r)
	if r.code != 0 || rep.Status != dream.StatusCompleted {
		t.Fatalf("a dream that moves text must land:\n%s", r)
	}
}

// TestModelChangingNothingSaysNoChanges: a model that claims success but
// wrote nothing is reported as "no changes", not as an improvement.
func TestModelChangingNothingSaysNoChanges(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	srv := llmtest.NewServer(llmtest.Turn{Text: "Improved the memory a lot."})
	defer srv.Close()
	r := w.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run"}, w.locFlags()...)...)
	// The model's own words are in the dream's account ("turn 1: ..."); the
	// report's verdict is a line of its own.
	if r.code != 0 || !strings.Contains(r.stdout, "no changes") || regexp.MustCompile(`(?m)^Improved`).MatchString(r.stdout) {
		t.Fatalf("want \"no changes\" and no \"Improved\":\n%s", r)
	}
}
