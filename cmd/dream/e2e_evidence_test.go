package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/lossguard"
	"github.com/dreamkit/dream/llm/llmtest"
)

// The memory of the evidence tests: forty topics of twelve facts each (so
// that one or two units are far under max_loss, as in the 62-file
// memory), the service files the precise losses are made on, and an index.
const (
	authMD     = "---\nname: auth\ndescription: the auth service\ntype: project\n---\n\n# Auth service\n\n- Port: 8081\n- Owner: team atlas, paged through PagerDuty\n- Sessions live in Redis, evicted after 30 days.\n"
	billingMD  = "---\nname: billing\ndescription: the billing service\ntype: project\n---\n\n# Billing service\n\n- Port: 8082\n- Owner: team borealis, paged through PagerDuty\n- Invoices are rendered by the pdf worker.\n"
	servicesMD = "---\nname: services\ndescription: ports of the edge services\ntype: reference\n---\n\n# Edge services\n\n## Gateway\n\n- Port: 8090\n\n## Search\n\n- Port: 8091\n"
	logMD      = "---\nname: migrations\ndescription: database migrations, by day\ntype: project\n---\n\n# Migrations\n\n## 2026-03-02\n\n- Migrated the billing database to Postgres 16 on 2026-03-02.\n"
	schemaMD   = "---\nname: schema\ndescription: schema changes, by day\ntype: project\n---\n\n# Schema changes\n\n## 2026-03-02\n\n- Moved the sessions table to its own schema on 2026-03-20.\n"
	opsMD      = "---\nname: ops\ndescription: how production is run\ntype: feedback\n---\n\n# Ops\n\n- Never deploy on Fridays.\n- Backups are kept for 35 days in the cold bucket.\n- Disk alerts fire at 85% and page at 95%.\n- Log retention is 14 days in Loki.\n- TLS certificates renew through cert-manager.\n"
)

func fillerTopic(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: topic %02d\ndescription: area %02d of the shop\ntype: project\n---\n\n# Area %02d\n\n", i, i, i)
	for k := 0; k < 12; k++ {
		fmt.Fprintf(&b, "- Area %02d keeps rule %d: the %s check runs before step %d.\n", i, k, []string{"lint", "vet", "race", "fuzz"}[k%4], k+i)
	}
	return b.String()
}

// evidenceWorld is a world with that memory.
func evidenceWorld(t *testing.T) *world {
	w := newWorld(t)
	files := map[string]string{"auth.md": authMD, "billing.md": billingMD, "services.md": servicesMD, "log.md": logMD, "schema.md": schemaMD, "ops.md": opsMD}
	index := "# Memory\n\n- [Build](build.md) — how the project builds\n- [Auth](auth.md) — the auth service\n- [Billing](billing.md) — the billing service\n" +
		"- [Services](services.md) — ports of the services\n- [Migrations](log.md) — database migrations, by day\n- [Schema](schema.md) — schema changes, by day\n- [Ops](ops.md) — how production is run\n"
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("topic-%02d.md", i)
		files[name] = fillerTopic(i)
		index += fmt.Sprintf("- [Area %02d](%s) — area %02d of the shop\n", i, name, i)
	}
	files["MEMORY.md"] = index
	for name, body := range files {
		w.write(w.mem, name, body)
	}
	return w
}

func readCall(path string) llmtest.Call {
	return llmtest.Call{Name: "read", Input: map[string]any{"file_path": path}}
}

func writeCall(path, content string) llmtest.Call {
	return llmtest.Call{Name: "write", Input: map[string]any{"file_path": path, "content": content}}
}

func editCall(path, old, new string) llmtest.Call {
	return llmtest.Call{Name: "edit", Input: map[string]any{"file_path": path, "old_string": old, "new_string": new}}
}

// runScript runs one model dream of calls (up to five a turn, in order),
// ending with the model's own summary, and returns its report.
func runScript(t *testing.T, w *world, summary string, calls ...llmtest.Call) (unitReport, result) {
	t.Helper()
	var turns []llmtest.Turn
	for i := 0; i < len(calls); i += 5 {
		turns = append(turns, llmtest.Turn{Calls: calls[i:min(i+5, len(calls))]})
	}
	srv := llmtest.NewServer(append(turns, llmtest.Turn{Text: summary})...)
	defer srv.Close()
	r := w.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
	return decodeJSON[unitReport](t, r), r
}

