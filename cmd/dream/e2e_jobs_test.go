package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/task"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
	"github.com/dreamkit/dream/spend"
)

// readmeJobConfig is the README's example [[job]], word for word: the
// block after the comment that names this test.
func readmeJobConfig(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "<!-- TestJobFromTheREADME runs the next block, word for word -->")
	m := regexp.MustCompile("(?s)```toml\n(.*?)```").FindStringSubmatch(s[max(i, 0):])
	if i < 0 || m == nil {
		t.Fatal("README.md has no example [[job]] block marked for TestJobFromTheREADME")
	}
	return m[1]
}

// jobWorld is a world whose repo is a git repository and whose user config
// holds config.
type jobWorld struct {
	*world
	commits int
}

func newJobWorld(t *testing.T, config string) *jobWorld {
	t.Helper()
	w := &jobWorld{world: newWorld(t)}
	gitRun(t, w.repo, "init", "-q", "-b", "main")
	w.write(filepath.Join(w.root, "home", ".config", "dream"), "config.toml", config)
	return w
}

// commit makes n commits dated at (git dates to the second).
func (w *jobWorld) commit(n int, at time.Time) {
	w.t.Helper()
	date := at.UTC().Format(time.RFC3339)
	for range n {
		w.commits++
		w.write(w.repo, "log.txt", fmt.Sprintf("change %d\n", w.commits))
		cmd := exec.Command("git", "-c", "user.name=Ann", "-c", "user.email=ann@example.org", "commit", "-q", "-a", "-m", fmt.Sprint("change ", w.commits))
		if w.commits == 1 {
			cmd = exec.Command("sh", "-c", `git add -A && git -c user.name=Ann -c user.email=ann@example.org commit -q -m "change 1"`)
		}
		cmd.Dir = w.repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		if out, err := cmd.CombinedOutput(); err != nil {
			w.t.Fatalf("commit: %v %s", err, out)
		}
	}
}

// job runs dream in the job world's repo with its state dir.
func (w *jobWorld) job(env []string, args ...string) result {
	w.t.Helper()
	return w.dream(env, append(args, "--state-dir", w.state)...)
}

func jobStatus(t *testing.T, w *jobWorld, name string) dream.StatusReport {
	t.Helper()
	r := w.job(nil, "status", "--job", name, "--json")
	if r.code != 0 {
		t.Fatalf("status --job %s: %s", name, r)
	}
	return decodeJSON[dream.StatusReport](t, r)
}

