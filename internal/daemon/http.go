package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrNotLoopback: the listen address is not on the loopback interface. The
// daemon's HTTP side shows which projects a user works on and when; it is
// for the user's own machine, never the network.
var ErrNotLoopback = errors.New("daemon: the HTTP listener binds loopback addresses only (127.0.0.0/8, ::1, localhost)")

// loopbackAddr validates a listen address: host:port whose host is a
// loopback IP literal or "localhost" (pinned to 127.0.0.1 rather than
// resolved, so a hostile resolver cannot turn it into a public address).
func loopbackAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(strings.TrimSpace(addr))
	if err != nil {
		return "", fmt.Errorf("daemon: listen address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("%w: got %q", ErrNotLoopback, addr)
	}
	return net.JoinHostPort(ip.String(), port), nil
}

// setListener starts the HTTP listener on addr; "" leaves it off.
func (d *Daemon) setListener(addr string) error {
	if addr == "" {
		return nil
	}
	a, err := loopbackAddr(addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return fmt.Errorf("daemon: listening on %s: %w", a, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("%w: bound %s", ErrNotLoopback, ln.Addr())
	}
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 5 * time.Second}
	d.mu.Lock()
	d.httpSrv, d.httpLn, d.httpAddr = srv, ln, ln.Addr().String()
	d.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("HTTP listener", "error", err.Error())
		}
	}()
	d.log.Info("listening", "addr", ln.Addr().String(), "paths", "/metrics /status")
	if d.opts.OnListen != nil {
		d.opts.OnListen(ln.Addr().String())
	}
	return nil
}

func (d *Daemon) stopHTTP() {
	d.mu.Lock()
	srv := d.httpSrv
	d.httpSrv, d.httpLn, d.httpAddr = nil, nil, ""
	d.mu.Unlock()
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
	}
}

// Handler serves /metrics and /status. Every request is checked to come
// from a loopback address, besides the bind: a listener handed over by a
// socket-activating supervisor, or a proxy in front, must not widen it.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(d.Status())
	})
	return loopbackOnly(mux)
}

func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			http.Error(w, "dream daemon: loopback clients only", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Status is the daemon's state as /status shows it.
type Status struct {
	PID           int             `json:"pid"`
	StartedAt     time.Time       `json:"started_at"`
	Idle          string          `json:"idle"`
	MaxConcurrent int             `json:"max_concurrent"`
	Rescan        string          `json:"rescan"`
	SyncInterval  string          `json:"sync_interval,omitempty"`
	Detect        bool            `json:"detect"`
	Listen        string          `json:"listen,omitempty"`
	Running       int             `json:"running"`
	Queued        int             `json:"queued"`
	Watches       int             `json:"watches"`
	LastRescan    *time.Time      `json:"last_rescan,omitempty"`
	Projects      []ProjectStatus `json:"projects"`
}

// ProjectStatus is one memory dir as /status shows it.
type ProjectStatus struct {
	MemoryDir    string        `json:"memory_dir"`
	Host         string        `json:"host"`
	RepoDir      string        `json:"repo_dir,omitempty"`
	SessionsDirs []string      `json:"sessions_dirs"`
	State        string        `json:"state"`
	LastActivity *time.Time    `json:"last_activity,omitempty"`
	IdleAt       *time.Time    `json:"idle_at,omitempty"`
	Walks        int           `json:"funnel_walks"`
	LastGate     string        `json:"last_gate,omitempty"`
	LastDetail   string        `json:"last_detail,omitempty"`
	TaskID       string        `json:"task_id,omitempty"`
	LastDream    *dreamSummary `json:"last_dream,omitempty"`
	LastSync     *syncSummary  `json:"last_sync,omitempty"`
}

// Status returns a snapshot of the daemon's state.
func (d *Daemon) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := Status{
		PID: pid(), StartedAt: d.started, Idle: d.cfg.Idle.String(), MaxConcurrent: d.cfg.MaxConcurrent,
		Rescan: d.cfg.Rescan.String(), Detect: d.cfg.Detect, Listen: d.httpAddr,
		Running: d.running, Queued: len(d.queue), Watches: len(d.watched), Projects: []ProjectStatus{},
	}
	if d.cfg.Dream.SyncRemote != "" && d.cfg.SyncInterval > 0 {
		s.SyncInterval = d.cfg.SyncInterval.String()
	}
	if !d.lastRescan.IsZero() {
		t := d.lastRescan
		s.LastRescan = &t
	}
	for _, t := range d.sortedTargetsLocked() {
		ps := ProjectStatus{
			MemoryDir: t.project.MemoryDir, Host: hostLabel(t.project.Host), RepoDir: t.project.RepoDir,
			SessionsDirs: append([]string{}, t.sessions...), State: t.state, Walks: t.walks,
			LastGate: t.lastGate, LastDetail: t.lastDetail, TaskID: t.taskID, LastDream: t.lastDream,
			LastSync: t.lastSync,
		}
		if !t.lastEvent.IsZero() {
			le := t.lastEvent
			ps.LastActivity = &le
			if t.state == stateWaiting {
				at := le.Add(d.cfg.Idle)
				ps.IdleAt = &at
			}
		}
		s.Projects = append(s.Projects, ps)
	}
	return s
}