// unitReport, unitEntry and unitDiff read the JSON of a report, a history
// entry and a diff with their units decoded (the API keeps them as JSON).
type (
	unitReport struct {
		dream.Report
		Units []lossguard.Entry `json:"units"`
	}
	unitEntry struct {
		dream.HistoryEntry
		Units []lossguard.Entry `json:"units"`
	}
	unitDiff struct {
		dream.DreamDiff
		Units []lossguard.Entry `json:"units"`
	}
)

// unit finds the report's account of the unit whose text holds text.
func unit(rep unitReport, text string) *lossguard.Entry {
	for i, u := range rep.Units {
		if strings.Contains(u.Text, text) {
			return &rep.Units[i]
		}
	}
	return nil
}

// TestDestructiveDreamsNeedReview plays the destructive dreams of issue
// 32 and more: the three precise losses that used to land silently, the
// bulk damage the loss guard already held, and others. None lands without
// review, and the report accounts for every unit lost or changed, from the
// diff, not from the model's summary.
func TestDestructiveDreamsNeedReview(t *testing.T) {
	t.Parallel()
	merged := "---\nname: auth\ndescription: the auth and billing services\ntype: project\n---\n\n# Auth and billing services\n\n- Port: 8081\n- Owner: team atlas, paged through PagerDuty\n- Sessions live in Redis, evicted after 30 days.\n- Billing owner: team borealis, paged through PagerDuty\n- Invoices are rendered by the pdf worker.\n"
	allStubs := func(stub func(i int) string) []llmtest.Call {
		var cs []llmtest.Call
		for i := 0; i < 40; i++ {
			cs = append(cs, writeCall(fmt.Sprintf("topic-%02d.md", i), stub(i)))
		}
		return cs
	}
	index := snapshotOf(t, evidenceWorld(t))["MEMORY.md"]
	var unindexed []llmtest.Call
	kept := index[:strings.Index(index, "- [Area 00]")]
	unindexed = append(unindexed, readCall("MEMORY.md"), writeCall("MEMORY.md", kept))
	tests := []struct {
		name    string
		summary string
		calls   []llmtest.Call
		// units the report must account for, each a text and its fate;
		// held: it must say why the unit's change is held.
		units []string
		held  []string
		// nothing: the tool refused the change, nothing was staged.
		nothing bool
		// why the dream is staged, when it matters.
		why string
	}{
		{
			name:    "two service files merged, one port dropped",
			summary: "Consolidated the service facts.",
			calls:   []llmtest.Call{readCall("auth.md"), readCall("billing.md"), writeCall("auth.md", merged), writeCall("billing.md", "Merged into [auth](auth.md).\n")},
			units:   []string{"merged - Port: 8082", "merged - Owner: team borealis", "rewritten # Auth service"},
			held:    []string{"- Port: 8082"},
		},
		{
			name:    "a port widened to both services and the other deleted",
			summary: "Consolidated the service facts.",
			calls:   []llmtest.Call{readCall("services.md"), editCall("services.md", "- Port: 8090\n", "- Port: 8090 (gateway and search)\n"), editCall("services.md", "\n## Search\n\n- Port: 8091\n", "")},
			units:   []string{"rewritten - Port: 8091", "rewritten - Port: 8090"},
			held:    []string{"- Port: 8091"},
		},
		{
			name:    "a heading and its line re-dated",
			summary: "Fixed a mistyped date.",
			calls:   []llmtest.Call{readCall("log.md"), editCall("log.md", "## 2026-03-02\n\n- Migrated the billing database to Postgres 16 on 2026-03-02.", "## 2026-03-20\n\n- Migrated the billing database to Postgres 16 on 2026-03-20.")},
			units:   []string{"rewritten ## 2026-03-02", "rewritten - Migrated the billing database"},
			held:    []string{"## 2026-03-02", "- Migrated the billing database"},
		},
		{
			name:    "every topic cut to a stub",
			summary: "Tidied every topic.",
			calls:   allStubs(func(i int) string { return fmt.Sprintf("# Area %02d\n\nSee the code.\n", i) }),
			units:   []string{"lost - Area 00 keeps rule 0", "lost - Area 39 keeps rule 11"},
		},
		{
			name:    "every topic to one line",
			summary: "Compacted the memory.",
			calls:   allStubs(func(i int) string { return fmt.Sprintf("Area %02d: twelve rules, all checks before their steps.\n", i) }),
			units:   []string{"lost - Area 07 keeps rule 3"},
		},
		{
			name:    "forty topics unindexed",
			summary: "Shortened the index.",
			calls:   unindexed,
			units:   []string{"deleted - [Area 00](topic-00.md)", "deleted - [Area 39](topic-39.md)"},
		},
		{
			name:    "two files merged into a stub",
			summary: "Merged two areas.",
			calls:   []llmtest.Call{writeCall("topic-01.md", "# Areas 01 and 02\n\nBoth keep their rules in CI.\n"), writeCall("topic-02.md", "Merged into [topic-01](topic-01.md).\n")},
			units:   []string{"lost - Area 01 keeps rule 5", "lost - Area 02 keeps rule 5"},
		},
		{
			name:    "an empty write",
			summary: "Emptied ops.md.",
			calls:   []llmtest.Call{writeCall("ops.md", "")},
			nothing: true,
		},
		{
			name:    "never turned into always",
			summary: "Updated the deploy policy.",
			calls:   []llmtest.Call{readCall("ops.md"), editCall("ops.md", "- Never deploy on Fridays.", "- Always deploy on Fridays.")},
			units:   []string{"rewritten - Never deploy on Fridays."},
			held:    []string{"- Never deploy on Fridays."},
		},
		{
			name:    "a denial dropped while the sentence is reworded",
			summary: "Clarified the deploy policy.",
			calls:   []llmtest.Call{readCall("ops.md"), editCall("ops.md", "- Never deploy on Fridays.", "- Deploying on Fridays is fine.")},
			units:   []string{"rewritten - Never deploy on Fridays."},
			held:    []string{"- Never deploy on Fridays."},
		},
		{
			name:    "a rule weakened",
			summary: "Softened the deploy policy.",
			calls:   []llmtest.Call{readCall("ops.md"), editCall("ops.md", "- Never deploy on Fridays.", "- Avoid deploying on Fridays if possible.")},
			units:   []string{"rewritten - Never deploy on Fridays."},
			held:    []string{"- Never deploy on Fridays."},
		},
		{
			name:    "a quantity's unit changed",
			summary: "Fixed the backup retention.",
			calls:   []llmtest.Call{readCall("ops.md"), editCall("ops.md", "kept for 35 days", "kept for 35 hours")},
			units:   []string{"rewritten - Backups are kept for 35 days"},
			held:    []string{"- Backups are kept for 35 days"},
		},
		{
			name:    "four facts dropped, over the budget of untraced deletions",
			summary: "Pruned stale ops notes.",
			calls: []llmtest.Call{readCall("ops.md"), editCall("ops.md", "- Backups are kept for 35 days in the cold bucket.\n", ""), editCall("ops.md", "- Log retention is 14 days in Loki.\n", ""),
				readCall("topic-10.md"), editCall("topic-10.md", "- Area 10 keeps rule 1: the vet check runs before step 11.\n", ""),
				readCall("topic-11.md"), editCall("topic-11.md", "- Area 11 keeps rule 1: the vet check runs before step 12.\n", "")},
			units: []string{"deleted - Backups are kept for 35 days", "deleted - Log retention", "deleted - Area 10 keeps rule 1", "deleted - Area 11 keeps rule 1"},
			why:   "deletes 4 facts without a trace elsewhere in memory, over the budget of 3 (max_untraced_deletions)",
		},
		{
			name:    "a fact moved to a new file with its value changed",
			summary: "Moved the backup policy to its own file.",
			calls: []llmtest.Call{readCall("ops.md"), writeCall("backups.md", "---\nname: backups\ndescription: backup policy\ntype: project\n---\n\n# Backups\n\n- Backups are kept for 90 days in the cold bucket.\n"),
				editCall("ops.md", "- Backups are kept for 35 days in the cold bucket.\n", "")},
			units: []string{"rewritten - Backups are kept for 35 days"},
			held:  []string{"- Backups are kept for 35 days"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := evidenceWorld(t)
			pre := snapshot(t, w.mem)
			rep, r := runScript(t, w, tt.summary, tt.calls...)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s", r.code, r)
			}
			if fmt.Sprint(snapshot(t, w.mem)) != fmt.Sprint(pre) {
				t.Fatalf("the memory changed without review (status %s, for review %v):\n%s", rep.Status, rep.ForReview, r)
			}
			if tt.nothing {
				if rep.Status != dream.StatusCompleted || rep.Summary != "no changes" {
					t.Fatalf("a refused write: status %s summary %q", rep.Status, rep.Summary)
				}
				return
			}
			if rep.Status != dream.StatusStaged || !rep.Review {
				t.Fatalf("status %s, want staged:\n%s", rep.Status, r)
			}
			if rep.ModelSummary != tt.summary || strings.Contains(rep.Summary, tt.summary) {
				t.Errorf("the model's words %q must be model_summary, never the summary %q", rep.ModelSummary, rep.Summary)
			}
			for _, want := range tt.units {
				fate, text, _ := strings.Cut(want, " ")
				u := unit(rep, text)
				if u == nil || fate == "lost" && !u.Lost || fate != "lost" && u.Fate != fate {
					t.Errorf("the report does not account for %q as %s: %+v", text, fate, u)
				}
			}
			if !strings.Contains(rep.Summary, tt.why) || !strings.Contains(rep.ParkReason, tt.why) {
				t.Errorf("summary %q, park reason %q: want %q", rep.Summary, rep.ParkReason, tt.why)
			}
			for _, text := range tt.held {
				if u := unit(rep, text); u == nil || u.Held == "" || u.Change == nil {
					t.Errorf("the report does not say why %q's change is held: %+v", text, u)
				}
			}
			d := w.dream(nil, append([]string{"diff", rep.TaskID}, w.locFlags()...)...)
			if d.code != 0 || !strings.Contains(d.stdout, "\n-") || len(rep.Units) > 0 && !strings.Contains(d.stdout, "units removed or rewritten:") {
				t.Errorf("dream diff of the staged dream:\n%s", d)
			}
			txt := w.dream(modelEnv("anthropic", "http://127.0.0.1:1", false), append([]string{"diff"}, w.locFlags()...)...)
			if !strings.Contains(txt.stdout, rep.TaskID) {
				t.Errorf("dream diff does not list the staged dream:\n%s", txt)
			}
			// Whoever reviews it sees the dream's account, and it is
			// recorded with the dream once applied.
			staged := decodeJSON[unitDiff](t, w.dream(nil, append([]string{"diff", rep.TaskID, "--json"}, w.locFlags()...)...))
			if len(staged.Units) != len(rep.Units) {
				t.Errorf("dream diff --json lists %d units, the report %d", len(staged.Units), len(rep.Units))
			}
			if a := w.dream(nil, append([]string{"apply", rep.TaskID}, w.locFlags()...)...); a.code != 0 {
				t.Fatalf("dream apply:\n%s", a)
			}
			if h := decodeJSON[unitEntry](t, w.dream(nil, append([]string{"show", rep.TaskID, "--json"}, w.locFlags()...)...)); len(h.Units) != len(rep.Units) {
				t.Errorf("dream show of the applied dream lists %d units, the report %d", len(h.Units), len(rep.Units))
			}
		})
	}
}

