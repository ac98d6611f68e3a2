package daemon

import (
	"math"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// metrics are the daemon's Prometheus series. They live in their own
// registry, not the global one, so that tests (and two daemons in one
// process) never share counters.
type metrics struct {
	reg *prometheus.Registry

	fired, completed, failed, killed, staged *prometheus.CounterVec
	tokens                                   *prometheus.CounterVec
	cost, estimated                          *prometheus.CounterVec
	duration                                 *prometheus.HistogramVec
	gateClosed                               *prometheus.CounterVec
	syncs, syncCommits                       *prometheus.CounterVec
	lockContention                           prometheus.Counter
	running                                  prometheus.Gauge
	projects                                 prometheus.Gauge
	watches                                  prometheus.Gauge
	rescans                                  prometheus.Counter
	events                                   prometheus.Counter

	mu    sync.Mutex
	usage llm.Usage // totals behind the cache hit rate
}

// Token kinds of dream_tokens_total, as the providers report them.
const (
	tokInput         = "input"
	tokOutput        = "output"
	tokCacheRead     = "cache_read"
	tokCacheCreation = "cache_creation"
)

// newMetrics registers the series; stateDir's spend ledger, which every
// process dreaming from it writes, backs the spend gauges.
func newMetrics(stateDir string) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "dream", Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	m.fired = counter("dreams_fired_total", "Dreams started: every gate of the funnel opened.", "host")
	m.completed = counter("dreams_completed_total", "Dreams that completed and landed.", "host")
	m.failed = counter("dreams_failed_total", "Dreams that failed or timed out (rolled back).", "host")
	m.killed = counter("dreams_killed_total", "Dreams killed by request or by the daemon's shutdown (rolled back).", "host")
	m.staged = counter("dreams_staged_total", "Dreams whose changes were staged for review instead of landing.", "host")
	m.tokens = counter("tokens_total", "Tokens spent by dreams, by kind (input, output, cache_read, cache_creation).", "kind")
	m.cost = counter("cost_dollars_total", "Dollars the daemon's model dreams spent, at their model's price, by host and model.", "host", "model")
	m.estimated = counter("estimated_cost_dollars_total", "Dollars the daemon's model dreams were estimated to spend before they started, by host and model.", "host", "model")
	led := spend.Open(stateDir)
	for _, period := range []string{"day", "month"} {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "dream", Name: "spend_dollars",
			Help:        "Dollars spent (and reserved by running dreams) in the current calendar day or month, by every process of this state dir (the spend ledger).",
			ConstLabels: prometheus.Labels{"period": period}},
			func() float64 {
				t, err := led.Totals()
				if err != nil {
					return math.NaN()
				}
				if period == "day" {
					return t.Day.USD
				}
				return t.Month.USD
			}))
	}
	m.gateClosed = counter("gate_closed_total", "Funnel walks that stopped at a closed gate, by gate.", "gate")
	m.syncs = counter("sync_total", "Interval syncs with sync_remote, by result (ok, error, skipped_dreaming).", "result")
	m.syncCommits = counter("sync_commits_total", "Commits the interval syncs moved, by direction (pulled, pushed).", "direction")
	m.lockContention = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "dream", Name: "lock_contention_total",
		Help: "Dreams that found the consolidation lock held by another live process."})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "dream", Name: "dream_duration_seconds",
		Help:    "Wall-clock time of a dream, whatever its outcome.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200}}, []string{"host"})
	m.running = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "dream", Name: "dreams_running", Help: "Dreams running now."})
	m.projects = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "dream", Name: "watched_memory_dirs", Help: "Memory dirs the daemon watches."})
	m.watches = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "dream", Name: "watched_dirs", Help: "Directories under a file-system watch."})
	m.rescans = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "dream", Name: "rescans_total", Help: "Fallback rescans of the watched projects."})
	m.events = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "dream", Name: "fs_events_total", Help: "File-system events received."})
	cacheRate := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "dream", Name: "cache_hit_rate",
		Help: "Prompt-cache hit rate over every dream since start: cache_read / (input + cache_creation + cache_read)."},
		m.cacheHitRate)
	m.reg.MustRegister(m.lockContention, m.duration, m.running, m.projects, m.watches, m.rescans, m.events, cacheRate)
	return m
}

// cacheHitRate is the design's cache_read / (input + cache_created +
// cache_read), over the same totals the token counters were given.
func (m *metrics) cacheHitRate() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.usage
	denom := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	if denom == 0 {
		return 0
	}
	return float64(u.CacheReadInputTokens) / float64(denom)
}

// observe records the outcome of one funnel walk.
func (m *metrics) observe(hostLabel string, res dream.MaybeResult) {
	if res.Gate != "" && res.Gate != dream.GateReady {
		m.gateClosed.WithLabelValues(res.Gate).Inc()
	}
	if res.Gate == dream.GateLock {
		m.lockContention.Inc()
	}
	rep := res.Report
	if rep == nil {
		return
	}
	m.fired.WithLabelValues(hostLabel).Inc()
	switch rep.Status {
	case dream.StatusCompleted:
		m.completed.WithLabelValues(hostLabel).Inc()
	case dream.StatusStaged:
		m.staged.WithLabelValues(hostLabel).Inc()
	case dream.StatusKilled:
		m.killed.WithLabelValues(hostLabel).Inc()
	default:
		m.failed.WithLabelValues(hostLabel).Inc()
	}
	u := rep.Usage
	m.mu.Lock()
	m.usage.Add(u)
	m.mu.Unlock()
	m.tokens.WithLabelValues(tokInput).Add(float64(u.InputTokens))
	m.tokens.WithLabelValues(tokOutput).Add(float64(u.OutputTokens))
	m.tokens.WithLabelValues(tokCacheRead).Add(float64(u.CacheReadInputTokens))
	m.tokens.WithLabelValues(tokCacheCreation).Add(float64(u.CacheCreationInputTokens))
	m.duration.WithLabelValues(hostLabel).Observe(float64(rep.DurationMS) / 1000)
	if e := rep.Estimate; e != nil {
		m.estimated.WithLabelValues(hostLabel, e.Model).Add(e.USD)
		if rep.Cost != nil {
			m.cost.WithLabelValues(hostLabel, e.Model).Add(rep.Cost.USD)
		}
	}
}