func gateIn(t *testing.T, s dream.StatusReport, name string) dream.GateState {
	t.Helper()
	for _, g := range s.Gates {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no %s gate in %+v", name, s.Gates)
	return dream.GateState{}
}

const readmeJob = "weekly-review"

// TestJobFromTheREADME runs the README's example job end to end through
// the binary. Offline: its commit gate is closed at 19 commits, opens at
// 20, and closes after the run; a second run's report is undone back to
// the first's. Against the fake model server: the model's notes land, a
// write outside the job's scope is a tool error and nothing outside it
// changes, and `dream kill` rolls a running job back (its report and its
// lock as they were).
func TestJobFromTheREADME(t *testing.T) {
	t.Parallel()
	w := newJobWorld(t, readmeJobConfig(t))
	notes := filepath.Join(w.repo, ".dream", "weekly", "notes.md")
	past := time.Now().Add(-time.Hour)
	w.commit(19, past)

	t.Run("offline", func(t *testing.T) {
		s := jobStatus(t, w, readmeJob)
		if g := gateIn(t, s, dream.GateCommits); g.Open || s.Next != dream.GateCommits || !strings.Contains(g.Detail, "19 commit(s)") {
			t.Fatalf("at 19 commits: next %s, commits %+v", s.Next, g)
		}
		if r := w.job(nil, "maybe", "--job", readmeJob); r.code != 0 || !strings.Contains(r.stdout, "commits") {
			t.Fatalf("maybe with the commit gate closed: %s", r)
		}
		if _, err := os.Stat(notes); !os.IsNotExist(err) {
			t.Fatalf("a closed gate wrote the notes: %v", err)
		}
		w.commit(1, past)
		// The closed walk above consumed the scan throttle, as a hook's
		// would: its ten minutes pass.
		if s := jobStatus(t, w, readmeJob); !gateIn(t, s, dream.GateCommits).Open || s.Next != dream.GateThrottle {
			t.Fatalf("at 20 commits: next %s (%+v)", s.Next, s.Gates)
		}
		if err := os.RemoveAll(filepath.Join(w.state, "jobs", readmeJob, "throttle")); err != nil {
			t.Fatal(err)
		}
		if s := jobStatus(t, w, readmeJob); s.Next != dream.GateReady {
			t.Fatalf("at 20 commits, ten minutes later: next %s (%+v)", s.Next, s.Gates)
		}
		r := w.job(nil, "maybe", "--job", readmeJob, "--json")
		first := decodeJSON[dream.Report](t, r)
		if r.code != 0 || first.Status != dream.StatusCompleted || first.Job != readmeJob || strings.Join(first.FilesTouched, ",") != "notes.md" || first.Found["commits"] != 20 {
			t.Fatalf("the job's run: %s", r)
		}
		firstNotes, _ := os.ReadFile(notes)
		if !strings.Contains(string(firstNotes), "20 commit(s)") || !strings.Contains(string(firstNotes), "change 20") {
			t.Fatalf("notes:\n%s", firstNotes)
		}
		s = jobStatus(t, w, readmeJob)
		if g := gateIn(t, s, dream.GateCommits); g.Open || !strings.Contains(g.Detail, "0 commit(s)") || gateIn(t, s, dream.GateTime).Open {
			t.Fatalf("after the run: %+v", s.Gates)
		}
		// Twenty commits later (dated after the run) the commit gate is
		// open again; the time gate still holds it for a day.
		w.commit(20, time.Now().Add(2*time.Second))
		s = jobStatus(t, w, readmeJob)
		if !gateIn(t, s, dream.GateCommits).Open || s.Next != dream.GateTime {
			t.Fatalf("after 20 more commits: next %s, %+v", s.Next, s.Gates)
		}
		r = w.job(nil, "run", "--job", readmeJob, "--json")
		second := decodeJSON[dream.Report](t, r)
		if r.code != 0 || second.Found["commits"] != 20 {
			t.Fatalf("second run: %s", r)
		}
		if b, _ := os.ReadFile(notes); bytes.Equal(b, firstNotes) {
			t.Fatal("the second run did not rewrite the notes")
		}
		tasks := decodeJSON[[]task.Entry](t, w.job(nil, "tasks", "--json", "--job", readmeJob))
		if len(tasks) != 2 || tasks[0].Job != readmeJob || tasks[0].Doing != "writing the weekly review notes" {
			t.Fatalf("tasks: %+v", tasks)
		}
		// undo finds the job from the id alone, from any directory.
		u := w.dream(nil, "undo", second.TaskID, "--state-dir", w.state)
		if u.code != 0 {
			t.Fatalf("undo: %s", u)
		}
		if b, _ := os.ReadFile(notes); !bytes.Equal(b, firstNotes) {
			t.Fatalf("undo did not restore the first notes:\n%s", b)
		}
		log := w.job(nil, "log", "--job", readmeJob)
		if log.code != 0 || strings.Count(log.stdout, " dream ") != 2 || !strings.Contains(log.stdout, " undo ") {
			t.Fatalf("log --job: %s", log)
		}
		// The memory dream's records are apart from the job's.
		if lg := w.dream(nil, append([]string{"log"}, w.locFlags()...)...); lg.code != 0 || strings.Contains(lg.stdout, second.TaskID) {
			t.Fatalf("the memory's log shows the job's dream: %s", lg)
		}
	})

	t.Run("model", func(t *testing.T) {
		before, _ := os.ReadFile(notes)
		main, _ := os.ReadFile(filepath.Join(w.repo, "main.go"))
		written := "# Weekly review\n\n## Notes\n\nTwenty small changes to log.txt; nothing risky.\n"
		srv := llmtest.NewServer(
			llmtest.Turn{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": notes}}}},
			llmtest.Turn{Calls: []llmtest.Call{
				{Name: "write", Input: map[string]any{"file_path": "other.md", "content": "out of scope\n"}},
				{Name: "write", Input: map[string]any{"file_path": filepath.Join(w.repo, "main.go"), "content": "package evil\n"}},
				{Name: "write", Input: map[string]any{"file_path": "../outside.md", "content": "escape\n"}},
			}},
			llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "notes.md", "content": written}}}},
			llmtest.Turn{Text: "Wrote the weekly notes."},
		)
		defer srv.Close()
		r := w.job(modelEnv("anthropic", srv.URL, false), "run", "--job", readmeJob, "--json")
		rep := decodeJSON[dream.Report](t, r)
		if r.code != 0 || rep.Status != dream.StatusCompleted || rep.Turns != 4 {
			t.Fatalf("model run: %s", r)
		}
		if b, _ := os.ReadFile(notes); string(b) != written {
			t.Errorf("notes after the model run:\n%s", b)
		}
		if b, _ := os.ReadFile(filepath.Join(w.repo, "main.go")); !bytes.Equal(b, main) {
			t.Errorf("main.go changed: %s", b)
		}
		for _, p := range []string{filepath.Join(filepath.Dir(notes), "other.md"), filepath.Join(w.repo, ".dream", "outside.md")} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s was written: %v", p, err)
			}
		}
		reqs := srv.Requests()
		if n := countToolErrors(t, "anthropic", reqs[2].Body); n != 3 {
			t.Errorf("the three writes outside the scope came back as %d tool errors", n)
		}
		if !strings.Contains(string(reqs[2].Body), "outside this job's write scope: it may write only notes.md") {
			t.Errorf("the refusal does not name the scope:\n%s", reqs[2].Body)
		}
		first := string(reqs[0].Body)
		if !strings.Contains(first, `running the background job \"weekly-review\"`) || !strings.Contains(first, "write the \\\"## Notes\\\" section") ||
			!strings.Contains(first, "Files you may write there: notes.md") || !strings.Contains(first, "The notes at "+notes) {
			t.Errorf("the job's prompts are not in the first request:\n%s", first)
		}
		if bytes.Equal(before, []byte(written)) {
			t.Fatal("nothing to compare")
		}
	})

	t.Run("kill", func(t *testing.T) {
		before, _ := os.ReadFile(notes)
		last := jobStatus(t, w, readmeJob).LastConsolidatedAt
		srv := llmtest.NewServer(
			llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "notes.md", "content": "half-written\n"}}}},
			llmtest.Turn{Delay: time.Minute, Text: "never reached"},
		)
		defer srv.Close()
		run, out, _ := w.start(modelEnv("anthropic", srv.URL, false), "run", "--job", readmeJob, "--json", "--state-dir", w.state)
		waitFor(t, 30*time.Second, "the job to reach its second turn", func() bool { return len(srv.Requests()) >= 2 })
		var id string
		for _, e := range decodeJSON[[]task.Entry](t, w.job(nil, "tasks", "--json")) {
			if e.Status == task.StatusRunning && e.Job == readmeJob {
				id = e.ID
			}
		}
		if id == "" {
			t.Fatal("no running task of the job")
		}
		// The memory dir named (as a configured host names it) does not
		// keep a job's dream from being killed: it is no memory's.
		if k := w.job(nil, append([]string{"kill", id}, w.locFlags()...)...); k.code != 0 {
			t.Fatalf("kill: %s", k)
		}
		done := make(chan error, 1)
		go func() { done <- run.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the killed job did not end")
		}
		if rep := decodeJSON[dream.Report](t, result{stdout: out.String()}); run.ProcessState.ExitCode() != 1 || rep.Status != dream.StatusKilled {
			t.Fatalf("killed job: exit %d, %+v", run.ProcessState.ExitCode(), rep)
		}
		if b, _ := os.ReadFile(notes); !bytes.Equal(b, before) {
			t.Errorf("a killed job changed its notes:\n%s", b)
		}
		if now := jobStatus(t, w, readmeJob).LastConsolidatedAt; now == nil || !now.Equal(*last) {
			t.Errorf("the job's lock was not rolled back: last run %v, was %v", now, last)
		}
	})
}