func snapshotOf(t *testing.T, w *world) map[string]string { return snapshot(t, w.mem) }

// TestTrueCorrectionsLand: a port the transcripts say moved (the model
// read it there and cites it), and a date fixed to its dated heading, land,
// each with its evidence in the report and in `dream show`.
func TestTrueCorrectionsLand(t *testing.T) {
	t.Parallel()
	w := evidenceWorld(t)
	session := filepath.Join(w.sessions, "s-move.jsonl")
	w.write(w.sessions, "s-move.jsonl", `{"type":"user","message":{"role":"user","content":"heads up: we moved the auth service to port 9091 last night"}}`+"\n")
	rep, r := runScript(t, w, "Updated the auth port and a date.",
		llmtest.Call{Name: "grep", Input: map[string]any{"pattern": "auth service", "path": w.sessions}},
		readCall("auth.md"),
		llmtest.Call{Name: "edit", Input: map[string]any{"file_path": "auth.md", "old_string": "- Port: 8081", "new_string": "- Port: 9091",
			"evidence": map[string]any{"file_path": session, "quote": "we moved the auth service to port 9091"}}},
		readCall("schema.md"),
		editCall("schema.md", "on 2026-03-20.", "on 2026-03-02."),
	)
	if r.code != 0 || rep.Status != dream.StatusCompleted || len(rep.ForReview) != 0 {
		t.Fatalf("true corrections must land:\n%s", r)
	}
	got := snapshot(t, w.mem)
	if !strings.Contains(got["auth.md"], "- Port: 9091") || !strings.Contains(got["schema.md"], "own schema on 2026-03-02.") {
		t.Fatalf("the corrections are not in memory:\n%s\n%s", got["auth.md"], got["schema.md"])
	}
	port, date := unit(rep, "- Port: 8081"), unit(rep, "- Moved the sessions table")
	if port == nil || port.Fate != "rewritten" || port.Evidence == nil || port.Evidence.By != "cited" || port.Evidence.Source != session {
		t.Errorf("the port's evidence: %+v", port)
	}
	if date == nil || date.Evidence == nil || date.Evidence.By != "dated heading" {
		t.Errorf("the date's evidence: %+v", date)
	}
	if !strings.Contains(rep.Summary, "2 changed values backed by evidence") {
		t.Errorf("summary %q", rep.Summary)
	}
	show := w.dream(nil, append([]string{"show", rep.TaskID, "--json"}, w.locFlags()...)...)
	h := decodeJSON[unitEntry](t, show)
	if len(h.Units) != len(rep.Units) || h.Units[0].Text != rep.Units[0].Text || h.Units[0].Evidence == nil {
		t.Errorf("dream show lists other units than the report:\n%+v\n%+v", h.Units, rep.Units)
	}
	text := w.dream(nil, append([]string{"show", rep.TaskID}, w.locFlags()...)...)
	if !strings.Contains(text.stdout, "units removed or rewritten:") || !strings.Contains(text.stdout, "evidence (cited)") {
		t.Errorf("dream show:\n%s", text)
	}
}

