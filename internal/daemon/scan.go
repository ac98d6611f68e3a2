package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/host"
)

// maxWatchDepth bounds how deep below a sessions dir directories are
// watched: Codex nests transcripts three deep (sessions/YYYY/MM/DD), no
// supported host deeper.
const maxWatchDepth = 3

// skippedDirs are never watched below a sessions dir: Claude Code's
// sub-agent transcripts and large tool outputs live in a session's side
// directory and say nothing the session's own transcript does not.
var skippedDirs = map[string]bool{"subagents": true, "tool-results": true}

// wantedProjects is the set of projects this configuration asks for: the
// daemon file's entries, resolved through their host layouts, and, with
// detect, every project the layouts show. Problems skip one project.
func (d *Daemon) wantedProjects(cfg Config) []host.Project {
	var out []host.Project
	for _, e := range cfg.Projects {
		p := host.Project{MemoryDir: e.MemoryDir, SessionsDir: e.SessionsDir, RepoDir: e.Path, Host: e.Host}
		if e.Host != "" && e.Path != "" {
			r, err := host.ResolveProject(e.Host, e.Path, cfg.Home, cfg.Env)
			if err != nil {
				d.log.Warn("project skipped", "path", e.Path, "host", e.Host, "error", err.Error())
				continue
			}
			if p.MemoryDir == "" {
				p.MemoryDir = r.MemoryDir
			}
			if p.SessionsDir == "" {
				p.SessionsDir = r.SessionsDir
			}
			p.Notes = r.Notes
		}
		out = append(out, p)
	}
	if cfg.Detect {
		found, err := host.Discover(cfg.Home, cfg.Env)
		if err != nil {
			d.log.Warn("project detection", "error", err.Error())
		}
		out = append(out, found...)
	}
	return out
}

// scanned is what one walk of a memory dir's sessions dirs found, done
// outside the daemon's lock.
type scanned struct {
	project  host.Project
	sessions []string
	dirs     []string
	newest   time.Time
}

// rescan reconciles the watched set with the configuration and the disk:
// new projects are watched, vanished ones forgotten, and a transcript
// modified since the last look without an event counts as activity.
func (d *Daemon) rescan() {
	d.mu.Lock()
	cfg := d.cfg
	d.mu.Unlock()
	d.m.rescans.Inc()

	byMem, order := d.scanProjects(cfg)
	roots := []string{}
	if cfg.Detect {
		roots = host.DiscoveryRoots(cfg.Home, cfg.Env)
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return
	}
	want := map[string]string{}
	for _, r := range roots {
		want[r] = rootOwner
	}
	for _, mem := range order {
		s := byMem[mem]
		t := d.targets[mem]
		if t == nil {
			t = &target{project: s.project, state: stateIdle}
			d.targets[mem] = t
			d.log.Info("watching", "memory_dir", mem, "host", hostLabel(s.project.Host), "sessions_dirs", s.sessions)
		}
		t.project, t.sessions, t.removed = s.project, s.sessions, false
		if t.active == "" || !contains(s.sessions, t.active) {
			t.active = ""
			if len(s.sessions) > 0 {
				t.active = s.sessions[0]
			}
		}
		for _, dir := range s.dirs {
			if _, taken := want[dir]; !taken {
				want[dir] = mem
			}
		}
		if s.newest.After(t.seenMtime) {
			// Activity the events did not report (the daemon was not
			// running, an event was dropped): as good as an event at
			// that time. The first scan after start gives every project
			// one funnel walk once it is idle.
			t.seenMtime = s.newest
			d.touchLocked(t, s.newest)
		}
	}
	d.forgetLocked(byMem)
	d.rewatchLocked(want)
	d.lastRescan = time.Now()
	d.m.projects.Set(float64(len(d.targets)))
	d.m.watches.Set(float64(len(d.watched)))
	if d.opts.OnScanned != nil {
		d.opts.OnScanned()
	}
}