// TestJobHealthOnThisRepository runs `dream run --job health` on this very
// repository with no model key: the report is written, offline.
func TestJobHealthOnThisRepository(t *testing.T) {
	t.Parallel()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	repo := strings.TrimSpace(string(top))
	out := filepath.Join(t.TempDir(), "health")
	w := newJobWorld(t, fmt.Sprintf("[[job]]\nname = \"health\"\ndir = %q\n", out))
	r := w.job(nil, "run", "--job", "health", "--repo", repo, "--json")
	rep := decodeJSON[dream.Report](t, r)
	if r.code != 0 || rep.Status != dream.StatusCompleted || rep.Job != "health" || rep.Usage.InputTokens != 0 || rep.Turns != 0 {
		t.Fatalf("dream run --job health: %s", r)
	}
	report, err := os.ReadFile(filepath.Join(out, "health.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# Code health: ", "## Dependencies", "### `go.mod` (module github.com/dreamkit/dream)", "| github.com/BurntSushi/toml | v",
		"## TODO, FIXME, XXX", "## Lint configuration"} {
		if !strings.Contains(string(report), s) {
			t.Errorf("the report lacks %q:\n%s", s, report)
		}
	}
	// Its dir is outside the repository: nothing of it to leave out.
	if !strings.Contains(string(report), "(outside vendor, node_modules, third_party)") {
		t.Errorf("the report names an empty dir among those left out:\n%s", report)
	}
	t.Logf("the report (%d bytes), found %v:\n%s", len(report), rep.Found, report)
}

// TestHookTwoJobs: with two jobs enabled, the agent's hook starts each
// one's funnel in its own detached process and returns at once, long
// before either ends (each spends three seconds on its model); each lands
// its own report under its own lock, side by side; the next hook finds
// both time gates closed and starts nothing.
func TestHookTwoJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := newJobWorld(t, fmt.Sprintf(`[[job]]
name = "health"
enabled = true
dir = %q
min_commits = 1

[[job]]
name = "review"
enabled = true
dir = %q
min_commits = 1
`, filepath.Join(dir, "health"), filepath.Join(dir, "review")))
	w.commit(2, time.Now().Add(-time.Hour))
	srv := llmtest.NewServer(llmtest.Turn{Delay: 3 * time.Second, Text: "assessed"}, llmtest.Turn{Delay: 3 * time.Second, Text: "assessed"})
	defer srv.Close()
	w.env = append(w.env, modelEnv("anthropic", srv.URL, false)...)
	hook := func() (result, time.Duration) {
		payload, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": w.repo, "hook_event_name": "Stop"})
		cmd := exec.Command(binPath, "hook")
		cmd.Env, cmd.Dir, cmd.Stdin = w.env, w.repo, bytes.NewReader(payload)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return result{code, o.String(), e.String()}, took
	}
	r, took := hook()
	returned := time.Now()
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("hook: %s", r)
	}
	state := filepath.Join(w.root, "home", ".local", "state", "dream")
	var tasks []task.Entry
	waitFor(t, 90*time.Second, "both jobs to complete", func() bool {
		tasks, _ = task.List(state)
		done := 0
		for _, e := range tasks {
			if e.Status == task.StatusCompleted {
				done++
			}
		}
		return done == 2
	})
	t.Logf("the hook returned in %v; the jobs ran %s and %s", took.Round(time.Millisecond), tasks[0].EndedAt.Sub(tasks[0].StartedAt).Round(time.Millisecond), tasks[1].EndedAt.Sub(tasks[1].StartedAt).Round(time.Millisecond))
	seen := map[string]bool{}
	for _, e := range tasks {
		seen[e.Job] = true
		if !e.EndedAt.After(returned.Add(2 * time.Second)) {
			t.Errorf("job %s ended %v, before the hook could have waited for it (returned %v)", e.Job, e.EndedAt, returned)
		}
	}
	if !seen["health"] || !seen["review"] {
		t.Fatalf("tasks: %+v", tasks)
	}
	// Side by side: each started before the other ended.
	if !tasks[0].StartedAt.Before(*tasks[1].EndedAt) || !tasks[1].StartedAt.Before(*tasks[0].EndedAt) {
		t.Errorf("the jobs ran one after the other: %+v", tasks)
	}
	for _, f := range []string{"health/health.md", "review/review.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	logBefore, _ := os.ReadFile(filepath.Join(state, "hook.log"))
	for _, j := range []string{"health", "review"} {
		if !strings.Contains(string(logBefore), "job "+j+": time gate open, its funnel started in the background") {
			t.Errorf("hook.log does not record job %s's start:\n%s", j, logBefore)
		}
	}
	if r, _ := hook(); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("second hook: %s", r)
	}
	time.Sleep(500 * time.Millisecond)
	logAfter, _ := os.ReadFile(filepath.Join(state, "hook.log"))
	if n := strings.Count(string(logAfter[len(logBefore):]), "its funnel started"); n != 0 {
		t.Errorf("with both time gates closed the hook started %d funnel(s):\n%s", n, logAfter)
	}
	if after, _ := task.List(state); len(after) != 2 {
		t.Errorf("tasks after the second hook: %+v", after)
	}
}

