package lossguard

import (
	"fmt"
	"strings"
	"testing"
)

// TestLedger: each unit a model dream removed or rewrote is accounted for,
// with where it went.
func TestLedger(t *testing.T) {
	auth := "# Auth service\n\n- Port: 8081\n- Owner: team atlas, paged through PagerDuty\n"
	billing := "# Billing service\n\n- Port: 8082\n- Owner: team borealis, paged through PagerDuty\n"
	index := "# Memory\n\n- [Auth](auth.md) — the auth service\n- [Billing](billing.md) — the billing service\n"
	log := "# Log\n\n## 2026-03-02\n\n- Migrated the billing database to Postgres 16.\n"
	before := Tree{"MEMORY.md": []byte(index), "auth.md": []byte(auth), "billing.md": []byte(billing), "log.md": []byte(log)}
	tests := []struct {
		name  string
		after map[string]string
		want  []string // "fate file:line -> file:line", in order
	}{
		{"two files merged, one port dropped", map[string]string{
			"auth.md":    "# Auth and billing services\n\n- Port: 8081\n- Owner: team atlas, paged through PagerDuty\n- Billing owner: team borealis, paged through PagerDuty\n",
			"billing.md": "Merged into [auth](auth.md).\n",
			"MEMORY.md":  "# Memory\n\n- [Auth and billing](auth.md) — the auth and billing services\n",
		}, []string{
			"rewritten MEMORY.md:3 -> MEMORY.md:3", "rewritten MEMORY.md:4 -> MEMORY.md:3",
			"rewritten auth.md:1 -> auth.md:1",
			"rewritten billing.md:1 -> auth.md:1", "merged billing.md:3 -> auth.md:3", "merged billing.md:4 -> auth.md:5",
		}},
		{"a port widened, the other deleted", map[string]string{
			"auth.md":    "# Auth service\n\n- Port: 8081 (auth and billing)\n- Owner: team atlas, paged through PagerDuty\n",
			"billing.md": "# Billing service\n\n- Owner: team borealis, paged through PagerDuty\n",
		}, []string{"rewritten auth.md:3 -> auth.md:3", "rewritten billing.md:3 -> auth.md:3"}},
		{"a fact replaced in place by other words", map[string]string{
			"billing.md": "# Billing service\n\n- Listens wherever the gateway routes it.\n- Owner: team borealis, paged through PagerDuty\n",
		}, []string{"rewritten billing.md:3 -> billing.md:3"}},
		{"a fact dropped and another added under another heading", map[string]string{
			"billing.md": "# Billing service\n\n- Owner: team borealis, paged through PagerDuty\n\n## Invoices\n\n- Rendered by the pdf worker.\n",
		}, []string{"deleted billing.md:3"}},
		{"a fact dropped", map[string]string{
			"billing.md": "# Billing service\n\n- Owner: team borealis, paged through PagerDuty\n",
		}, []string{"deleted billing.md:3"}},
		{"a heading and its line re-dated", map[string]string{
			"log.md": "# Log\n\n## 2026-03-20\n\n- Migrated the billing database to Postgres 16 on 2026-03-20.\n",
		}, []string{"rewritten log.md:3 -> log.md:3", "rewritten log.md:5 -> log.md:5"}},
		{"a fact moved to another file", map[string]string{
			"log.md": "# Log\n\n## 2026-03-02\n",
			"db.md":  "# Database\n\n- Migrated the billing database to Postgres 16.\n",
		}, []string{"moved log.md:5 -> db.md:3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := Tree{}
			for k, v := range before {
				after[k] = v
			}
			for k, v := range tt.after {
				after[k] = []byte(v)
			}
			v := Check(before, after, Options{})
			var got []string
			for _, e := range v.Ledger {
				s := fmt.Sprintf("%s %s:%d", e.Fate, e.File, e.Line)
				if e.To != nil {
					s += fmt.Sprintf(" -> %s:%d", e.To.File, e.To.Line)
				}
				got = append(got, s)
			}
			for _, e := range v.Ledger {
				if e.Fate == Rewritten && !strings.Contains(e.To.Text, "Port") && strings.Contains(e.Text, "Port") && !e.Lost {
					t.Errorf("%s:%d, rewritten with its words gone, is not marked lost", e.File, e.Line)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("ledger\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestLedgerFacts: a heading and a pointer hold no fact of their own; a
// list item does.
func TestLedgerFacts(t *testing.T) {
	before := Tree{"MEMORY.md": []byte("# Memory\n\n- [Ops](ops.md) — how production is run\n\nDeploys are frozen on Fridays.\n")}
	after := Tree{"MEMORY.md": []byte("Memory index.\n")}
	v := Check(before, after, Options{})
	facts := map[string]bool{}
	for _, e := range v.Ledger {
		facts[strings.TrimSpace(e.Text)] = e.Fact
	}
	want := map[string]bool{"# Memory": false, "- [Ops](ops.md) — how production is run": false, "Deploys are frozen on Fridays.": true}
	if fmt.Sprint(facts) != fmt.Sprint(want) {
		t.Errorf("facts %v, want %v", facts, want)
	}
}
