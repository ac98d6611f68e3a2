package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/llm/llmtest"
)

// start runs the binary in the background.
func (w *world) start(extraEnv []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	w.t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Dir = w.repo
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out, &errb
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestKillFromSecondProcess(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	memBefore := snapshot(t, w.mem)
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "new.md", "content": "---\nname: n\ndescription: d\ntype: project\n---\nnew\n"}}}},
		llmtest.Turn{Delay: time.Minute, Text: "never reached"},
	)
	defer srv.Close()
	run, out, _ := w.start(modelEnv("anthropic", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
	var id string
	waitFor(t, 30*time.Second, "the dream to reach its second turn", func() bool { return len(srv.Requests()) >= 2 })
	tasks := decodeJSON[[]struct {
		ID, Status, Phase string
		FilesTouched      []string `json:"files_touched"`
	}](t, w.dream(nil, append([]string{"tasks", "--json"}, w.locFlags()...)...))
	for _, e := range tasks {
		if e.Status == "running" {
			id = e.ID
			if e.Phase != "updating" || len(e.FilesTouched) != 1 {
				t.Errorf("running task phase %q files %v, want updating after a write", e.Phase, e.FilesTouched)
			}
		}
	}
	if id == "" {
		t.Fatalf("no running task in %+v", tasks)
	}
	start := time.Now()
	k := w.dream(nil, append([]string{"kill", id}, w.locFlags()...)...)
	if k.code != 0 {
		t.Fatalf("kill failed:\n%s", k)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the killed dream did not end within 5 s")
	}
	took := time.Since(start)
	t.Logf("killed dream ended %s after dream kill was called", took.Round(time.Millisecond))
	if run.ProcessState.ExitCode() != 1 {
		t.Errorf("killed dream exit %d, want 1", run.ProcessState.ExitCode())
	}
	rep := decodeJSON[dream.Report](t, result{stdout: out.String()})
	if rep.Status != "killed" {
		t.Errorf("report status %q, want killed", rep.Status)
	}
	if after := snapshot(t, w.mem); fmt.Sprint(after) != fmt.Sprint(memBefore) {
		t.Errorf("memory changed by a killed dream:\n%v", after)
	}
	if _, err := os.Stat(filepath.Join(w.mem, ".consolidate-lock")); !os.IsNotExist(err) {
		t.Errorf("the lock was not rolled back: %v", err)
	}
	// Killing a finished task changes nothing.
	again := w.dream(nil, append([]string{"kill", id}, w.locFlags()...)...)
	if again.code != 0 || !strings.Contains(again.stdout, "already killed") {
		t.Errorf("second kill:\n%s", again)
	}
}

func TestUndoRestoresAndKeepsHandEdits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(w.mem, "notes.md", "---\nname: notes\ndescription: notes\ntype: user\n---\n\n- The user prefers tabs over spaces in Go code.\n- The user prefers tabs over spaces in Go code.\n- Deploys happen on Fridays.\n")
	pre := treeHash(t, w.mem, func(rel string) bool { return rel == ".consolidate-lock" })
	r := w.dream([]string{"DREAM_PROVIDER=offline"}, append([]string{"run", "--json"}, w.locFlags()...)...)
	if r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	rep := decodeJSON[dream.Report](t, r)
	if len(rep.FilesTouched) == 0 {
		t.Fatalf("the offline dream changed nothing: %s", r)
	}
	post := treeHash(t, w.mem, func(rel string) bool { return rel == ".consolidate-lock" })
	if post == pre {
		t.Fatal("no change to undo")
	}
	show := w.dream(nil, append([]string{"show", rep.TaskID}, w.locFlags()...)...)
	if show.code != 0 || !strings.Contains(show.stdout, "-- The user prefers tabs") {
		t.Fatalf("show lacks the removed duplicate:\n%s", show)
	}

	// Plain undo restores a byte-identical tree.
	u := w.dream(nil, append([]string{"undo", rep.TaskID}, w.locFlags()...)...)
	if u.code != 0 {
		t.Fatalf("undo:\n%s", u)
	}
	if got := treeHash(t, w.mem, func(rel string) bool { return rel == ".consolidate-lock" }); got != pre {
		t.Fatalf("undo did not restore the pre-dream tree:\nwant:\n%s\ngot:\n%s", pre, got)
	}

	// A second world: a hand edit after the dream, elsewhere, survives the undo.
	w2 := newWorld(t)
	w2.write(w2.mem, "notes.md", "---\nname: notes\ndescription: notes\ntype: user\n---\n\n- The user prefers tabs over spaces in Go code.\n- The user prefers tabs over spaces in Go code.\n- Deploys happen on Fridays.\n")
	rep2 := decodeJSON[dream.Report](t, w2.dream([]string{"DREAM_PROVIDER=offline"}, append([]string{"run", "--json"}, w2.locFlags()...)...))
	w2.write(w2.mem, "build.md", "---\nname: build\ndescription: how the project builds\ntype: project\n---\n\nRun `make all` to build.\nHand edit: CI uses make ci.\n")
	u2 := w2.dream(nil, append([]string{"undo", rep2.TaskID}, w2.locFlags()...)...)
	if u2.code != 0 {
		t.Fatalf("undo with an unrelated hand edit:\n%s", u2)
	}
	b, _ := os.ReadFile(filepath.Join(w2.mem, "build.md"))
	if !strings.Contains(string(b), "Hand edit: CI uses make ci.") {
		t.Fatal("the hand edit was lost by the undo")
	}
	n, _ := os.ReadFile(filepath.Join(w2.mem, "notes.md"))
	if strings.Count(string(n), "prefers tabs") != 2 {
		t.Fatalf("the undo did not bring back the removed line:\n%s", n)
	}

	// A hand edit on the same lines is a conflict, and nothing changes.
	w3 := newWorld(t)
	w3.write(w3.mem, "notes.md", "---\nname: notes\ndescription: notes\ntype: user\n---\n\n- The user prefers tabs over spaces in Go code.\n- The user prefers tabs over spaces in Go code.\n- Deploys happen on Fridays.\n")
	rep3 := decodeJSON[dream.Report](t, w3.dream([]string{"DREAM_PROVIDER=offline"}, append([]string{"run", "--json"}, w3.locFlags()...)...))
	w3.write(w3.mem, "notes.md", "---\nname: notes\ndescription: notes\ntype: user\n---\n\n- The user prefers TABS, always.\n- Deploys happen on Fridays.\n")
	before := treeHash(t, w3.mem, func(rel string) bool { return rel == ".consolidate-lock" })
	u3 := w3.dream(nil, append([]string{"undo", rep3.TaskID}, w3.locFlags()...)...)
	if u3.code == 0 || !strings.Contains(u3.stderr, "notes.md") {
		t.Fatalf("an overlapping hand edit must be reported as a conflict naming the file:\n%s", u3)
	}
	if got := treeHash(t, w3.mem, func(rel string) bool { return rel == ".consolidate-lock" }); got != before {
		t.Fatal("a refused undo changed the memory")
	}
	if f := w3.dream(nil, append([]string{"undo", rep3.TaskID, "--force"}, w3.locFlags()...)...); f.code != 0 {
		t.Fatalf("undo --force:\n%s", f)
	}
}

