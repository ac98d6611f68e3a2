package task

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestEntryGolden pins the on-disk (and `dream tasks --json`) shape of an entry.
func TestEntryGolden(t *testing.T) {
	end := time.Date(2026, 11, 30, 11, 31, 2, 0, time.UTC)
	tests := []struct {
		name string
		e    Entry
	}{
		{"running", Entry{ID: "20261130-111932-3f9a", Status: StatusRunning, Phase: PhaseStarting,
			MemoryDir: "/home/u/.claude/projects/p/memory", PID: 4242, FilesTouched: []string{}, Turns: []string{},
			StartedAt: time.Date(2026, 11, 30, 11, 19, 32, 0, time.UTC)}},
		{"completed", Entry{ID: "20261130-111932-3f9a", Status: StatusCompleted, Phase: PhaseUpdating,
			MemoryDir: "/m", PID: 4242, Provider: "anthropic", Model: "claude-x", SessionsReviewed: 6,
			FilesTouched: []string{"MEMORY.md", "topics/go.md"}, FilesTouchedTotal: 2, Turns: []string{"read index", "merged duplicates"},
			ToolCalls: 9, Usage: llm.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadInputTokens: 40000, CacheCreationInputTokens: 8000},
			StartedAt: time.Date(2026, 11, 30, 11, 19, 32, 0, time.UTC), EndedAt: &end, Review: true}},
		{"failed", Entry{ID: "20261130-111932-3f9a", Status: StatusFailed, Phase: PhaseStarting, MemoryDir: "/m", PID: 7,
			FilesTouched: []string{}, Turns: []string{}, StartedAt: time.Date(2026, 11, 30, 11, 19, 32, 0, time.UTC),
			EndedAt: &end, Error: "budget: 40 turns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encode(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if string(got) != string(want) {
				t.Errorf("encoding differs from %s:\n%s", golden, got)
			}
			back, err := decodeEntry(got)
			if err != nil || back.ID != tt.e.ID || back.Status != tt.e.Status || len(back.FilesTouched) != len(tt.e.FilesTouched) {
				t.Errorf("round trip = %+v, %v", back, err)
			}
		})
	}
}

// FuzzDecodeEntry: any entry file content decodes or errors, never panics,
// and an accepted entry has a safe id and a known status.
func FuzzDecodeEntry(f *testing.F) {
	f.Add([]byte(`{"id":"20261130-111932-3f9a","status":"running","phase":"starting","pid":1,"started_at":"2026-11-30T11:19:32Z"}`))
	f.Add([]byte(`{"id":"../x","status":"running"}`))
	f.Add([]byte(`{"id":"a","status":"zombie"}`))
	f.Add([]byte(`{"id":"a","status":"failed","ended_at":null,"usage":{"input_tokens":-1}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err != nil {
			return
		}
		if validID(e.ID) != nil || (e.Status != StatusRunning && !e.Status.finished()) {
			t.Fatalf("accepted %+v", e)
		}
	})
}
