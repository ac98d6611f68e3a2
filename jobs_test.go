package dream

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/settings"

	"github.com/dreamkit/dream/internal/telemetry"
	"github.com/dreamkit/dream/jobs"
)

// jobWorld is a git repository and a state dir for a job's Dreamer.
type jobWorld struct {
	t                *testing.T
	repo, dir, state string
	commits          int
}

func newJobWorld(t *testing.T) *jobWorld {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	root := t.TempDir()
	w := &jobWorld{t: t, repo: filepath.Join(root, "repo"), state: filepath.Join(root, "state")}
	w.dir = filepath.Join(w.repo, ".dream", "notes")
	w.git("init", "-q", "-b", "main", w.repo)
	return w
}

func (w *jobWorld) git(args ...string) {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	if args[0] != "init" {
		cmd.Dir = w.repo
	}
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.org", "GIT_COMMITTER_NAME=A",
		"GIT_COMMITTER_EMAIL=a@example.org", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// commit makes n commits dated a minute ago (before any run the test
// makes next, whatever second it is in).
func (w *jobWorld) commit(n int) {
	w.t.Helper()
	date := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	for range n {
		w.commits++
		os.WriteFile(filepath.Join(w.repo, "f.txt"), []byte(fmt.Sprint(w.commits)), 0o644)
		w.git("add", "f.txt")
		w.git("-c", "user.name=A", "commit", "-q", "-m", fmt.Sprint("c", w.commits), "--date", date)
	}
}

// reportRunner writes the job's report, and whatever else extra names.
type reportRunner struct {
	extra []string
	jobs  []Job
}

func (r *reportRunner) Run(_ context.Context, job Job) (Outcome, error) {
	r.jobs = append(r.jobs, job)
	var touched []string
	for _, f := range append([]string{job.Spec.Report()}, r.extra...) {
		p := filepath.Join(job.MemoryDir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("report of "+job.TaskID+"\n"), 0o644); err != nil {
			return Outcome{}, err
		}
		touched = append(touched, f)
	}
	return Outcome{FilesTouched: touched, Found: map[string]int{"things": 3}}, nil
}

func (w *jobWorld) dreamer(spec jobs.Spec, r Runner) *Dreamer {
	w.t.Helper()
	s := settings.DreamDefaults()
	s.MinHours, s.MinSessions = 1, 0
	spec.Dir = w.dir
	d, err := New(Config{MemoryDir: w.dir, RepoDir: w.repo, StateDir: w.state, Settings: s, Runner: r, Job: spec})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { d.Close() })
	return d
}