// TestUnbackedValueIsHeldWhileTheRestLands: a dream that adds a topic and
// its pointer and changes a port no one mentioned lands the first two and
// stages the port for review: one commit, one audit entry, the held part
// reviewable with diff, apply and discard.
func TestUnbackedValueIsHeldWhileTheRestLands(t *testing.T) {
	t.Parallel()
	w := evidenceWorld(t)
	deploy := "---\nname: deploy\ndescription: how the shop deploys\ntype: project\n---\n\n# Deploy\n\n- Deploys go through the blue/green script.\n"
	rep, r := runScript(t, w, "Added the deploy notes and fixed the billing port.",
		writeCall("deploy.md", deploy),
		readCall("MEMORY.md"),
		editCall("MEMORY.md", "- [Ops](ops.md) — how production is run\n", "- [Ops](ops.md) — how production is run\n- [Deploy](deploy.md) — how the shop deploys\n"),
		readCall("billing.md"),
		editCall("billing.md", "- Port: 8082", "- Port: 8083"),
	)
	if r.code != 0 || rep.Status != dream.StatusCompleted {
		t.Fatalf("the dream must land its backed part:\n%s", r)
	}
	got := snapshot(t, w.mem)
	if got["deploy.md"] != deploy || !strings.Contains(got["MEMORY.md"], "(deploy.md)") || got["billing.md"] != billingMD {
		t.Fatalf("landed: deploy %v, pointer %v, billing unchanged %v", got["deploy.md"] == deploy, strings.Contains(got["MEMORY.md"], "(deploy.md)"), got["billing.md"] == billingMD)
	}
	if len(rep.ForReview) != 1 || rep.ForReview[0] != "billing.md" || rep.ReviewID == "" {
		t.Fatalf("for review %v as %q", rep.ForReview, rep.ReviewID)
	}
	if u := unit(rep, "- Port: 8082"); u == nil || !strings.Contains(u.Held, "8083 (was 8082)") {
		t.Errorf("the held unit: %+v", u)
	}
	text := w.dream(nil, append([]string{"log", "--json"}, w.locFlags()...)...)
	log := decodeJSON[[]unitEntry](t, text)
	dreams := 0
	for _, e := range log {
		if e.Kind == "dream" {
			dreams++
			if e.ID != rep.TaskID || len(e.Files) != 2 || len(e.Units) != 1 || e.Units[0].Held == "" {
				t.Errorf("the audit entry: %+v", e)
			}
		}
	}
	if dreams != 1 {
		t.Errorf("%d audit entries for one dream", dreams)
	}
	d := w.dream(nil, append([]string{"diff", rep.ReviewID}, w.locFlags()...)...)
	if d.code != 0 || !strings.Contains(d.stdout, "-- Port: 8082") || !strings.Contains(d.stdout, "+- Port: 8083") ||
		!strings.Contains(d.stdout, "held for review: 8083 (was 8082)") {
		t.Fatalf("dream diff of the held part, with its held unit:\n%s", d)
	}
	a := w.dream(nil, append([]string{"apply", rep.ReviewID}, w.locFlags()...)...)
	if a.code != 0 || !strings.Contains(snapshot(t, w.mem)["billing.md"], "- Port: 8083") {
		t.Fatalf("dream apply of the held part:\n%s", a)
	}
	if h := decodeJSON[unitEntry](t, w.dream(nil, append([]string{"show", rep.ReviewID, "--json"}, w.locFlags()...)...)); len(h.Units) != 1 || strings.TrimSpace(h.Units[0].Text) != "- Port: 8082" {
		t.Errorf("dream show of the applied review: units %+v", h.Units)
	}
	// The plain report says what landed, what waits and why.
	w2 := evidenceWorld(t)
	srv := llmtest.NewServer(llmtest.Turn{Calls: []llmtest.Call{readCall("billing.md")}}, llmtest.Turn{Calls: []llmtest.Call{editCall("billing.md", "- Port: 8082", "- Port: 8083")}},
		llmtest.Turn{Calls: []llmtest.Call{writeCall("deploy.md", deploy)}}, llmtest.Turn{Text: "Done."})
	defer srv.Close()
	p := w2.dream(modelEnv("openai", srv.URL, false), append([]string{"run"}, w2.locFlags()...)...)
	for _, want := range []string{"held for review while the rest landed: billing.md", "units removed or rewritten:", "rewritten billing.md:", "held for review: 8083 (was 8082)", "the model's own summary (unchecked): Done."} {
		if !strings.Contains(p.stdout, want) {
			t.Errorf("the report does not say %q:\n%s", want, p)
		}
	}
}

