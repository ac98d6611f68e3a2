package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/internal/task"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/cmd/dream/internal/hookplan"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/internal/telemetry"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/settings"
)

// jobCommands take --job NAME: the commands that run, show or change one
// job's dreams (the memory dream without it), and those whose hints a
// job's output prints (tasks, kill).
var jobCommands = map[string]bool{"run": true, "maybe": true, "status": true, "log": true, "show": true, "undo": true,
	"diff": true, "apply": true, "discard": true, "tasks": true, "kill": true, "stats": true}

// isJob reports whether this invocation is about a job, not the memory
// dream.
func (a *app) isJob() bool { return a.job != "" && a.job != jobs.Memory }

// jobRepo is the repository a job runs on: --repo (or the repo setting),
// else the current directory, at the root of its git worktree.
func (a *app) jobRepo() string {
	repo := a.loaded.Settings.Repo
	if repo == "" {
		repo, _ = os.Getwd()
	}
	return host.WorktreeRoot(absPath(repo))
}

// resolveJobs is every job of this invocation, for repo; the config's
// problems are warned about once.
func (a *app) resolveJobs(repo string) []jobs.Job {
	var override []string
	for k, src := range a.loaded.Source {
		if strings.HasPrefix(src, "flag") {
			override = append(override, k)
		}
	}
	all, warnings := jobs.Resolve(jobs.Inputs{Settings: a.loaded.Settings, Tables: a.loaded.Jobs, Repo: repo, Home: a.home(), Env: a.env, Override: override})
	if !a.jobsWarned {
		a.jobsWarned = true
		for _, w := range warnings {
			fmt.Fprintf(a.stderr, "dream: warning: %s\n", w)
		}
	}
	return all
}

// findJob is the job --job names.
func (a *app) findJob(repo string) (jobs.Job, error) {
	all := a.resolveJobs(repo)
	j, ok := jobs.Find(all, a.job)
	if !ok {
		return jobs.Job{}, usagef("no job %q: the jobs are %s (dream jobs shows them; a [[job]] in config.toml adds one)", a.job, strings.Join(jobs.Names(all), ", "))
	}
	return j, nil
}

// jobDreamer builds the Dreamer of the job --job names: its write dir, its
// settings and runner, on the repository, with the agent's memory and
// transcripts when this invocation locates them (for its read scope and
// session gate); a job needs neither.
func (a *app) jobDreamer(runner dream.Runner, backend hostcfg.Backend, onProgress func(string, dream.Progress)) (*dream.Dreamer, error) {
	repo := a.jobRepo()
	j, err := a.findJob(repo)
	if err != nil {
		return nil, err
	}
	return a.jobDreamerOf(j, repo, runner, backend, onProgress)
}

// jobDreamerAt builds the Dreamer of the job --job names on the write dir
// one of its dreams worked on (a command about a dream id: it works from any
// directory). A job no longer in the config is still shown and undone.
func (a *app) jobDreamerAt(dir string) (*dream.Dreamer, error) {
	repo := a.jobRepo()
	j, ok := jobs.Find(a.resolveJobs(repo), a.job)
	if !ok {
		j = jobs.Job{Spec: jobs.Spec{Name: a.job}, Settings: a.loaded.Settings}
	}
	if j.Dir != dir { // another repository's: its own is not known here
		j.Dir, repo = dir, ""
	}
	return a.jobDreamerOf(j, repo, nil, provider.Choice{}, nil)
}

func (a *app) jobDreamerOf(j jobs.Job, repo string, runner dream.Runner, backend hostcfg.Backend, onProgress func(string, dream.Progress)) (*dream.Dreamer, error) {
	p := host.Project{RepoDir: repo}
	if s := a.loaded.Settings; s.MemoryDir != "" || s.Host != "" || a.layout != nil {
		if mem, sessions, _, err := a.locations(); err == nil {
			p.MemoryDir, p.SessionsDir, p.Host = mem, sessions, s.Host
			if a.layout != nil {
				p.Host = a.layout.Host
			}
		}
	}
	session := a.session
	cfg, err := hostcfg.For(p, backend, dream.Config{
		StateDir:        a.loaded.Settings.StateDir,
		Settings:        j.Settings.Dream,
		Runner:          runner,
		PersistThrottle: true,
		OnProgress:      onProgress,
		CurrentSession:  func() string { return session },
		Job:             j.Spec,
		Logf: func(format string, args ...any) {
			fmt.Fprintf(a.stderr, format+"\n", args...)
		},
	}, a.home(), a.env)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return a.newDreamer(cfg)
}

// jobOfDream names the job dream id ran, from the task registry, else the
// event log; "" for the memory dream or an id neither knows.
func (a *app) jobOfDream(id string) string {
	state := a.loaded.Settings.StateDir
	if t, err := task.Lookup(state, id); err == nil {
		return t.Job
	}
	events, _ := telemetry.Open(state).Read(time.Time{})
	for _, e := range events {
		if e.TaskID != "" && strings.HasPrefix(e.TaskID, id) && e.Job != "" {
			return e.Job
		}
	}
	return ""
}

// jobView is one job as `dream jobs --json` prints it.
type jobView struct {
	jobs.Spec
	Enabled     bool              `json:"enabled"`
	MinHours    float64           `json:"min_hours"`
	MinSessions int               `json:"min_sessions,omitempty"`
	Source      string            `json:"source"`
	LastRun     *time.Time        `json:"last_run"`
	Next        string            `json:"next"`
	Gates       []dream.GateState `json:"gates"`
	Problem     string            `json:"problem,omitempty"`
}

