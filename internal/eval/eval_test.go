package eval

import (
	"context"
	"flag"
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
func offlineDream(ctx context.Context, s Scenario, ws Workspace) (llm.Usage, error) {
	tr, err := offline.LoadTranscripts(ctx, ws.SessionsDir)
	if err != nil {
		return llm.Usage{}, err
	}
	_, err = offline.Run(ctx, offline.Options{MemoryDir: ws.MemoryDir, RepoDir: ws.RepoDir, Now: s.Now, Layout: offline.LayoutFor(s.Host), Provenance: tr})
	return llm.Usage{}, err
}

// TestCorpusOffline is the offline engine's proof of value: over the whole
// corpus every mechanical defect is fixed, no probe fact is lost, no guard
// breaks and nothing outside the memory is touched.
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
	scores, err := Run(ctx, scenarios, offlineDream)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scores {
		if s.Err != "" || len(s.NotPlanted) > 0 || s.MechanicalFixed != s.MechanicalTotal ||
			s.ProbesRetained != s.ProbesTotal || s.Regressions != 0 || !s.OutsideUntouched {
			t.Errorf("%s: %+v", s.Scenario, s)
		}
	}
	table := Table(scores)
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
		{"loses a probe", "duplicate-across-files", func(_ context.Context, _ Scenario, ws Workspace) (llm.Usage, error) {
			return llm.Usage{OutputTokens: 7}, os.WriteFile(filepath.Join(ws.MemoryDir, "ci.md"), []byte("# CI\n"), 0o644)
		}, func(s Score) bool { return s.ProbesRetained < s.ProbesTotal && s.Tokens == 7 }},
		{"writes the repo", "clean-memory", func(_ context.Context, _ Scenario, ws Workspace) (llm.Usage, error) {
			return llm.Usage{}, os.WriteFile(filepath.Join(ws.RepoDir, "x.go"), []byte("package x\n"), 0o644)
		}, func(s Score) bool { return !s.OutsideUntouched }},
		{"leaks a secret", "secrets-in-transcripts", func(_ context.Context, _ Scenario, ws Workspace) (llm.Usage, error) {
			data, err := os.ReadFile(filepath.Join(ws.SessionsDir, "k1l2.jsonl"))
			if err != nil {
				return llm.Usage{}, err
			}
			return llm.Usage{}, os.WriteFile(filepath.Join(ws.MemoryDir, "keys.md"), data, 0o644)
		}, func(s Score) bool { return s.Regressions == 1 }},
		{"does nothing", "mixed-defects", func(context.Context, Scenario, Workspace) (llm.Usage, error) {
			return llm.Usage{}, nil
		}, func(s Score) bool { return s.DefectsFixed == 0 && s.DefectsTotal == 6 && s.MechanicalTotal == 3 }},
		{"fails", "clean-memory", func(context.Context, Scenario, Workspace) (llm.Usage, error) {
			return llm.Usage{}, context.DeadlineExceeded
		}, func(s Score) bool { return strings.Contains(s.Err, "deadline") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores, err := Run(context.Background(), []Scenario{pick(tt.scenario)}, tt.dream)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(scores[0]) {
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
	scores, err := Run(context.Background(), scenarios, func(context.Context, Scenario, Workspace) (llm.Usage, error) {
		return llm.Usage{}, nil
	})
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
func eagerDream(_ context.Context, _ Scenario, ws Workspace) (llm.Usage, error) {
	files, err := readTree(ws.MemoryDir, true)
	if err != nil {
		return llm.Usage{}, err
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
				return llm.Usage{}, err
			}
		}
	}
	return llm.Usage{}, nil
}

// TestEagerEngineFails: deleting cross-file duplicates loses probes and
// breaks decoys, so the corpus fails it.
func TestEagerEngineFails(t *testing.T) {
	scenarios, err := LoadAll(corpus)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := Run(context.Background(), scenarios, eagerDream)
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