// TestReadThenEditMemoryIndex: the natural "read MEMORY.md" then "edit
// MEMORY.md" of a model works, and a repository file is still read by its
// repository-relative path.
func TestReadThenEditMemoryIndex(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{readCall("MEMORY.md")}},
		llmtest.Turn{Calls: []llmtest.Call{editCall("MEMORY.md", "- [Build](build.md) — how the project builds", "- [Build](build.md) — how the project builds and tests")}},
		llmtest.Turn{Calls: []llmtest.Call{readCall("Makefile")}},
		llmtest.Turn{Text: "Sharpened the build pointer."},
	)
	defer srv.Close()
	r := w.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
	rep := decodeJSON[unitReport](t, r)
	if r.code != 0 || rep.Status != dream.StatusCompleted || !strings.Contains(snapshot(t, w.mem)["MEMORY.md"], "builds and tests") {
		t.Fatalf("read MEMORY.md then edit MEMORY.md:\n%s", r)
	}
	reqs := srv.Requests()
	if len(reqs) < 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if body := string(reqs[3].Body); !strings.Contains(body, "go build ./...") || strings.Contains(body, "has not been read") {
		t.Errorf("the repository's Makefile was not read by its relative path, or the edit was refused: %s", body)
	}
}

// evalCorpus writes a one-scenario corpus whose memory has a defect only a
// model can fix (a fact the repository contradicts), for dream eval --dir.
func evalCorpus(t *testing.T, w *world, index string) string {
	dir := filepath.Join(w.root, "corpus", "stale-port")
	w.write(dir, "scenario.toml", `description = "the memory says 8081, the code says 9091"
now = 2026-03-15T12:00:00Z
probes = ["team atlas"]

[[expect]]
kind = 'absent'
pattern = 'Port: 8081'
note = 'the repository moved the service'
`)
	w.write(dir, "memory/MEMORY.md", index)
	w.write(dir, "memory/auth.md", "# Auth\n\n- Port: 8081\n- Owner: team atlas\n")
	w.write(dir, "repo/server.go", "package server\n\nconst port = 9091\n")
	return filepath.Dir(dir)
}

