package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

const memIndex = "# Memory\n\n- [Build](build.md) — how the project builds and ships\n- [用户偏好](prefs.md) — 用户的编码习惯\n"

const memBuild = "---\nname: build\ndescription: how the project builds and ships\ntype: project\n---\n\n# Build\n\n## Release\n\n1. Run `make test`.\n2. Tag the commit: `git tag v1.2.3`.\n3. Push the tag; CI publishes.\n\n```sh\nmake release VERSION=1.2.3\n```\n\n> Never publish from a dirty tree. — the maintainer\n"

// memPrefs holds an exact duplicate under one heading: the offline engine
// removes the second copy, which gives every tool something real to show.
const memPrefs = "---\nname: prefs\ndescription: 用户的编码习惯\ntype: user\n---\n\n# 偏好\n\n## Go\n\n- 用户喜欢用 tab 缩进 Go 代码。\n- The user reviews diffs before every commit.\n- 用户喜欢用 tab 缩进 Go 代码。\n"

type fixture struct {
	mem, state string
	cs         *mcp.ClientSession
	srv        *Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, nil)
}

// newFixtureWith is newFixture with the server's options changed by opt.
func newFixtureWith(t *testing.T, opt func(*Options)) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{mem: filepath.Join(root, "memory"), state: filepath.Join(root, "state")}
	for name, content := range map[string]string{"MEMORY.md": memIndex, "build.md": memBuild, "prefs.md": memPrefs} {
		write(t, filepath.Join(f.mem, name), content)
	}
	s := settings.DreamDefaults()
	o := Options{Base: dream.Config{MemoryDir: f.mem, StateDir: f.state, Settings: s, Runner: &runner.Offline{}, Provider: "offline"}, Version: "test"}
	if opt != nil {
		opt(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	f.cs, err = client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.cs.Close() })
	return f
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// call invokes a tool and decodes its structured content into out. It
// fails the test on a protocol error; wantErr says whether a tool error is
// expected.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any, wantErr bool) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v (model-actionable failures must be tool errors)", name, err)
	}
	var txt strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			txt.WriteString(tc.Text)
		}
	}
	if res.IsError != wantErr {
		t.Fatalf("%s(%v): IsError %v, want %v: %s", name, args, res.IsError, wantErr, txt.String())
	}
	if txt.Len() == 0 {
		t.Errorf("%s: no text content", name)
	}
	if !wantErr && out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return txt.String()
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEveryToolInMemory(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	// Every tool is listed with an object input schema derived from its
	// Go type, and an output schema.
	lt, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dream_apply", "dream_diff", "dream_discard", "dream_kill", "dream_log", "dream_run", "dream_show", "dream_status", "dream_tasks", "dream_undo"}
	var names []string
	schemas := map[string]map[string]any{}
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		json.Unmarshal(b, &m)
		schemas[tool.Name] = m
		if m["type"] != "object" || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: input schema %s, output schema %v", tool.Name, b, tool.OutputSchema)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	if props, _ := schemas["dream_run"]["properties"].(map[string]any); props["apply"] == nil || props["memory_dir"] == nil {
		t.Errorf("dream_run schema lacks apply/memory_dir: %v", schemas["dream_run"])
	}
	if req, _ := schemas["dream_diff"]["required"].([]any); len(req) != 1 || req[0] != "id" {
		t.Errorf("dream_diff schema: id should be the one required field: %v", schemas["dream_diff"])
	}

	var st StatusOutput
	call(t, f.cs, "dream_status", nil, &st, false)
	if st.MemoryDir != f.mem || st.Next == "" || len(st.Gates) < 5 {
		t.Errorf("status: %+v", st)
	}

	// dream_run stages by default: the memory does not change.
	before := readFile(t, filepath.Join(f.mem, "prefs.md"))
	var run RunOutput
	txt := call(t, f.cs, "dream_run", map[string]any{}, &run, false)
	if !run.Staged || run.Status != dream.StatusStaged || len(run.Changes) != 1 || run.Changes[0].Path != "prefs.md" {
		t.Fatalf("dream_run: %+v (%s)", run, txt)
	}
	if readFile(t, filepath.Join(f.mem, "prefs.md")) != before {
		t.Fatal("a staged dream changed the memory")
	}

	var tasks TasksOutput
	call(t, f.cs, "dream_tasks", map[string]any{"limit": 5}, &tasks, false)
	if len(tasks.Tasks) == 0 || tasks.Tasks[0].ID != run.TaskID || !tasks.Tasks[0].Review {
		t.Errorf("dream_tasks: %+v", tasks)
	}

	var diff DiffOutput
	call(t, f.cs, "dream_diff", map[string]any{"id": run.TaskID}, &diff, false)
	if diff.Source != dream.DiffStaged || !strings.Contains(diff.Diff, "-- 用户喜欢用 tab 缩进 Go 代码。") {
		t.Errorf("dream_diff: %+v", diff)
	}

	var disc DiscardOutput
	call(t, f.cs, "dream_discard", map[string]any{"id": run.TaskID}, &disc, false)
	if !disc.Discarded || readFile(t, filepath.Join(f.mem, "prefs.md")) != before {
		t.Errorf("dream_discard: %+v", disc)
	}
	call(t, f.cs, "dream_diff", map[string]any{"id": run.TaskID}, nil, true) // gone: a tool error

	// Stage again and apply.
	var run2 RunOutput
	call(t, f.cs, "dream_run", nil, &run2, false)
	var applied ApplyOutput
	call(t, f.cs, "dream_apply", map[string]any{"id": run2.TaskID}, &applied, false)
	after := readFile(t, filepath.Join(f.mem, "prefs.md"))
	if len(applied.Changes) != 1 || strings.Count(after, "用户喜欢用 tab 缩进 Go 代码。") != 1 {
		t.Fatalf("dream_apply: %+v\n%s", applied, after)
	}

	var lg LogOutput
	call(t, f.cs, "dream_log", map[string]any{"limit": 5}, &lg, false)
	if len(lg.Entries) == 0 || lg.Entries[0].ID != run2.TaskID || lg.Entries[0].Diff != "" {
		t.Errorf("dream_log: %+v", lg)
	}
	var show ShowOutput
	call(t, f.cs, "dream_show", map[string]any{"id": run2.TaskID}, &show, false)
	if !strings.Contains(show.Entry.Diff, "用户喜欢用 tab") || len(show.Entry.Files) != 1 {
		t.Errorf("dream_show: %+v", show)
	}
	var landed DiffOutput
	call(t, f.cs, "dream_diff", map[string]any{"id": run2.TaskID}, &landed, false)
	if landed.Source != dream.DiffAudit || len(landed.Changes) != 1 {
		t.Errorf("dream_diff of a landed dream: %+v", landed)
	}

	var undone ShowOutput
	call(t, f.cs, "dream_undo", map[string]any{"id": run2.TaskID}, &undone, false)
	if got := readFile(t, filepath.Join(f.mem, "prefs.md")); got != before {
		t.Errorf("dream_undo did not restore prefs.md:\n%s", got)
	}

	// apply: true lands at once.
	var run3 RunOutput
	call(t, f.cs, "dream_run", map[string]any{"apply": true}, &run3, false)
	if run3.Staged || run3.Status != dream.StatusCompleted || run3.AuditCommit == "" {
		t.Errorf("dream_run apply: %+v", run3)
	}

	// dream_kill: a dream running in another Dreamer on the same state dir.
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	other := filepath.Join(t.TempDir(), "memory")
	write(t, filepath.Join(other, "MEMORY.md"), memIndex)
	blocker, err := dream.New(dream.Config{MemoryDir: other, StateDir: f.state, Settings: settings.DreamDefaults(),
		Runner: dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
			once.Do(func() { close(started) })
			select {
			case <-ctx.Done():
				return dream.Outcome{}, context.Cause(ctx)
			case <-release:
				return dream.Outcome{}, nil
			}
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	done := make(chan dream.Report, 1)
	go func() { r, _ := blocker.Run(ctx, dream.RunOptions{}); done <- r }()
	<-started
	var running TasksOutput
	call(t, f.cs, "dream_tasks", map[string]any{"running_only": true}, &running, false)
	if len(running.Tasks) != 1 || running.Tasks[0].MemoryDir != other {
		t.Fatalf("running tasks: %+v", running)
	}
	var killed KillOutput
	call(t, f.cs, "dream_kill", map[string]any{"id": running.Tasks[0].ID, "wait_seconds": 20}, &killed, false)
	if !killed.RolledBack || killed.Task.Status != "killed" {
		t.Errorf("dream_kill: %+v", killed)
	}
	select {
	case r := <-done:
		if r.Status != dream.StatusKilled {
			t.Errorf("killed dream's report: %s", r.Status)
		}
	case <-time.After(20 * time.Second):
		close(release)
		t.Fatal("the killed dream did not end")
	}
	txt = call(t, f.cs, "dream_kill", map[string]any{"id": running.Tasks[0].ID}, &killed, false)
	if !strings.Contains(txt, "already killed") {
		t.Errorf("second kill: %s", txt)
	}
	// An id-based tool finds the other memory dir from the id alone.
	var otherLog LogOutput
	call(t, f.cs, "dream_log", map[string]any{"memory_dir": other}, &otherLog, false)
	if otherLog.MemoryDir != other {
		t.Errorf("dream_log of the other memory dir: %+v", otherLog)
	}
}

func TestToolErrorsAreToolResults(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"dream_show", map[string]any{"id": "20990101-000000-dead"}},
		{"dream_diff", map[string]any{"id": "nope"}},
		{"dream_apply", map[string]any{"id": "nope"}},
		{"dream_discard", map[string]any{"id": "nope"}},
		{"dream_undo", map[string]any{"id": "nope"}},
		{"dream_kill", map[string]any{"id": "nope"}},
		{"dream_run", map[string]any{"memory_dir": "/etc"}},        // not a memory dir dream knows
		{"dream_status", map[string]any{"memory_dir": "relative"}}, // not absolute
		{"dream_diff", map[string]any{}},                           // id is required
		{"dream_log", map[string]any{"limit": "ten"}},              // wrong type
	} {
		call(t, f.cs, c.tool, c.args, nil, true)
	}
	// A held lock is a tool error too, naming what to do.
	hold, err := os.Create(filepath.Join(f.mem, ".consolidate-lock"))
	if err != nil {
		t.Fatal(err)
	}
	// PID 1 is alive and the mtime fresh: a live holder.
	hold.WriteString("1")
	hold.Close()
	if txt := call(t, f.cs, "dream_run", nil, nil, true); !strings.Contains(txt, "dream_tasks") {
		t.Errorf("lock held: %s", txt)
	}
}