func gateOf(t *testing.T, s StatusReport, name string) GateState {
	t.Helper()
	for _, g := range s.Gates {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no %s gate in %+v", name, s.Gates)
	return GateState{}
}

// TestJobCommitGate: the commit gate opens at MinCommits commits since the
// job's last run and closes after a run; the unset gates are not shown.
func TestJobCommitGate(t *testing.T) {
	w := newJobWorld(t)
	w.commit(2)
	d := w.dreamer(jobs.Spec{Name: "notes", Files: []string{"notes.md"}, MinCommits: 3}, &reportRunner{})
	ctx := context.Background()
	s, err := d.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := gateOf(t, s, GateCommits); g.Open || g.Detail != "2 commit(s) since the last run, need 3" || s.Next != GateCommits || s.Job != "notes" {
		t.Fatalf("with 2 commits: %+v, next %s", g, s.Next)
	}
	for _, g := range s.Gates {
		if g.Name == GateSessions || g.Name == GateFiles {
			t.Errorf("an unset gate is shown: %+v", g)
		}
	}
	w.commit(1)
	if s, _ = d.Status(ctx); !gateOf(t, s, GateCommits).Open || s.Next != GateReady {
		t.Fatalf("with 3 commits: %+v, next %s", s.Gates, s.Next)
	}
	res, err := d.MaybeRun(ctx)
	if err != nil || res.Report == nil || res.Report.Status != StatusCompleted {
		t.Fatalf("maybe: %+v %v", res, err)
	}
	if s, _ = d.Status(ctx); gateOf(t, s, GateCommits).Open || gateOf(t, s, GateCommits).Detail != "0 commit(s) since the last run, need 3" {
		t.Fatalf("after the run the commit gate is %+v", gateOf(t, s, GateCommits))
	}
}

// TestJobFileGate: the file gate opens when a watched file changed since
// the last run.
func TestJobFileGate(t *testing.T) {
	w := newJobWorld(t)
	w.commit(1)
	d := w.dreamer(jobs.Spec{Name: "notes", Files: []string{"notes.md"}, Watch: []string{"docs/**/*.md", "go.mod"}}, &reportRunner{})
	ctx := context.Background()
	s, _ := d.Status(ctx)
	if g := gateOf(t, s, GateFiles); g.Open {
		t.Fatalf("nothing watched exists: %+v", g)
	}
	os.MkdirAll(filepath.Join(w.repo, "docs", "api"), 0o755)
	os.WriteFile(filepath.Join(w.repo, "docs", "api", "x.md"), []byte("x"), 0o644)
	if s, _ = d.Status(ctx); !gateOf(t, s, GateFiles).Open || !strings.Contains(gateOf(t, s, GateFiles).Detail, "docs/api/x.md") {
		t.Fatalf("a watched file appeared: %+v", gateOf(t, s, GateFiles))
	}
	if _, err := d.Run(ctx, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, _ = d.Status(ctx); gateOf(t, s, GateFiles).Open {
		t.Fatalf("after the run: %+v", gateOf(t, s, GateFiles))
	}
	future := time.Now().Add(time.Hour)
	os.WriteFile(filepath.Join(w.repo, "go.mod"), []byte("module x\n"), 0o644)
	os.Chtimes(filepath.Join(w.repo, "go.mod"), future, future)
	if s, _ = d.Status(ctx); !gateOf(t, s, GateFiles).Open {
		t.Fatalf("go.mod changed: %+v", gateOf(t, s, GateFiles))
	}
}

// TestJobSkeleton: a job's dream writes only its scope, keeps its lock,
// journal and history in its part of the state dir, and its task and
// telemetry say which job it was and what it found.
func TestJobSkeleton(t *testing.T) {
	w := newJobWorld(t)
	w.commit(1)
	r := &reportRunner{extra: []string{"stray.md"}}
	d := w.dreamer(jobs.Spec{Name: "notes", Doing: "taking notes", Files: []string{"notes.md"}, Read: []string{jobs.ReadRepo}}, r)
	rep, err := d.Run(context.Background(), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Job != "notes" || strings.Join(rep.FilesTouched, ",") != "notes.md" || rep.Found["things"] != 3 {
		t.Fatalf("report: job %q files %v found %v", rep.Job, rep.FilesTouched, rep.Found)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "stray.md")); !os.IsNotExist(err) {
		t.Fatalf("a file outside the write scope landed: %v", err)
	}
	job := r.jobs[0]
	if job.Spec.Name != "notes" || job.RepoDir != w.repo || job.SessionsDir != "" || job.Budgets.MaxTurns != settings.DreamDefaults().MaxTurns || !job.LastRun.IsZero() || job.Previous != "" {
		t.Errorf("the runner's Job: %+v", job)
	}
	ns := filepath.Join(w.state, "jobs", "notes")
	lockFile := filepath.Join(jobs.LockDir(ns, MemoryKey(w.dir)), ".consolidate-lock")
	if fi, err := os.Stat(lockFile); err != nil || fi.Size() != 0 {
		t.Errorf("the job's lock %s: %v", lockFile, err)
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".consolidate-lock")); !os.IsNotExist(err) {
		t.Errorf("a lock file in the job's write dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ns, "audit")); err != nil {
		t.Errorf("the job's audit history is not in its part of the state dir: %v", err)
	}
	tasks, _ := task.List(w.state)
	if len(tasks) != 1 || tasks[0].Job != "notes" || tasks[0].Doing != "taking notes" || tasks[0].MemoryDir != w.dir {
		t.Errorf("tasks = %+v", tasks)
	}
	events, _ := telemetry.Open(w.state).Read(time.Time{})
	if len(events) != 2 || events[0].Job != "notes" || events[1].Job != "notes" || events[1].Found["things"] != 3 {
		t.Errorf("events = %+v", events)
	}
	// The next run is told when the last one was, and undo restores the
	// report as it was before it.
	w.commit(1)
	rep2, err := d.Run(context.Background(), RunOptions{})
	if err != nil || r.jobs[1].LastRun.IsZero() {
		t.Fatalf("second run: %v, last run %v", err, r.jobs[1].LastRun)
	}
	if _, err := d.Undo(context.Background(), rep2.TaskID, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.dir, "notes.md")); string(b) != "report of "+rep.TaskID+"\n" {
		t.Errorf("after undo the report is %q", b)
	}
}

// TestJobScopeRefused: a job's write dir may not be the repository, hold
// it, or be in it with its files unlisted.
func TestJobScopeRefused(t *testing.T) {
	w := newJobWorld(t)
	for _, tc := range []struct {
		dir   string
		files []string
	}{{w.repo, []string{"a.md"}}, {filepath.Dir(w.repo), []string{"a.md"}}, {filepath.Join(w.repo, "src"), nil}, {filepath.Join(w.repo, "src"), []string{"*.go"}}} {
		_, err := New(Config{MemoryDir: tc.dir, RepoDir: w.repo, StateDir: w.state, Runner: &reportRunner{}, Job: jobs.Spec{Name: "x", Dir: tc.dir, Files: tc.files}})
		if err == nil {
			t.Errorf("dir %s files %v: accepted", tc.dir, tc.files)
		}
	}
	dir := filepath.Join(t.TempDir(), "notes")
	if _, err := New(Config{MemoryDir: dir, StateDir: w.state, Runner: &reportRunner{}, Job: jobs.Spec{Name: "../../escape", Dir: dir}}); err == nil {
		t.Error("a job name that leaves the state dir is accepted")
	}
}

// memRunner writes one memory file per dream, named by the test.
type memRunner struct {
	file, text string
	fail       bool
	jobs       []Job
}

func (r *memRunner) Run(_ context.Context, job Job) (Outcome, error) {
	r.jobs = append(r.jobs, job)
	if r.fail {
		return Outcome{}, fmt.Errorf("the model gave up")
	}
	if err := os.WriteFile(filepath.Join(job.MemoryDir, r.file), []byte(r.text), 0o644); err != nil {
		return Outcome{}, err
	}
	return Outcome{FilesTouched: []string{r.file}}, nil
}

// TestPreviousRecord: a memory dream's Job holds the record of the dream
// before it (what it landed, what it staged, or that it left nothing) and
// nothing of any older dream; a landed dream the user undid is said to be
// undone (the record once told the next dream it had landed).
func TestPreviousRecord(t *testing.T) {
	f := newFixture(t)
	r := &memRunner{}
	d := f.dreamer(t, func(c *Config) { c.Runner, c.Now = r, nil }) // dreams in order on the real clock
	ctx := context.Background()
	dreamOf := func(file, text string, o RunOptions) Report {
		t.Helper()
		r.file, r.text = file, text
		rep, _ := d.Run(ctx, o)
		return rep
	}
	d1 := dreamOf("one.md", "first-marker\n", RunOptions{})
	d2 := dreamOf("two.md", "second-marker\n", RunOptions{})
	d3 := dreamOf("three.md", "third-marker\n", RunOptions{Review: true})
	r.fail = true
	d4 := dreamOf("", "", RunOptions{})
	r.fail = false
	d5 := dreamOf("five.md", "fifth-marker\n", RunOptions{})
	if _, err := d.Undo(ctx, d5.TaskID, false); err != nil {
		t.Fatal(err)
	}
	dreamOf("six.md", "sixth-marker\n", RunOptions{})
	if r.jobs[0].Previous != "" {
		t.Errorf("the first dream has a previous record: %q", r.jobs[0].Previous)
	}
	for i, tc := range []struct {
		want, not []string
	}{
		{[]string{d1.TaskID + " (", "landed these changes", "- added one.md (+1 -0)", "+first-marker"}, nil},
		{[]string{d2.TaskID, "+second-marker"}, []string{d1.TaskID, "first-marker"}},
		{[]string{d3.TaskID, "staged for review and has not landed (review requested)", "- added three.md", "+third-marker"}, []string{d2.TaskID, "second-marker", d1.TaskID}},
		{[]string{d4.TaskID, "ended failed and left no change in the memory: the model gave up"}, []string{d3.TaskID, "third-marker", "second-marker"}},
		{[]string{d5.TaskID, "landed these changes, and the user then undid them", "+fifth-marker"}, []string{d4.TaskID}},
	} {
		prev := r.jobs[i+1].Previous
		for _, s := range tc.want {
			if !strings.Contains(prev, s) {
				t.Errorf("dream %d's previous record lacks %q:\n%s", i+2, s, prev)
			}
		}
		for _, s := range tc.not {
			if strings.Contains(prev, s) {
				t.Errorf("dream %d's previous record holds %q from an older dream:\n%s", i+2, s, prev)
			}
		}
	}
}