// TestDreamPromptHoldsPreviousRecord: a model dream's task holds the record
// of the dream before it, read-only, and nothing of an older one.
func TestDreamPromptHoldsPreviousRecord(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	srv := llmtest.NewServer()
	defer srv.Close()
	var ids []string
	for i, marker := range []string{"alpha-fact", "beta-fact", "gamma-fact"} {
		srv.Append(
			llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": fmt.Sprintf("topic%d.md", i),
				"content": "---\nname: t\ndescription: d\ntype: project\n---\n\n" + marker + "\n"}}}},
			llmtest.Turn{Text: "done"},
		)
		n := len(srv.Requests())
		r := w.dream(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
		rep := decodeJSON[dream.Report](t, r)
		if r.code != 0 || rep.Status != dream.StatusCompleted {
			t.Fatalf("dream %d: %s", i+1, r)
		}
		ids = append(ids, rep.TaskID)
		task := string(srv.Requests()[n].Body)
		switch i {
		case 0:
			if strings.Contains(task, "The previous dream") {
				t.Errorf("the first dream's task has a previous record:\n%s", task)
			}
		case 2:
			for _, s := range []string{"## The previous dream", "Dream " + ids[1], "landed these changes", "added topic1.md", "+beta-fact"} {
				if !strings.Contains(task, s) {
					t.Errorf("the third dream's task lacks %q:\n%s", s, task)
				}
			}
			for _, s := range []string{ids[0], "alpha-fact"} {
				if strings.Contains(task, s) {
					t.Errorf("the third dream's task holds %q from the first dream:\n%s", s, task)
				}
			}
		}
	}
}

