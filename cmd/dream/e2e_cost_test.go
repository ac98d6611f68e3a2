package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/telemetry"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/spend"
)

// waitTask waits until the state dir's task list shows a finished dream
// and returns its entry.
func waitFinishedTask(t *testing.T, w *hostWorld, deadline time.Time) map[string]any {
	t.Helper()
	for {
		r := w.dream("tasks", "--json", "--host", "claude")
		var tasks []map[string]any
		if r.code == 0 && json.Unmarshal([]byte(r.stdout), &tasks) == nil {
			for _, e := range tasks {
				if e["status"] != "running" {
					return e
				}
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(w.home, ".local", "state", "dream", "hook.log"))
			t.Fatalf("no finished dream: %s\nhook.log:\n%s", r, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHookInheritedKeyNeedsConsent: Claude Code runs its hooks with its
// own environment, ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL included.
// Without the user's consent the dream the hook starts is offline: not
// one model request, the task entry says why, and `dream status` says how
// to consent. `dream init claude --model-dreams` records the consent in
// dream's config.toml, keeping the rest of the file, and shows the cost;
// the next hook's dream then reaches the model.
func TestHookInheritedKeyNeedsConsent(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "claude")
	srv := llmtest.NewServer(llmtest.Consolidator())
	defer srv.Close()
	w.env = append(w.env, "ANTHROPIC_API_KEY=sk-agent-key", "ANTHROPIC_BASE_URL="+srv.URL)
	if r := w.dream("init", "claude"); r.code != 0 {
		t.Fatalf("init: %s", r)
	}
	command := installedCommand(t, filepath.Join(w.home, ".claude", "settings.json"), "SessionEnd")
	payload := map[string]any{"session_id": w.current, "transcript_path": w.transcript, "cwd": w.repo, "hook_event_name": "SessionEnd", "reason": "exit"}
	lockPath := filepath.Join(w.layout.MemoryDir, ".consolidate-lock")
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	os.WriteFile(lockPath, nil, 0o644)
	os.Chtimes(lockPath, old, old)

	if r, _ := w.runHook(command, payload); r.code != 0 || r.stdout != "" {
		t.Fatalf("hook: %s", r)
	}
	task := waitFinishedTask(t, w, time.Now().Add(90*time.Second))
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the hook's dream sent %d model requests on a key it only inherited", n)
	}
	if task["status"] != "completed" || task["provider"] != "offline" || !strings.Contains(fmt.Sprint(task["provider_why"]), "does not give it to dream") {
		t.Errorf("task entry: status %v, provider %v (%v)", task["status"], task["provider"], task["provider_why"])
	}
	// The telemetry says the same of the dream it fired.
	events, err := telemetry.Open(filepath.Join(w.home, ".local", "state", "dream")).Read(time.Time{})
	fired := 0
	for _, e := range events {
		if e.Name == telemetry.EventFired && e.TaskID == task["id"] {
			fired++
			if e.Provider != "offline" || !strings.Contains(e.ProviderWhy, "does not give it to dream") {
				t.Errorf("the telemetry's fired event: provider %q (%q)", e.Provider, e.ProviderWhy)
			}
		}
	}
	if err != nil || fired != 1 {
		t.Errorf("%d fired events for %v in the telemetry (%v)", fired, task["id"], err)
	}
	r := w.dream("status", "--host", "claude")
	if r.code != 0 || !strings.Contains(r.stdout, "dream init claude --model-dreams") || strings.Contains(r.stdout+r.stderr, "sk-agent-key") {
		t.Fatalf("status does not say how to consent (or shows the key):\n%s", r)
	}

	// Consent, in a config file the user already has.
	cfg := filepath.Join(w.home, ".config", "dream", "config.toml")
	mustMkdir(t, filepath.Dir(cfg))
	before := "# my dream settings\nmin_hours = 24 # a day\n\n[prices.\"claude-sonnet-4-6\"]\ninput = 3\noutput = 15\n"
	os.WriteFile(cfg, []byte(before), 0o600)
	r = w.dream("init", "claude", "--model-dreams")
	if r.code != 0 || !strings.Contains(r.stdout, `recorded provider = "anthropic"`) || !strings.Contains(r.stdout, "a dream on "+w.layout.MemoryDir+" now: about ") {
		t.Fatalf("init --model-dreams:\n%s", r)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "provider = \"anthropic\"\n"+before {
		t.Fatalf("config.toml after --model-dreams:\n%s", b)
	}
	os.Chtimes(lockPath, old, old)
	os.RemoveAll(filepath.Join(w.home, ".local", "state", "dream", "throttle")) // the first dream's session scan was a moment ago
	if r, _ := w.runHook(command, payload); r.code != 0 || r.stdout != "" {
		t.Fatalf("hook: %s", r)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := w.dream("tasks", "--json", "--host", "claude")
		var tasks []map[string]any
		json.Unmarshal([]byte(r.stdout), &tasks)
		if len(tasks) == 2 && tasks[0]["status"] != "running" && tasks[1]["status"] != "running" {
			for _, e := range tasks {
				if e["provider"] == "anthropic" && (e["estimate"] == nil || e["status"] != "completed") {
					t.Errorf("the consented dream: %v", e)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after consent, the hook's dream did not finish: %s", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(srv.Requests()) == 0 {
		t.Fatal("after consent, the hook's dream never reached the model")
	}
}

// modelWorld is a world whose dreams go to a fake Anthropic server.
func modelWorld(t *testing.T, turns ...llmtest.Turn) (*world, *llmtest.Server, []string) {
	w := newWorld(t)
	srv := llmtest.NewServer(turns...)
	t.Cleanup(srv.Close)
	return w, srv, modelEnv("anthropic", srv.URL, false)
}

// estimateOf is what `dream status --json` estimates a dream on w costs.
func estimateOf(t *testing.T, w *world, env []string) spend.Estimate {
	t.Helper()
	r := w.dream(env, append([]string{"status", "--json"}, w.locFlags()...)...)
	var st struct {
		Cost struct {
			Estimate *spend.Estimate `json:"estimate"`
		} `json:"cost"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || st.Cost.Estimate == nil {
		t.Fatalf("status --json has no estimate: %s", r)
	}
	return *st.Cost.Estimate
}

// TestEstimateOverWhatIsLeftNotStarted: a dream whose estimate exceeds
// what is left of the day's ceiling does not start: `run` says so and
// exits 1 with the report's status not_started, `maybe` treats it as a
// closed gate (exit 0), and nothing reaches the model.
func TestEstimateOverWhatIsLeftNotStarted(t *testing.T) {
	t.Parallel()
	w, srv, env := modelWorld(t, llmtest.Consolidator())
	est := estimateOf(t, w, env)
	env = append(env, "DREAM_MAX_COST_PER_DAY="+strconv.FormatFloat(est.USD/2, 'g', -1, 64))
	r := w.dream(env, append([]string{"run", "--json"}, w.locFlags()...)...)
	rep := decodeJSON[map[string]any](t, r)
	if r.code != 1 || rep["status"] != "not_started" || !strings.Contains(fmt.Sprint(rep["error"]), "max_cost_per_day") || rep["estimate"] == nil {
		t.Fatalf("run over the day's ceiling:\n%s", r)
	}
	r = w.dream(env, append([]string{"maybe", "--json"}, w.locFlags()...)...)
	res := decodeJSON[map[string]any](t, r)
	if r.code != 0 || res["gate"] != "budget" || !strings.Contains(fmt.Sprint(res["detail"]), "not started") {
		t.Fatalf("maybe over the day's ceiling:\n%s", r)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d model requests from dreams that did not start", n)
	}
	events, err := telemetry.Open(w.state).Read(time.Time{})
	refused := 0
	for _, e := range events {
		if e.Name == telemetry.EventRefused {
			refused++
			if !strings.Contains(e.Reason, "max_cost_per_day") || e.Estimate == nil || e.Estimate.USD != est.USD || e.Model == "" {
				t.Errorf("the telemetry's refused event: reason %q, estimate %v, model %q", e.Reason, e.Estimate, e.Model)
			}
		}
	}
	if err != nil || refused != 2 {
		t.Errorf("%d refused events in the telemetry for two refused dreams (%v)", refused, err)
	}
	r = w.dream(env, append([]string{"status"}, w.locFlags()...)...)
	if !strings.Contains(r.stdout, "a model dream would not start now") {
		t.Errorf("status does not say the dream would not start:\n%s", r)
	}
}

// TestCeilingReachedMidRun: a model that keeps writing runs into
// max_cost_per_dream. The dream stops before the request that would cross
// it; what it wrote is staged for review, nothing lands, the report says
// why, and the ledger holds what it spent, within the ceiling.
func TestCeilingReachedMidRun(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("A note the model keeps adding to, to run up the bill. ", 6)
	var turns []llmtest.Turn
	for i := range 40 {
		turns = append(turns, llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": fmt.Sprintf("note-%02d.md", i), "content": "# note\n\n" + big}}}})
	}
	w, srv, env := modelWorld(t, turns...)
	est := estimateOf(t, w, env)
	ceiling := est.USD * 2
	env = append(env, "DREAM_MAX_COST_PER_DREAM="+strconv.FormatFloat(ceiling, 'g', -1, 64))
	before := treeHash(t, w.mem, nil)
	r := w.dream(env, append([]string{"run", "--json", "--max-turns", "60"}, w.locFlags()...)...)
	rep := decodeJSON[map[string]any](t, r)
	if r.code != 0 || rep["status"] != "staged" || !strings.Contains(fmt.Sprint(rep["park_reason"]), "max_cost_per_dream") {
		t.Fatalf("a dream that reached its ceiling: want it staged with the reason:\n%s", r)
	}
	if n := len(srv.Requests()); n < 2 || n >= len(turns) {
		t.Fatalf("%d requests: want the dream stopped midway", n)
	}
	if treeHash(t, w.mem, nil) != before {
		t.Fatal("the memory changed: a stopped dream landed")
	}
	cost, _ := rep["cost"].(map[string]any)
	if usd, _ := cost["usd"].(float64); usd <= 0 || usd > ceiling {
		t.Fatalf("cost %v, want within the ceiling %v", rep["cost"], ceiling)
	}
	r = w.dream(nil, "diff", fmt.Sprint(rep["task_id"]), "--state-dir", w.state, "--memory-dir", w.mem)
	if r.code != 0 || !strings.Contains(r.stdout, "note-00.md") {
		t.Errorf("the staged work is not there to review: %s", r)
	}
	// dream stats counts the staged dream and the tokens it spent.
	st := decodeJSON[struct {
		Completed int       `json:"completed"`
		Usage     llm.Usage `json:"usage"`
	}](t, w.dream(nil, "stats", "--json", "--state-dir", w.state, "--memory-dir", w.mem))
	if st.Completed != 1 || st.Usage.Total() == 0 {
		t.Errorf("stats: %d completed, %d tokens; want the staged dream and what it spent", st.Completed, st.Usage.Total())
	}
}

// TestThreeDreamsShareTheDayCeiling: three `dream run` processes on
// three memories, one state dir and one max_cost_per_day, at once,
// against a slow model: each reserves what it may spend (1.5 estimates)
// before it starts, so two fit under the day's 3.2 estimates and the
// third does not start; the ledger's total for the day stays under the
// ceiling.
func TestThreeDreamsShareTheDayCeiling(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// One fake server each: the fake's cache is the previous request it
	// served, which three dreams at once would keep breaking.
	var envs [][]string
	var srvs []*llmtest.Server
	for range 3 {
		slow := llmtest.Consolidator()
		slow.Delay = 300 * time.Millisecond
		srv := llmtest.NewServer(slow)
		t.Cleanup(srv.Close)
		srvs = append(srvs, srv)
		envs = append(envs, modelEnv("anthropic", srv.URL, false))
	}
	est := estimateOf(t, w, envs[0])
	// Each dream may spend 1.5 estimates; the day holds 3.2 of them.
	day := est.USD * 3.2
	ceilings := []string{"DREAM_MAX_COST_PER_DREAM=" + strconv.FormatFloat(est.USD*1.5, 'g', -1, 64),
		"DREAM_MAX_COST_PER_DAY=" + strconv.FormatFloat(day, 'g', -1, 64)}
	var mems []string
	for i := range 3 {
		m := filepath.Join(w.root, fmt.Sprintf("memory-%d", i))
		copyDir(t, w.mem, m)
		mems = append(mems, m)
	}
	var wg sync.WaitGroup
	results := make([]result, 3)
	for i, m := range mems {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = w.dream(append(envs[i], ceilings...), "run", "--json", "--memory-dir", m, "--sessions-dir", w.sessions, "--repo", w.repo, "--state-dir", w.state)
		}()
	}
	wg.Wait()
	started := 0
	for _, r := range results {
		rep := decodeJSON[map[string]any](t, r)
		switch rep["status"] {
		case "completed":
			started++
		case "not_started":
		default:
			t.Errorf("a dream ended %v:\n%s", rep["status"], r)
		}
	}
	ds, _, err := spend.Open(w.state).Dreams()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, d := range ds {
		total += d.Spent.USD
	}
	requests := 0
	for _, srv := range srvs {
		requests += len(srv.Requests())
	}
	t.Logf("%d of 3 dreams started, %d requests, ledger total %s of %s", started, requests, spend.Dollars(total), spend.Dollars(day))
	if total > day {
		t.Fatalf("the ledger's day total %v exceeds max_cost_per_day %v", total, day)
	}
	if started != 2 || len(ds) != 2 {
		t.Errorf("%d dreams started, %d in the ledger; want 2: the third did not fit", started, len(ds))
	}
	r := w.dream(nil, "stats", "--json", "--state-dir", w.state)
	var st struct {
		Spend struct {
			Total   spend.Amount `json:"total"`
			ByDay   []spendRow   `json:"by_day"`
			ByModel []spendRow   `json:"by_model"`
			ByHost  []spendRow   `json:"by_host"`
			Dreams  []dreamSpend `json:"dreams"`
		} `json:"spend"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || len(st.Spend.Dreams) != 2 || st.Spend.Total.USD != total {
		t.Fatalf("stats --json spend: %s", r)
	}
	// Each grouping sums to the total; each dream's ratio is its spend
	// over its estimate.
	for name, rows := range map[string][]spendRow{"day": st.Spend.ByDay, "model": st.Spend.ByModel, "host": st.Spend.ByHost} {
		var sum float64
		n := 0
		for _, row := range rows {
			sum, n = sum+row.USD, n+row.Dreams
		}
		if n != 2 || math.Abs(sum-total) > 1e-9 {
			t.Errorf("spend by %s: %d dreams, %v; want 2 and %v: %+v", name, n, sum, total, rows)
		}
	}
	if m := st.Spend.ByModel; len(m) != 1 || m[0].Key == "" {
		t.Errorf("spend by model: %+v", m)
	}
	for _, d := range st.Spend.Dreams {
		if d.Estimate.USD <= 0 || math.Abs(d.Ratio-d.Spent.USD/d.Estimate.USD) > 1e-9 {
			t.Errorf("dream %s: estimate %v, spent %v, ratio %v", d.ID, d.Estimate, d.Spent, d.Ratio)
		}
	}
	text := w.dream(nil, "stats", "--state-dir", w.state)
	for _, want := range []string{"over 2 model dream(s)", "by day:", "by model:", "by host:", "estimate against spent"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("dream stats does not say %q:\n%s", want, text)
		}
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	mustMkdir(t, dst)
	es, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), bytes.Clone(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