func TestReviewModeStagesThenApplies(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(w.mem, "notes.md", "---\nname: notes\ndescription: notes\ntype: user\n---\n\n- Deploys happen on Fridays after the freeze.\n- Deploys happen on Fridays after the freeze.\n")
	pre := snapshot(t, w.mem)
	r := w.dream([]string{"DREAM_PROVIDER=offline"}, append([]string{"run", "--review", "--json"}, w.locFlags()...)...)
	rep := decodeJSON[dream.Report](t, r)
	if r.code != 0 || rep.Status != "staged" || len(rep.Changes) == 0 {
		t.Fatalf("review run:\n%s", r)
	}
	if fmt.Sprint(snapshot(t, w.mem)) != fmt.Sprint(pre) {
		t.Fatal("a review run changed the memory before apply")
	}
	d := w.dream(nil, append([]string{"diff", rep.TaskID}, w.locFlags()...)...)
	if d.code != 0 || !strings.Contains(d.stdout, "-- Deploys happen on Fridays") {
		t.Fatalf("diff:\n%s", d)
	}
	a := w.dream(nil, append([]string{"apply", rep.TaskID}, w.locFlags()...)...)
	if a.code != 0 {
		t.Fatalf("apply:\n%s", a)
	}
	b, _ := os.ReadFile(filepath.Join(w.mem, "notes.md"))
	if strings.Count(string(b), "Deploys happen") != 1 {
		t.Fatalf("apply did not land the change:\n%s", b)
	}
	// Discard of a second review leaves the memory alone.
	w.write(w.mem, "more.md", "---\nname: more\ndescription: more\ntype: user\n---\n\n- Ship it on Mondays instead of Fridays.\n- Ship it on Mondays instead of Fridays.\n")
	pre2 := snapshot(t, w.mem)
	r2 := decodeJSON[dream.Report](t, w.dream([]string{"DREAM_PROVIDER=offline"}, append([]string{"run", "--review", "--json"}, w.locFlags()...)...))
	if dd := w.dream(nil, append([]string{"discard", r2.TaskID}, w.locFlags()...)...); dd.code != 0 {
		t.Fatalf("discard:\n%s", dd)
	}
	if fmt.Sprint(snapshot(t, w.mem)) != fmt.Sprint(pre2) {
		t.Fatal("discard changed the memory")
	}
}

func TestPinnedFactDroppedRollsBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(w.mem, "ops.md", "---\nname: ops\ndescription: ops\ntype: project\n---\n\n- The staging database is never to be reset. <!-- pin -->\n- Old note.\n")
	pre := snapshot(t, w.mem)
	srv := llmtest.NewServer(
		llmtest.Turn{Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": filepath.Join(w.mem, "ops.md")}}}},
		llmtest.Turn{Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "ops.md", "content": "---\nname: ops\ndescription: ops\ntype: project\n---\n\n- Old note.\n"}}}},
		llmtest.Turn{Text: "Tidied ops."},
	)
	defer srv.Close()
	r := w.dream(modelEnv("openai", srv.URL, false), append([]string{"run", "--json"}, w.locFlags()...)...)
	if r.code != 1 {
		t.Fatalf("a dream that drops a pinned fact must fail:\n%s", r)
	}
	rep := decodeJSON[dream.Report](t, r)
	if !strings.Contains(rep.Error, "The staging database is never to be reset.") {
		t.Errorf("the error does not say which fact: %q", rep.Error)
	}
	if fmt.Sprint(snapshot(t, w.mem)) != fmt.Sprint(pre) {
		t.Fatal("the memory changed although the dream was rolled back")
	}
}

func TestDemoRunsOffline(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	start := time.Now()
	r := w.dream([]string{"TMPDIR=" + t.TempDir()}, "demo") // the demo stays: in the test's temp dir

	if r.code != 0 {
		t.Fatalf("demo:\n%s", r)
	}
	took := time.Since(start)
	for _, want := range []string{"offline", "Improved", "Point dream at your own agent", "dream init claude "} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("demo output lacks %q:\n%s", want, r)
		}
	}
	// A dream never runs in the foreground of an agent's hook (README).
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "dream maybe") && strings.Contains(line, "hook") {
			t.Errorf("the demo suggests dream maybe from a hook: %s", line)
		}
	}
	t.Logf("dream demo took %s", took.Round(time.Millisecond))
}

