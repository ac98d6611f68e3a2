package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/jobs"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/settings"
)

// TestRunJob: dream_run with a job runs that job (its engine, offline) on
// the server's repository, writes its report in its own dir and nothing
// in the memory; a job's run staged for review is read, applied, shown
// and undone by its id with the other tools (which once looked for it in
// the memory's records); an unknown job is a tool error naming the jobs.
func TestRunJob(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	root := t.TempDir()
	mem, state, repo := filepath.Join(root, "memory"), filepath.Join(root, "state"), filepath.Join(root, "repo")
	write(t, filepath.Join(mem, "MEMORY.md"), memIndex)
	write(t, filepath.Join(repo, "main.go"), "package main // TODO: everything\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=A", "-c", "user.email=a@b", "commit", "-q", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir = state
	all, _ := jobs.Resolve(jobs.Inputs{Settings: s, Repo: repo, Home: root, Env: func(string) (string, bool) { return "", false }})
	srv, err := New(Options{Base: dream.Config{MemoryDir: mem, StateDir: state, Settings: s.Dream}, Backend: provider.Choice{Name: provider.Offline},
		Repo: repo, Jobs: func() []jobs.Job { return all }, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var out RunOutput
	call(t, cs, "dream_run", map[string]any{"job": "health", "apply": true}, &out, false)
	report := filepath.Join(repo, ".dream", "health", "health.md")
	if out.Status != dream.StatusCompleted || out.MemoryDir != filepath.Dir(report) || strings.Join(out.FilesTouched, ",") != "health.md" {
		t.Fatalf("dream_run job=health: %+v", out)
	}
	if b := readFile(t, report); !strings.Contains(b, "1 TODO, 0 FIXME, 0 XXX") {
		t.Errorf("the report:\n%s", b)
	}
	if b := readFile(t, filepath.Join(mem, "MEMORY.md")); b != memIndex {
		t.Errorf("the memory changed:\n%s", b)
	}
	first := readFile(t, report)

	var staged RunOutput
	call(t, cs, "dream_run", map[string]any{"job": "health"}, &staged, false)
	if !staged.Staged || readFile(t, report) != first {
		t.Fatalf("dream_run job=health without apply: want it staged, the report unchanged: %+v", staged)
	}
	var diff DiffOutput
	call(t, cs, "dream_diff", map[string]any{"id": staged.TaskID}, &diff, false)
	if diff.Source != dream.DiffStaged || diff.MemoryDir != filepath.Dir(report) || !strings.Contains(diff.Diff, "+Measured offline") || !strings.Contains(diff.Diff, "(last report") {
		t.Fatalf("dream_diff of the job's staged run: %+v", diff)
	}
	var applied ApplyOutput
	call(t, cs, "dream_apply", map[string]any{"id": staged.TaskID}, &applied, false)
	if len(applied.Changes) != 1 || !strings.Contains(readFile(t, report), "(last report") {
		t.Fatalf("dream_apply of the job's staged run: %+v\n%s", applied, readFile(t, report))
	}
	var shown ShowOutput
	call(t, cs, "dream_show", map[string]any{"id": staged.TaskID}, &shown, false)
	if shown.MemoryDir != filepath.Dir(report) || len(shown.Entry.Files) != 1 {
		t.Fatalf("dream_show of the job's applied run: %+v", shown)
	}
	call(t, cs, "dream_undo", map[string]any{"id": staged.TaskID}, &shown, false)
	if readFile(t, report) != first {
		t.Fatalf("dream_undo of the job's run: the report is not the first one:\n%s", readFile(t, report))
	}
	if txt := call(t, cs, "dream_diff", map[string]any{"id": staged.TaskID, "memory_dir": mem}, nil, true); !strings.Contains(txt, "leave out memory_dir") {
		t.Errorf("a job's id with the memory's dir: %s", txt)
	}
	if b := readFile(t, filepath.Join(mem, "MEMORY.md")); b != memIndex {
		t.Errorf("the memory changed:\n%s", b)
	}

	if txt := call(t, cs, "dream_run", map[string]any{"job": "nope"}, nil, true); !strings.Contains(txt, "memory, health, review") {
		t.Errorf("unknown job: %s", txt)
	}
}
