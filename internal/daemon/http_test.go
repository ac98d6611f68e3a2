package daemon

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// parseMetrics parses a /metrics body with the Prometheus text parser.
func parseMetrics(t *testing.T, body io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(body)
	if err != nil {
		t.Fatalf("the Prometheus text parser rejects /metrics: %v", err)
	}
	return fams
}

// value finds the sample of family name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (*dto.Metric, bool) {
	f, ok := fams[name]
	if !ok {
		return nil, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m, true
	}
	return nil, false
}

// testCounter scrapes d's handler in-process and returns a counter's value.
func testCounter(t *testing.T, d *Daemon, name string, labels map[string]string) float64 {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.RemoteAddr = "127.0.0.1:40000"
	rr := httptest.NewRecorder()
	d.Handler().ServeHTTP(rr, req)
	if rr.Code != 200 {
		t.Fatalf("/metrics: %d %s", rr.Code, rr.Body)
	}
	m, ok := value(parseMetrics(t, rr.Body), name, labels)
	if !ok {
		return 0
	}
	return m.GetCounter().GetValue()
}

func TestMetricsAndStatusOverLoopback(t *testing.T) {
	root := t.TempDir()
	p := newProject(t, root, "alpha")
	rec := newRecorder(50 * time.Millisecond)
	h := startDaemon(t, root, rec, 1, 200*time.Millisecond, []project{p}, func(c *Config) { c.Listen = "127.0.0.1:0" })
	addr := h.d.Status().Listen
	if addr == "" {
		t.Fatal("no listener")
	}
	touchSessions(t, p, 3)
	waitUntil(t, 60*time.Second, "the dream", func() bool { return h.walksDone(1) })
	// A second walk, closed at the time gate.
	writeFile(t, p.sessions+"/session-7.jsonl", transcriptLine(7))
	waitUntil(t, 60*time.Second, "the second walk", func() bool { return h.walksDone(2) })

	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("/metrics Content-Type %q", ct)
	}
	fams := parseMetrics(t, resp.Body)
	host := map[string]string{"host": "custom"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"dream_dreams_fired_total", host, 1},
		{"dream_dreams_completed_total", host, 1},
		{"dream_tokens_total", map[string]string{"kind": "input"}, 1000},
		{"dream_tokens_total", map[string]string{"kind": "output"}, 200},
		{"dream_tokens_total", map[string]string{"kind": "cache_read"}, 3000},
		{"dream_tokens_total", map[string]string{"kind": "cache_creation"}, 500},
		{"dream_gate_closed_total", map[string]string{"gate": "time"}, 1},
	} {
		m, ok := value(fams, c.name, c.labels)
		if !ok {
			t.Errorf("%s%v missing", c.name, c.labels)
			continue
		}
		if got := m.GetCounter().GetValue(); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if m, ok := value(fams, "dream_cache_hit_rate", nil); !ok || math.Abs(m.GetGauge().GetValue()-3000.0/4500) > 1e-9 {
		t.Errorf("cache hit rate %v, want %v", m.GetGauge().GetValue(), 3000.0/4500)
	}
	if m, ok := value(fams, "dream_dream_duration_seconds", host); !ok || m.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("duration histogram: %v", m)
	}
	// Unlabelled series are exported from the start, at zero.
	for _, name := range []string{"dream_lock_contention_total", "dream_watched_memory_dirs", "dream_dreams_running", "dream_cache_hit_rate", "dream_fs_events_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}

	sresp, err := http.Get("http://" + addr + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	var st Status
	if err := json.NewDecoder(sresp.Body).Decode(&st); err != nil {
		t.Fatalf("/status is not JSON: %v", err)
	}
	if len(st.Projects) != 1 || st.Projects[0].MemoryDir != p.mem || st.Projects[0].LastDream == nil || st.Projects[0].LastDream.Status != "completed" {
		t.Errorf("/status: %+v", st)
	}
	if st.MaxConcurrent != 1 || st.Idle != "200ms" {
		t.Errorf("/status settings: %+v", st)
	}
}

func TestListenerRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{
		"0.0.0.0:9464", ":9464", "[::]:9464", "192.168.1.10:9464", "10.0.0.1:80",
		"8.8.8.8:53", "example.com:80", "localhost.evil.example:80", "127.0.0.1", "garbage",
	} {
		if _, err := loopbackAddr(addr); err == nil {
			t.Errorf("loopbackAddr(%q) accepted", addr)
		}
	}
	for addr, want := range map[string]string{
		"127.0.0.1:9464": "127.0.0.1:9464", "localhost:0": "127.0.0.1:0", "[::1]:9464": "[::1]:9464", "127.1.2.3:8080": "127.1.2.3:8080",
	} {
		got, err := loopbackAddr(addr)
		if err != nil || got != want {
			t.Errorf("loopbackAddr(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	// The daemon refuses to start on one.
	root := t.TempDir()
	_, err := New(Options{Load: func() (Config, error) {
		return Config{Settings: Settings{Listen: "0.0.0.0:0", Idle: time.Second, MaxConcurrent: 1, Rescan: time.Hour}, StateDir: root, Runner: newRecorder(0)}, nil
	}})
	if !errors.Is(err, ErrNotLoopback) {
		t.Errorf("New with 0.0.0.0: %v, want ErrNotLoopback", err)
	}
	// And a request that arrives from elsewhere (a proxy, an inherited
	// socket) is refused by the handler itself.
	d, err := New(Options{Load: func() (Config, error) {
		return Config{Settings: Settings{Idle: time.Second, MaxConcurrent: 1, Rescan: time.Hour}, StateDir: root, Runner: newRecorder(0)}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for remote, code := range map[string]int{"203.0.113.7:5555": 403, "[2001:db8::1]:80": 403, "127.0.0.1:5555": 200, "[::1]:5555": 200} {
		for _, path := range []string{"/metrics", "/status"} {
			req := httptest.NewRequest("GET", path, nil)
			req.RemoteAddr = remote
			rr := httptest.NewRecorder()
			d.Handler().ServeHTTP(rr, req)
			if rr.Code != code {
				t.Errorf("%s from %s: %d, want %d", path, remote, rr.Code, code)
			}
		}
	}
}

// Lock contention: another live process holds the consolidation lock (an
// agent's own dream, a `dream run` in a terminal) while the time gate is
// open: the walk closes at the lock and the contention is counted.
func TestLockContentionCounted(t *testing.T) {
	root := t.TempDir()
	p := newProject(t, root, "alpha")
	lock := p.mem + "/.consolidate-lock"
	writeFile(t, lock, "1") // PID 1 is alive
	old := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(0)
	h := startDaemon(t, root, rec, 1, 200*time.Millisecond, []project{p}, func(c *Config) { c.Dream.MinHours = 0.01 })
	touchSessions(t, p, 3)
	waitUntil(t, 60*time.Second, "the walk", func() bool { return h.walksDone(1) })
	if got := h.d.Status().Projects[0].LastGate; got != "lock" {
		t.Fatalf("walk closed at %q, want lock", got)
	}
	if v := testCounter(t, h.d, "dream_lock_contention_total", nil); v != 1 {
		t.Errorf("lock_contention_total = %v, want 1", v)
	}
	if v := testCounter(t, h.d, "dream_gate_closed_total", map[string]string{"gate": "lock"}); v != 1 {
		t.Errorf("gate_closed_total{gate=lock} = %v, want 1", v)
	}
	if count, _, _ := rec.snapshot(); len(count) != 0 {
		t.Errorf("a dream ran under another process's lock: %v", count)
	}
}

// TestSpendMetrics: /metrics exports what model dreams cost, by host and
// model, beside their estimates, and the spend ledger's day and month,
// which every process of the state dir writes.
func TestSpendMetrics(t *testing.T) {
	state := t.TempDir()
	m := newMetrics(state)
	h, err := spend.Open(state).Reserve(spend.Request{ID: "d1", Model: "claude-sonnet-4-6", Estimate: spend.Amount{Tokens: 1000, USD: 0.5},
		Price: spend.DefaultPrices["claude-sonnet-4-6"], Limits: spend.Limits{Day: spend.Amount{USD: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	cost, err := h.Settle(llm.Usage{OutputTokens: 20_000}, "completed") // $0.30
	if err != nil {
		t.Fatal(err)
	}
	est := &spend.Estimate{Model: "claude-sonnet-4-6", Amount: spend.Amount{USD: 0.5}}
	m.observe("claude", dream.MaybeResult{Gate: dream.GateReady, Report: &dream.Report{Status: dream.StatusCompleted, Estimate: est, Cost: &cost}})
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	fams := parseMetrics(t, rec.Body)
	value := func(name string, labels map[string]string) float64 {
		for _, mt := range fams[name].GetMetric() {
			ok := true
			for _, l := range mt.GetLabel() {
				if v, want := l.GetValue(), labels[l.GetName()]; want != "" && v != want {
					ok = false
				}
			}
			if ok {
				if c := mt.GetCounter(); c != nil {
					return c.GetValue()
				}
				return mt.GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s%v in /metrics", name, labels)
		return 0
	}
	if v := value("dream_cost_dollars_total", map[string]string{"host": "claude", "model": "claude-sonnet-4-6"}); math.Abs(v-0.3) > 1e-9 {
		t.Errorf("cost_dollars_total = %v, want 0.30", v)
	}
	if v := value("dream_estimated_cost_dollars_total", map[string]string{"host": "claude"}); v != 0.5 {
		t.Errorf("estimated_cost_dollars_total = %v, want 0.50", v)
	}
	if v := value("dream_spend_dollars", map[string]string{"period": "day"}); math.Abs(v-0.3) > 1e-9 {
		t.Errorf("spend_dollars{period=day} = %v, want the ledger's 0.30", v)
	}
}