func TestEvalOfflineCorpus(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "eval"))
	if err != nil {
		t.Fatal(err)
	}
	r := w.dream(nil, "eval", "--provider", "offline", "--dir", dir, "--json")
	if r.code != 0 {
		t.Fatalf("eval:\n%s", r)
	}
	scores := decodeJSON[[]struct {
		Scenario         string `json:"scenario"`
		MechanicalFixed  int    `json:"mechanical_fixed"`
		MechanicalTotal  int    `json:"mechanical_total"`
		ProbesRetained   int    `json:"probes_retained"`
		ProbesTotal      int    `json:"probes_total"`
		OutsideUntouched bool   `json:"outside_untouched"`
		Err              string `json:"error"`
	}](t, r)
	mech := 0
	for _, s := range scores {
		mech += s.MechanicalTotal
	}
	if len(scores) < 20 || mech == 0 {
		t.Fatalf("%d scenarios with %d mechanical defects, want at least 20 scenarios", len(scores), mech)
	}
	for _, s := range scores {
		if s.MechanicalFixed != s.MechanicalTotal || s.ProbesRetained != s.ProbesTotal || !s.OutsideUntouched || s.Err != "" {
			t.Errorf("%s: mechanical %d/%d probes %d/%d outside untouched %v err %q", s.Scenario, s.MechanicalFixed, s.MechanicalTotal, s.ProbesRetained, s.ProbesTotal, s.OutsideUntouched, s.Err)
		}
	}
}

var _ = context.Background
var _ = syscall.SIGKILL

// TestEvalScoresAModelDream drives `dream eval --provider openai` against the
// scripted fake model: every scenario gets a real model dream (the offline
// pass as a dream of its own, then one model turn), and the tokens it used
// are scored. The model says it is done and does nothing: what the offline
// pass fixed is not its work, so every scenario with a defect left to a
// model fails and eval exits 1.
func TestEvalScoresAModelDream(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "eval"))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer()
	defer srv.Close()
	for i := 0; i < 100; i++ { // one turn per scenario, with room for the corpus to grow
		srv.Append(llmtest.Turn{Text: "Nothing else needed changing."})
	}
	// The largest memory (large-180-topics) is estimated past the default max_tokens.
	r := w.dream(modelEnv("openai", srv.URL, false), "eval", "--dir", dir, "--json", "--max-tokens", "5000000")
	if r.code != 1 || !strings.Contains(r.stderr, "not fixed") {
		t.Fatalf("eval with a model that does nothing:\n%s", r)
	}
	scores := decodeJSON[[]struct {
		Scenario        string   `json:"scenario"`
		Tokens          int64    `json:"tokens"`
		DefectsTotal    int      `json:"defects_total"`
		MechanicalTotal int      `json:"mechanical_total"`
		MechanicalFixed int      `json:"mechanical_fixed"`
		ModelFixed      int      `json:"model_fixed"`
		ModelTotal      int      `json:"model_total"`
		Problems        []string `json:"problems"`
	}](t, r)
	// One model dream per scenario, each answered at its first request;
	// the largest memory is dreamed in parts, a first request each.
	if len(scores) < 20 || len(srv.Requests()) < len(scores) || len(srv.Requests()) > len(scores)+4 {
		t.Fatalf("%d scores, %d model requests: want one model dream per scenario (a few parts for the largest)", len(scores), len(srv.Requests()))
	}
	for _, q := range srv.Requests() {
		if strings.Contains(string(q.Body), `"role":"assistant"`) {
			t.Fatalf("a request after the first of a dream or part: the script answers each at once")
		}
	}
	failed := 0
	for _, s := range scores {
		if s.Tokens == 0 {
			t.Errorf("%s: no tokens scored for a model dream", s.Scenario)
		}
		if s.MechanicalFixed != s.MechanicalTotal || s.ModelFixed != 0 || s.ModelTotal != s.DefectsTotal-s.MechanicalTotal {
			t.Errorf("%s: the offline pass's fixes are scored as the model's: %+v", s.Scenario, s)
		}
		if (len(s.Problems) > 0) != (s.ModelTotal > 0) {
			t.Errorf("%s: problems %v with %d defects left to the model", s.Scenario, s.Problems, s.ModelTotal)
		}
		if len(s.Problems) > 0 {
			failed++
		}
	}
	if failed == 0 {
		t.Error("a model that does nothing passed every scenario")
	}
}