// cmdJobs lists every job: what it does, its gates, its last run and what
// opens next.
func cmdJobs(a *app, args []string) error {
	if _, err := a.standardCommand("jobs", args, nil); err != nil {
		return err
	}
	repo := a.jobRepo()
	var views []jobView
	for _, j := range a.resolveJobs(repo) {
		v := jobView{Spec: j.Spec, Enabled: j.Settings.Enabled, MinHours: j.Settings.MinHours, MinSessions: j.Settings.MinSessions, Source: j.Source}
		if j.IsMemory() {
			v.Dir = ""
		}
		a.job = j.Name
		d, err := a.dreamer(nil, provider.Choice{}, nil)
		if err == nil {
			var s dream.StatusReport
			s, err = d.Status(a.ctx)
			d.Close()
			v.LastRun, v.Next, v.Gates = s.LastConsolidatedAt, s.Next, s.Gates
			if j.IsMemory() {
				v.Dir = s.MemoryDir
			}
		}
		if err != nil {
			v.Problem = oneMessage(err.Error())
		}
		views = append(views, v)
	}
	if a.jsonOut {
		a.printJSON(views)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tENABLED\tGATES\tLAST RUN\tNEXT\tWRITES")
	for _, v := range views {
		last := "never"
		if v.LastRun != nil {
			last = v.LastRun.Local().Format("2006-01-02 15:04")
		}
		next := v.Next
		for _, g := range v.Gates {
			if g.Name == v.Next {
				next += ": " + g.Detail
			}
		}
		if v.Problem != "" {
			next = v.Problem
		}
		writes := v.Dir
		if len(v.Files) > 0 {
			writes += " (" + strings.Join(v.Files, ", ") + ")"
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%s\t%s\n", v.Name, v.Enabled, gatesOf(v), last, oneLine(next, 80), writes)
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "\nrun one now: %s · its gates: %s\n", a.hint("run", "--job", "NAME"), a.hint("status", "--job", "NAME"))
	return nil
}

// gatesOf is a job's gates in a few words.
func gatesOf(v jobView) string {
	g := []string{fmt.Sprintf("%gh", v.MinHours)}
	if v.MinSessions > 0 {
		g = append(g, fmt.Sprintf("%d sessions", v.MinSessions))
	}
	if v.MinCommits > 0 {
		g = append(g, fmt.Sprintf("%d commits", v.MinCommits))
	}
	if len(v.Watch) > 0 {
		g = append(g, "files "+strings.Join(v.Watch, ","))
	}
	return strings.Join(g, ", ")
}

// hookJobs is the hook's part for the jobs: for each enabled job whose
// cheap gates (enabled, its time gate from its lock's mtime) open, it starts
// `dream maybe --job NAME` detached, one process per job, so that each walks
// its own funnel and none waits for another or for the agent; each job's
// lock keeps two runs of one job on one scope apart. mem is the memory
// dream's plan, whose locations the jobs' read scopes and session gates use
// (nil when the hook found no memory).
func (a *app) hookJobs(mem *hookplan.Job, stateDir string, extra []string, logf func(string, ...any), out func() io.Writer) {
	if len(a.loaded.Jobs) == 0 { // the built-in jobs are off until a [[job]] enables one
		return
	}
	repo := a.jobRepo() // the payload's cwd came in as --repo (parseWithRepo)
	for _, j := range a.resolveJobs(repo) {
		if j.IsMemory() || !j.Settings.Enabled {
			continue
		}
		if jobTimeClosed(j, stateDir, time.Now()) {
			continue // silent, as the memory dream's closed time gate
		}
		args := []string{"maybe", "--job", j.Name, "--repo", repo, "--state-dir", stateDir}
		if mem != nil {
			args = append(args, "--memory-dir", mem.Memory)
			for _, f := range [][2]string{{"--host", mem.Host}, {"--sessions-dir", mem.Sessions}, {"--session", mem.Session}} {
				if f[1] != "" {
					args = append(args, f[0], f[1])
				}
			}
		}
		pid, err := spawnDetached(append(args, extra...), out())
		if err != nil {
			logf("job %s: could not start its funnel: %v", j.Name, err)
			continue
		}
		logf("job %s: time gate open, its funnel started in the background (pid %d) on %s", j.Name, pid, repo)
	}
}

// jobTimeClosed decides a job's time gate from its lock file's mtime, as
// the funnel does, without a Dreamer: closed only when the lock holds no
// holder (a dead one is the funnel's to recover) and its time is neither
// old enough nor in the future.
func jobTimeClosed(j jobs.Job, stateDir string, now time.Time) bool {
	path := filepath.Join(jobs.LockDir(jobs.StateDir(stateDir, j.Name), dream.MemoryKey(j.Dir)), lock.FileName)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 0 {
		return false
	}
	last := fi.ModTime()
	return !last.After(now.Add(lock.FutureSkew)) && now.Sub(last) < time.Duration(j.Settings.MinHours*float64(time.Hour))
}

// jobsOf is the jobs of a repository under one generation of the settings,
// for the daemon's walks (safe from any goroutine; the config's problems
// are for `dream jobs` to say).
func jobsOf(tables []settings.JobTable, s settings.Settings, home string, env func(string) (string, bool)) func(repo string) []jobs.Job {
	return func(repo string) []jobs.Job {
		all, _ := jobs.Resolve(jobs.Inputs{Settings: s, Tables: tables, Repo: repo, Home: home, Env: env})
		return all
	}
}