// TestDaemonWalksJobs: the daemon walks an enabled job's funnel after its
// project's memory dream's, runs it, and counts it under host="job:NAME".
func TestDaemonWalksJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := newJobWorld(t, fmt.Sprintf("[[job]]\nname = \"health\"\nenabled = true\ndir = %q\nmin_commits = 1\n", filepath.Join(dir, "health")))
	w.commit(2, time.Now().Add(-time.Hour))
	w.daemonFile(fmt.Sprintf("detect = false\nlisten = \"127.0.0.1:0\"\n\n[[project]]\npath = %q\nmemory_dir = %q\nsessions_dir = %q\n", w.repo, w.mem, w.sessions))
	_, logs := w.startDaemon([]string{"DREAM_PROVIDER=offline"}, "--idle", "300ms", "--state-dir", w.state)
	var walked map[string]any
	waitFor(t, 60*time.Second, "the job's funnel", func() bool {
		for _, l := range logLines(t, logs.String()) {
			if l["msg"] == "job funnel walked" && l["job"] == "health" && l["status"] == dream.StatusCompleted {
				walked = l
			}
		}
		return walked != nil
	})
	if b, err := os.ReadFile(filepath.Join(dir, "health", "health.md")); err != nil || !strings.Contains(string(b), "# Code health: repo") {
		t.Fatalf("the job's report: %v\n%s", err, b)
	}
	addr, _ := findLog(t, logs.String(), "listening")["addr"].(string)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(metrics), `dream_dreams_completed_total{host="job:health"} 1`) {
		t.Errorf("/metrics does not count the job:\n%s", metrics)
	}
}