func TestMemoryResourcesReadOnly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	lr, err := f.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range lr.Resources {
		uris = append(uris, r.Name)
		if r.Name == "prefs.md" && r.MIMEType != "text/markdown" {
			t.Errorf("prefs.md MIME %q", r.MIMEType)
		}
	}
	slices.Sort(uris)
	if !slices.Equal(uris, []string{"MEMORY.md", "build.md", "prefs.md"}) {
		t.Errorf("resources %v", uris)
	}
	rr, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: f.srv.fileURI("prefs.md")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != memPrefs {
		t.Errorf("read prefs.md: %+v", rr.Contents)
	}
	// A file created after the list is readable through the template.
	write(t, filepath.Join(f.mem, "later.md"), "# Later\n\n- 新的事实。\n")
	if rr, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: f.srv.fileURI("later.md")}); err != nil || rr.Contents[0].Text != "# Later\n\n- 新的事实。\n" {
		t.Errorf("read later.md: %v %+v", err, rr)
	}
	// Nothing outside the memory dir, nor the lock, nor through a link.
	if err := os.Symlink("/etc/passwd", filepath.Join(f.mem, "escape.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.mem, ".consolidate-lock"), "")
	// A FIFO planted in the memory is refused at once; opening it once
	// waited for a writer forever, and the server could not exit.
	if err := syscall.Mkfifo(filepath.Join(f.mem, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifoCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := f.cs.ReadResource(fifoCtx, &mcp.ReadResourceParams{URI: f.srv.fileURI("pipe.md")}); err == nil || fifoCtx.Err() != nil {
		t.Errorf("read of a FIFO: %v (context %v), want an answer that it is not there", err, fifoCtx.Err())
	}
	for _, uri := range []string{
		"file:///etc/passwd",
		f.srv.fileURI("../../../../etc/passwd"),
		"file://" + filepath.ToSlash(f.mem) + "/../memory/prefs.md",
		f.srv.fileURI(".consolidate-lock"),
		f.srv.fileURI("escape.md"),
		f.srv.fileURI("missing.md"),
		"http://example.com/prefs.md",
	} {
		if _, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("read %s: allowed", uri)
		}
	}
}