// TestEvalFailsOnDoingNothingAndHarm: dream eval exits 1 for a model that
// does nothing, for a dream held for review, and for an index left over
// what the agent loads; it exits 0 for a model that makes the fix.
func TestEvalFailsOnDoingNothingAndHarm(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	index := "# Memory\n\n- [Auth](auth.md) — the auth service\n"
	corpus := evalCorpus(t, w, index)
	eval := func(turns ...llmtest.Turn) result {
		srv := llmtest.NewServer(turns...)
		defer srv.Close()
		return w.dream(modelEnv("anthropic", srv.URL, false), "eval", "--dir", corpus, "--json")
	}
	r := eval(llmtest.Turn{Text: "Everything looks fine.", Repeat: -1})
	if r.code != 1 || !strings.Contains(r.stderr, "not fixed: absent /Port: 8081/") {
		t.Errorf("a do-nothing model:\n%s", r)
	}
	r = eval(
		llmtest.Turn{Calls: []llmtest.Call{readCall("auth.md")}},
		llmtest.Turn{Calls: []llmtest.Call{editCall("auth.md", "- Port: 8081", "- Port: 7070")}},
		llmtest.Turn{Text: "Fixed the port.", Repeat: -1},
	)
	if r.code != 1 || !strings.Contains(r.stdout, `"held"`) {
		t.Errorf("a held dream:\n%s", r)
	}
	r = eval(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "grep", Input: map[string]any{"pattern": "port"}}}},
		llmtest.Turn{Calls: []llmtest.Call{readCall("auth.md")}},
		llmtest.Turn{Calls: []llmtest.Call{editCall("auth.md", "- Port: 8081", "- Port: 9091")}},
		llmtest.Turn{Text: "The code moved the port to 9091.", Repeat: -1},
	)
	if r.code != 0 {
		t.Errorf("a model that makes the fix, with the repository as evidence:\n%s", r)
	}

	var long strings.Builder
	long.WriteString(index)
	for i := 0; i < 210; i++ {
		fmt.Fprintf(&long, "- [Auth](auth.md) — note %d on the auth service\n", i)
	}
	over := evalCorpus(t, newWorld(t), long.String())
	r = w.dream([]string{"DREAM_PROVIDER=offline"}, "eval", "--dir", over)
	if r.code != 1 || !strings.Contains(r.stderr, "the index is past what the agent loads") {
		t.Errorf("an index left over budget:\n%s", r)
	}
}

// TestEvalBuiltInCorpusOffline: the offline engine passes every scenario
// of the corpus built into dream (the binary without the race detector,
// the same code: 43 dreams under it take minutes).
func TestEvalBuiltInCorpusOffline(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: 43 dreams")
	}
	w := newWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, crashBin, "eval")
	cmd.Env = append(w.env, "DREAM_PROVIDER=offline")
	cmd.Dir = w.repo
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "43/43 ok") {
		t.Fatalf("dream eval: %v\n%s", err, out)
	}
}