// TestJobSpendsUnderTheCeilings: a job's dreams on a model pass the same
// spending ceilings as the memory dream's and are counted in the same
// ledger. A job whose estimate is over what is left of the day does not
// start and sends nothing; one that runs is estimated, reserved and
// settled with what it spent. (A job's runner once estimated nothing, so
// its model requests passed every max_cost_* and reached no ledger.)
func TestJobSpendsUnderTheCeilings(t *testing.T) {
	t.Parallel()
	w := newJobWorld(t, readmeJobConfig(t))
	w.commit(20, time.Now().Add(-time.Hour))
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "notes.md", "content": "# Weekly review\n\n## Notes\n\nNothing risky.\n"}}}},
		llmtest.Turn{Text: "Wrote the notes."},
	)
	defer srv.Close()
	env := modelEnv("anthropic", srv.URL, false)

	r := w.job(env, "status", "--job", readmeJob, "--json")
	var st struct {
		Cost struct {
			Estimate *spend.Estimate `json:"estimate"`
		} `json:"cost"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || st.Cost.Estimate == nil || st.Cost.Estimate.Amount.USD <= 0 {
		t.Fatalf("status --job on a model has no priced estimate: %s", r)
	}
	est := st.Cost.Estimate.Amount

	tight := append(slices.Clone(env), "DREAM_MAX_COST_PER_DAY="+strconv.FormatFloat(est.USD/2, 'g', -1, 64))
	r = w.job(tight, "run", "--job", readmeJob, "--json")
	if rep := decodeJSON[map[string]any](t, r); r.code != 1 || rep["status"] != dream.StatusNotStarted || !strings.Contains(fmt.Sprint(rep["error"]), "max_cost_per_day") {
		t.Fatalf("a job over the day's ceiling: want not_started naming it:\n%s", r)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d model requests from a job that did not start", n)
	}

	r = w.job(env, "run", "--job", readmeJob, "--json")
	rep := decodeJSON[dream.Report](t, r)
	if r.code != 0 || rep.Status != dream.StatusCompleted || rep.Estimate == nil || rep.Cost == nil || rep.Cost.USD <= 0 {
		t.Fatalf("a job on a model: want it completed with its estimate and cost:\n%s", r)
	}
	ds, _, err := spend.Open(w.state).Dreams()
	if err != nil {
		t.Fatal(err)
	}
	var settled *spend.Dream
	for i := range ds {
		if ds[i].Reserve.ID == rep.TaskID {
			settled = &ds[i]
		}
	}
	if settled == nil || !settled.Settled || settled.Spent.USD != rep.Cost.USD {
		t.Fatalf("the ledger has no settled record of the job's dream %s (cost %v): %+v", rep.TaskID, rep.Cost, ds)
	}
	t.Logf("job estimate %s, spent %s", est, settled.Spent)
}

// TestTasksAndStatsOfAJob: `dream tasks --job NAME` and `dream stats --job
// NAME` show that job's runs also when a memory dir is named (a job writes
// its own dir, not the memory's), and a job whose name begins with
// "memory" is that job, not the memory dream (both were once filtered
// away).
func TestTasksAndStatsOfAJob(t *testing.T) {
	t.Parallel()
	w := newJobWorld(t, readmeJobConfig(t)+`
[[job]]
name = "memory-notes"
uses = "review"
dir = ".dream/memory-notes"
files = ["notes.md"]
read = ["repo"]
`)
	w.commit(1, time.Now().Add(-time.Hour))
	ran := map[string]string{}
	for _, job := range []string{readmeJob, "memory-notes"} {
		r := w.job(nil, "run", "--job", job, "--json")
		if rep := decodeJSON[dream.Report](t, r); r.code != 0 || rep.Status != dream.StatusCompleted {
			t.Fatalf("run --job %s:\n%s", job, r)
		} else {
			ran[job] = rep.TaskID
		}
	}
	for job, id := range ran {
		args := append([]string{"tasks", "--job", job, "--json"}, w.locFlags()...)
		tasks := decodeJSON[[]task.Entry](t, w.job(nil, args...))
		if len(tasks) != 1 || tasks[0].ID != id {
			t.Errorf("tasks --job %s with the memory dir named: %+v, want %s alone", job, tasks, id)
		}
		st := decodeJSON[map[string]any](t, w.job(nil, append([]string{"stats", "--job", job, "--json"}, w.locFlags()...)...))
		if st["completed"] != float64(1) {
			t.Errorf("stats --job %s with the memory dir named: completed %v, want 1", job, st["completed"])
		}
	}
	if tasks := decodeJSON[[]task.Entry](t, w.job(nil, append([]string{"tasks", "--job", "memory", "--json"}, w.locFlags()...)...)); len(tasks) != 0 {
		t.Errorf("tasks --job memory lists the jobs' runs: %+v", tasks)
	}
}
