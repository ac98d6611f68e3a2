package dream

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/lossguard"
	"github.com/dreamkit/dream/settings"
)

// evidenceDream runs one dream whose runner writes files (path → content,
// "" removes) and hands over out's evidence, on a memory of files.
func evidenceDream(t *testing.T, memory map[string]string, writes map[string]string, out Outcome) (Report, string) {
	t.Helper()
	mem, state := t.TempDir(), t.TempDir()
	for name, body := range memory {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mem, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mem, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := settings.DreamDefaults()
	d, err := New(Config{MemoryDir: mem, StateDir: state, Settings: s, Runner: RunnerFunc(func(ctx context.Context, job Job) (Outcome, error) {
		for name, body := range writes {
			p := filepath.Join(job.MemoryDir, name)
			if body == "" {
				if err := os.Remove(p); err != nil {
					return out, err
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return out, err
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return out, err
			}
		}
		return out, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rep, err := d.Run(context.Background(), RunOptions{})
	if err != nil {
		t.Fatalf("%v: %+v", err, rep)
	}
	return rep, mem
}

// TestEvidenceGuardHolds: which files a changed value without evidence
// holds, and when the whole dream waits instead of part of it.
func TestEvidenceGuardHolds(t *testing.T) {
	auth := "# Auth\n\n- Port: 8081\n- Owner: team atlas\n"
	billing := "# Billing\n\n- Port: 8082\n- Owner: team borealis, paged through PagerDuty\n- Invoices render in 30 seconds on the pdf worker.\n- Refunds go through the payments queue.\n- Tax rates come from the finance sheet.\n"
	index := "# Memory\n\n- [Auth](auth.md) — auth\n- [Billing](billing.md) — billing\n"
	memory := map[string]string{"MEMORY.md": index, "auth.md": auth, "billing.md": billing, "notes.md": "# Notes\n\n- Builds run on CI.\n"}
	notes := "# Notes\n\n- Builds run on CI.\n- Tests run with -race.\n"
	tests := []struct {
		name   string
		writes map[string]string
		out    Outcome
		status string
		held   []string // ForReview
		landed []string // files now as written
	}{
		{"a backed change lands", map[string]string{"auth.md": strings.Replace(auth, "8081", "9091", 1)},
			Outcome{Shown: []evidence.Shown{{Tool: "read", Source: "/repo/server.go", Text: "const port = 9091"}}}, StatusCompleted, nil, []string{"auth.md"}},
		{"an unbacked change is held, the rest lands", map[string]string{"auth.md": strings.Replace(auth, "8081", "9091", 1), "notes.md": notes},
			Outcome{}, StatusCompleted, []string{"auth.md"}, []string{"notes.md"}},
		{"a file whose text went into a held file is held with it", map[string]string{
			"auth.md":    "# Auth\n\n- Port: 9091\n- Owner: team atlas\n- Billing owner: team borealis, paged through PagerDuty\n",
			"billing.md": strings.Replace(billing, "- Owner: team borealis, paged through PagerDuty\n", "", 1), "notes.md": notes},
			Outcome{}, StatusCompleted, []string{"auth.md", "billing.md"}, []string{"notes.md"}},
		{"a held new file holds the index that links to it", map[string]string{
			"payments.md": "# Payments\n\n- Invoices render in 45 seconds on the pdf worker.\n",
			"billing.md":  strings.Replace(billing, "- Invoices render in 30 seconds on the pdf worker.\n", "", 1),
			"MEMORY.md":   index + "- [Payments](payments.md) — payments\n", "notes.md": notes},
			Outcome{}, StatusCompleted, []string{"MEMORY.md", "billing.md", "payments.md"}, []string{"notes.md"}},
		{"every change held: the dream is staged", map[string]string{"auth.md": strings.Replace(auth, "8081", "9091", 1)},
			Outcome{}, StatusStaged, nil, nil},
		{"a file the ledger cannot read stages the dream", map[string]string{"auth.md": strings.Replace(auth, "8081", "9091", 1), ".cursor": "5"},
			Outcome{}, StatusStaged, nil, nil},
		{"a contradicted path may change", map[string]string{"notes.md": "# Notes\n\n- Builds run on CI via internal/ci/run.go.\n"},
			Outcome{}, StatusCompleted, nil, []string{"notes.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memory
			if tt.name == "a contradicted path may change" {
				m = map[string]string{"MEMORY.md": index, "auth.md": auth, "billing.md": billing, "notes.md": "# Notes\n\n- Builds run on CI via internal/cfg/run.go.\n"}
				tt.out.Contradictions = []evidence.Contradiction{{Value: "internal/cfg/run.go", Why: "the repository has no internal/cfg/run.go"}}
			}
			rep, mem := evidenceDream(t, m, tt.writes, tt.out)
			if rep.Status != tt.status || strings.Join(rep.ForReview, ",") != strings.Join(tt.held, ",") {
				t.Fatalf("status %s, for review %v; want %s, %v\n%s", rep.Status, rep.ForReview, tt.status, tt.held, rep.Summary)
			}
			for _, f := range tt.landed {
				if b, _ := os.ReadFile(filepath.Join(mem, f)); string(b) != tt.writes[f] {
					t.Errorf("%s did not land: %q", f, b)
				}
			}
			for _, f := range tt.held {
				if b, _ := os.ReadFile(filepath.Join(mem, f)); string(b) != m[f] {
					t.Errorf("%s is held but changed: %q", f, b)
				}
			}
		})
	}
}

// TestUntracedDeletionBudget: deleting more facts without a trace than
// max_untraced_deletions stages the dream, whatever max_loss allows.
func TestUntracedDeletionBudget(t *testing.T) {
	var facts []string
	for _, f := range []string{"Deploys are frozen on Fridays.", "Backups are kept for 35 days.", "Disk alerts page at 95%.", "Logs are kept for 14 days.", "Certificates renew monthly.",
		"The staging database is rebuilt nightly.", "Feature flags live in the flags service.", "The payments queue drains before a deploy.", "Redis evicts with allkeys-lru.", "Page the on-call through PagerDuty."} {
		facts = append(facts, "- "+f)
	}
	memory := map[string]string{"ops.md": "# Ops\n\n" + strings.Join(facts, "\n") + "\n"}
	for i := 0; i < 30; i++ {
		memory["t"+string(rune('a'+i%26))+string(rune('a'+i/26))+".md"] = "# Topic\n\n- A long enough fact of topic number " + strings.Repeat("x", i) + " that stays.\n- Another fact.\n- And a third.\n"
	}
	drop := func(n int) map[string]string {
		return map[string]string{"ops.md": "# Ops\n\n" + strings.Join(facts[n:], "\n") + "\n"}
	}
	rep, _ := evidenceDream(t, memory, drop(3), Outcome{})
	if rep.Status != StatusCompleted {
		t.Fatalf("three deletions are within the default budget: %s %s", rep.Status, rep.Summary)
	}
	rep, _ = evidenceDream(t, memory, drop(4), Outcome{})
	if rep.Status != StatusStaged || !strings.Contains(rep.Summary, "deletes 4 facts without a trace elsewhere in memory, over the budget of 3") || !strings.HasPrefix(rep.ParkReason, ParkLossGuard) {
		t.Fatalf("four deletions: %s %q %q", rep.Status, rep.Summary, rep.ParkReason)
	}
}

// TestParkLossGuardIsHoldPrefix: the loss guard words its holds with its
// own prefix, and a host tells them apart by ParkLossGuard.
func TestParkLossGuardIsHoldPrefix(t *testing.T) {
	if ParkLossGuard != lossguard.HoldPrefix {
		t.Fatalf("ParkLossGuard %q, lossguard.HoldPrefix %q", ParkLossGuard, lossguard.HoldPrefix)
	}
}

// TestUnitsStayJSON: units are kept as JSON in the report, the audit
// history and a staged review; what a hand-edited history holds that is
// not a JSON object is skipped, so `--json` answers never break on it.
func TestUnitsStayJSON(t *testing.T) {
	ledger := []lossguard.Entry{{Fate: "rewritten", Unit: lossguard.Unit{File: "a.md", Line: 3, Text: "Port: 8082"}, Held: "8083 (was 8082)"}}
	raw := unitsJSON(ledger)
	if len(raw) != 1 || !strings.Contains(string(raw[0]), `"held":"8083 (was 8082)"`) {
		t.Fatalf("unitsJSON = %s", raw)
	}
	mixed := append(raw, json.RawMessage(`{"fate":`), json.RawMessage(`"a string"`), json.RawMessage(`{"fate":"deleted"}`))
	got := validUnits(mixed)
	if len(got) != 2 || string(got[1]) != `{"fate":"deleted"}` {
		t.Errorf("validUnits = %s", got)
	}
	if _, err := json.Marshal(HistoryEntry{Units: got}); err != nil {
		t.Errorf("a history entry with the kept units does not encode: %v", err)
	}
}
