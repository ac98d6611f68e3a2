package eval

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/offline"
	"github.com/dreamkit/dream/llm"
)

var update = flag.Bool("update", false, "rewrite golden files")

// corpus is the scenario directory at the repository root.
var corpus = filepath.Join("..", "..", "testdata", "eval")

// offlineDream runs the engine as dream's offline runner does: the host's
// layout, the transcripts as provenance.
func offlineDream(ctx context.Context, s Scenario, ws Workspace) (Outcome, error) {
	tr, err := offline.LoadTranscripts(ctx, ws.SessionsDir)
	if err != nil {
		return Outcome{}, err
	}
	_, err = offline.Run(ctx, offline.Options{MemoryDir: ws.MemoryDir, RepoDir: ws.RepoDir, Now: s.Now, Layout: offline.LayoutFor(s.Host), Provenance: tr})
	return Outcome{}, err
}

// TestCorpusOffline is the offline engine's proof of value: over the whole
// corpus every mechanical defect is fixed, no probe fact is lost, no guard
// breaks, nothing outside the memory is touched and every index fits:
// every scenario passes.
func TestCorpusOffline(t *testing.T) {
	scenarios, err := LoadAll(corpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) < 20 {
		t.Fatalf("corpus has %d scenarios, want at least 20", len(scenarios))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	scores, err := Run(ctx, scenarios, Engine{Offline: offlineDream})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scores {
		if len(s.Problems) > 0 || len(s.NotPlanted) > 0 || s.MechanicalFixed != s.MechanicalTotal {
			t.Errorf("%s: %+v", s.Scenario, s)
		}
	}
	table := Table(scores, false)
	golden := filepath.Join("testdata", "offline.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != table {
		t.Errorf("table differs from %s (-update to rewrite):\n%s", golden, table)
	}
}

// TestScoresCatchBadDreams proves the eval can fail: a dream that deletes a
// probe fact, writes into the repository or copies a secret is scored so.
func TestScoresCatchBadDreams(t *testing.T) {
	all, err := LoadAll(corpus)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(name string) Scenario {
		for _, s := range all {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no scenario %s", name)
		return Scenario{}
	}
	tests := []struct {
		name     string
		scenario string
		dream    DreamFunc
		check    func(Score) bool
	}{
		{"loses a probe", "duplicate-across-files", func(_ context.Context, _ Scenario, ws Workspace) (Outcome, error) {
			return Outcome{Usage: llm.Usage{OutputTokens: 7}}, os.WriteFile(filepath.Join(ws.MemoryDir, "ci.md"), []byte("# CI\n"), 0o644)
		}, func(s Score) bool { return s.ProbesRetained < s.ProbesTotal && s.Tokens == 7 }},
		{"writes the repo", "clean-memory", func(_ context.Context, _ Scenario, ws Workspace) (Outcome, error) {
			return Outcome{}, os.WriteFile(filepath.Join(ws.RepoDir, "x.go"), []byte("package x\n"), 0o644)
		}, func(s Score) bool { return !s.OutsideUntouched }},
		{"leaks a secret", "secrets-in-transcripts", func(_ context.Context, _ Scenario, ws Workspace) (Outcome, error) {
			data, err := os.ReadFile(filepath.Join(ws.SessionsDir, "k1l2.jsonl"))
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{}, os.WriteFile(filepath.Join(ws.MemoryDir, "keys.md"), data, 0o644)
		}, func(s Score) bool { return s.Regressions == 1 }},
		// A form only the sandbox's rules knew before the eval used them.
		{"leaks a Stripe key", "secrets-in-transcripts", func(_ context.Context, _ Scenario, ws Workspace) (Outcome, error) {
			return Outcome{}, os.WriteFile(filepath.Join(ws.MemoryDir, "billing.md"), []byte("# Billing\n\nLive key: sk_live_4eC39HqLyjWDarjtT1zdp7dc\n"), 0o644)
		}, func(s Score) bool { return s.Regressions == 1 }},
		{"does nothing", "mixed-defects", func(context.Context, Scenario, Workspace) (Outcome, error) {
			return Outcome{}, nil
		}, func(s Score) bool {
			return s.DefectsFixed == 0 && s.DefectsTotal == 6 && s.MechanicalTotal == 3 && len(s.Unfixed) == 3
		}},
		{"is held", "clean-memory", func(context.Context, Scenario, Workspace) (Outcome, error) {
			return Outcome{Held: "loss guard: would lose 3 units"}, nil
		}, func(s Score) bool { return s.Held != "" }},
		{"leaves the index over budget", "unindexed-topics", func(_ context.Context, _ Scenario, ws Workspace) (Outcome, error) {
			f, err := os.OpenFile(filepath.Join(ws.MemoryDir, "MEMORY.md"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return Outcome{}, err
			}
			defer f.Close()
			_, err = f.WriteString(strings.Repeat("- a line the agent will never load\n", 210))
			return Outcome{}, err
		}, func(s Score) bool { return !s.IndexWithinBudget }},
		{"fails", "clean-memory", func(context.Context, Scenario, Workspace) (Outcome, error) {
			return Outcome{}, context.DeadlineExceeded
		}, func(s Score) bool { return strings.Contains(s.Err, "deadline") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores, err := Run(context.Background(), []Scenario{pick(tt.scenario)}, Engine{Offline: tt.dream})
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(scores[0]) || len(scores[0].Problems) == 0 {
				t.Errorf("score = %+v", scores[0])
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct{ name, toml string }{
		{"no now", "description = \"x\"\n[[expect]]\nkind = \"absent\"\npattern = \"x\"\n"},
		{"no expect", "now = 2026-01-01T00:00:00Z\n"},
		{"bad kind", "now = 2026-01-01T00:00:00Z\n[[expect]]\nkind = \"nope\"\n"},
		{"bad regexp", "now = 2026-01-01T00:00:00Z\n[[expect]]\nkind = \"absent\"\npattern = \"(\"\n"},
		{"unknown key", "now = 2026-01-01T00:00:00Z\nprobez = []\n[[expect]]\nkind = \"unchanged\"\n"},
		{"bad generate", "now = 2026-01-01T00:00:00Z\n[[expect]]\nkind = \"unchanged\"\n[generate]\ntopics = -1\n"},
		{"not toml", "now = = =\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			if err := os.MkdirAll(filepath.Join(dir, "memory"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ScenarioFile), []byte(tt.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(dir); err == nil {
				t.Error("want error")
			}
		})
	}
	if _, err := LoadAll(t.TempDir()); err == nil {
		t.Error("empty corpus: want error")
	}
}

// TestDoNothingScoresZero: a dream that changes nothing fixes nothing in the
// whole corpus (every defect is really planted), and breaks nothing.
func TestDoNothingScoresZero(t *testing.T) {
	scenarios, err := LoadAll(corpus)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := Run(context.Background(), scenarios, Engine{Offline: func(context.Context, Scenario, Workspace) (Outcome, error) {
		return Outcome{}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	fixed, lost, regressions := 0, 0, 0
	for _, s := range scores {
		fixed += s.DefectsFixed
		lost += s.ProbesTotal - s.ProbesRetained
		regressions += s.Regressions
	}
	if fixed != 0 || lost != 0 || regressions != 0 {
		t.Errorf("do-nothing engine: %d fixes, %d lost probes, %d regressions; want 0, 0, 0", fixed, lost, regressions)
	}
}

// eagerDream is the engine the issue warns about: it deletes every list
// item whose text (markers stripped) appears in an earlier memory file.
func eagerDream(_ context.Context, _ Scenario, ws Workspace) (Outcome, error) {
	files, err := readTree(ws.MemoryDir, true)
	if err != nil {
		return Outcome{}, err
	}
	seen := map[string]string{}
	for _, rel := range sortedKeys(files) {
		if !strings.HasSuffix(rel, ".md") {
			continue
		}
		var out []string
		changed := false
		for _, l := range strings.Split(files[rel], "\n") {
			t := strings.TrimSpace(l)
			if k := strings.TrimLeft(t, "-*+0123456789.) "); k != t && len(k) > 10 {
				if first, ok := seen[k]; ok && first != rel {
					changed = true
					continue
				}
				if _, ok := seen[k]; !ok {
					seen[k] = rel
				}
			}
			out = append(out, l)
		}
		if changed {
			if err := os.WriteFile(filepath.Join(ws.MemoryDir, rel), []byte(strings.Join(out, "\n")), 0o644); err != nil {
				return Outcome{}, err
			}
		}
	}
	return Outcome{}, nil
}

// TestEagerEngineFails: deleting cross-file duplicates loses probes and
// breaks decoys, so the corpus fails it.
func TestEagerEngineFails(t *testing.T) {
	scenarios, err := LoadAll(corpus)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := Run(context.Background(), scenarios, Engine{Offline: eagerDream})
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, s := range scores {
		if s.Regressions > 0 || s.ProbesRetained < s.ProbesTotal {
			failed = append(failed, s.Scenario)
		}
	}
	for _, want := range []string{"decoy-lookalike-other-files", "decoy-hotfix-procedure"} {
		found := false
		for _, f := range failed {
			found = found || f == want
		}
		if !found {
			t.Errorf("the eager engine passed %s; failing scenarios: %v", want, failed)
		}
	}
}

// TestModelScoredApart: with a model, the offline pass's mechanical fixes
// are not the model's. A model that does nothing after it fixes none of
// what was left to it and fails every scenario with a defect left; one
// that fixes a defect itself is credited with it.
func TestModelScoredApart(t *testing.T) {
	all, err := LoadAll(corpus)
	if err != nil {
		t.Fatal(err)
	}
	var mixed Scenario
	for _, s := range all {
		if s.Name == "mixed-defects" {
			mixed = s
		}
	}
	silent := func(context.Context, Scenario, Workspace) (Outcome, error) {
		return Outcome{Usage: llm.Usage{InputTokens: 100}}, nil
	}
	scores, err := Run(context.Background(), []Scenario{mixed}, Engine{Offline: offlineDream, Model: silent})
	if err != nil {
		t.Fatal(err)
	}
	s := scores[0]
	if s.MechanicalFixed != s.MechanicalTotal || s.ModelFixed != 0 || s.ModelTotal != s.DefectsTotal-s.MechanicalTotal || len(s.Unfixed) != s.ModelTotal || len(s.Problems) == 0 {
		t.Errorf("a silent model after the offline pass: %+v", s)
	}
	if table := Table(scores, true); !strings.Contains(table, "FAIL") || !strings.Contains(table, fmt.Sprintf("0/%d", s.ModelTotal)) {
		t.Errorf("table:\n%s", table)
	}
	// Every scenario whose defects are not all mechanical fails a silent
	// model; the others pass it only when the offline pass did all.
	scores, err = Run(context.Background(), all, Engine{Offline: offlineDream, Model: silent})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scores {
		if pass := len(s.Problems) == 0; pass != (s.DefectsTotal == s.MechanicalTotal) {
			t.Errorf("%s: pass %v with %d of %d defects mechanical: %v", s.Scenario, pass, s.MechanicalTotal, s.DefectsTotal, s.Problems)
		}
	}
}