// scanProjects finds the projects cfg wants that have a memory dir, keyed
// by that dir (order: as found), each with its sessions dirs, the dirs to
// watch below them and the newest transcript's time.
func (d *Daemon) scanProjects(cfg Config) (map[string]*scanned, []string) {
	byMem := map[string]*scanned{}
	var order []string
	for _, p := range d.wantedProjects(cfg) {
		if p.MemoryDir == "" {
			continue
		}
		mem := filepath.Clean(p.MemoryDir)
		if fi, err := os.Stat(mem); err != nil || !fi.IsDir() {
			continue // no memory yet: nothing to consolidate; a later rescan looks again
		}
		s := byMem[mem]
		if s == nil {
			p.MemoryDir = mem
			s = &scanned{project: p}
			byMem[mem] = s
			order = append(order, mem)
		}
		if p.SessionsDir != "" {
			sd := filepath.Clean(p.SessionsDir)
			if !contains(s.sessions, sd) {
				s.sessions = append(s.sessions, sd)
			}
		}
	}
	for _, mem := range order {
		s := byMem[mem]
		sort.Strings(s.sessions)
		for _, sd := range s.sessions {
			dirs, newest := walkSessions(sd, mem)
			s.dirs = append(s.dirs, dirs...)
			if newest.After(s.newest) {
				s.newest = newest
			}
		}
	}
	return byMem, order
}

// forgetLocked stops watching the projects the scan no longer found: a
// project mid-dream or mid-sync is only marked, and goes when it is done.
func (d *Daemon) forgetLocked(byMem map[string]*scanned) {
	for mem, t := range d.targets {
		if _, ok := byMem[mem]; ok {
			continue
		}
		d.log.Info("no longer watching", "memory_dir", mem)
		if t.timer != nil {
			t.timer.Stop()
			t.timer = nil
		}
		if t.state == stateRunning || t.syncing {
			t.removed = true
			continue
		}
		delete(d.targets, mem)
	}
}

// rewatchLocked makes the watched dirs want: each dir to its owner (a
// memory dir, or rootOwner for a discovery root).
func (d *Daemon) rewatchLocked(want map[string]string) {
	for dir := range d.watched {
		if _, ok := want[dir]; !ok {
			_ = d.w.Remove(dir)
			delete(d.watched, dir)
		}
	}
	for dir, owner := range want {
		if _, ok := d.watched[dir]; ok {
			d.watched[dir] = owner
			continue
		}
		d.addWatchLocked(dir, owner)
	}
}

func (d *Daemon) addWatchLocked(dir, owner string) {
	if err := d.w.Add(dir); err != nil {
		// Out of inotify watches, or the dir vanished: the fallback
		// rescan still sees its transcripts' mtimes.
		d.watchErrs++
		if d.watchErrs <= 5 || errors.Is(err, os.ErrNotExist) {
			d.log.Warn("cannot watch", "dir", dir, "error", err.Error())
		}
		return
	}
	d.watched[dir] = owner
}

// watchTreeLocked watches a directory created below a sessions dir, and
// what is already inside it (a burst can create a date dir and its file
// before the event arrives).
func (d *Daemon) watchTreeLocked(dir, mem string, depth int) {
	t := d.targets[mem]
	if t == nil || depth > maxWatchDepth || skippedDirs[filepath.Base(dir)] || strings.HasPrefix(filepath.Base(dir), ".") || within(dir, t.project.MemoryDir) {
		return
	}
	if _, ok := d.watched[dir]; ok {
		return
	}
	if _, err := os.Lstat(dir + ".jsonl"); err == nil {
		return // a session's side directory
	}
	d.addWatchLocked(dir, mem)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			d.watchTreeLocked(filepath.Join(dir, e.Name()), mem, depth+1)
		}
	}
	d.m.watches.Set(float64(len(d.watched)))
}

// walkSessions returns the directories to watch under a sessions dir and
// the newest mtime of a transcript in them. It never follows a symbolic
// link below root, never enters the memory dir (Claude Code keeps it
// inside the project's transcript dir), and skips a session's side
// directory (<id>/ beside <id>.jsonl), which only holds sub-agent
// transcripts and tool outputs.
func walkSessions(root, mem string) (dirs []string, newest time.Time) {
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		dirs = append(dirs, dir)
		files := map[string]bool{}
		for _, e := range entries {
			if e.Type().IsRegular() {
				files[e.Name()] = true
				if strings.HasSuffix(e.Name(), ".jsonl") {
					if info, err := e.Info(); err == nil && info.ModTime().After(newest) {
						newest = info.ModTime()
					}
				}
			}
		}
		if depth >= maxWatchDepth {
			return
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || skippedDirs[name] || strings.HasPrefix(name, ".") || files[name+".jsonl"] {
				continue
			}
			if sub := filepath.Join(dir, name); !within(sub, mem) {
				walk(sub, depth+1)
			}
		}
	}
	if within(root, mem) {
		return nil, time.Time{}
	}
	walk(root, 0)
	return dirs, newest
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
