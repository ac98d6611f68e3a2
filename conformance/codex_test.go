package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/host"
)

// TestCodexHookRuns: after `dream init codex` and nothing else, dream's
// hook runs at the end of every turn, under `codex exec` and in the
// interactive UI, and returns long before Codex's 600 s timeout.
func TestCodexHookRuns(t *testing.T) {
	s, a := codexSandbox(t, false)
	check(t, a, "after dream init codex alone, exec and the UI run the hook in time")
	out := s.Dream("init", "codex")
	if strings.Contains(out, "next step") {
		t.Fatalf("dream init codex asks for another step:\n%s", out)
	}
	r := codexExec(s, a, "hello")
	ids := codexRollouts(t, s)
	if len(ids) != 1 {
		t.Fatalf("codex exec wrote %d rollouts", len(ids))
	}
	var execID string
	for id := range ids {
		execID = id
	}
	if !strings.Contains(r.Stdout+r.Stderr, "hook: Stop Completed") {
		t.Errorf("codex exec did not report the Stop hook completed:\n%s", tail(r.Stderr, 3000))
	}
	runs := codexHookRuns(t, r.Stderr)
	if len(runs) != 1 || runs[0] > 5*time.Second {
		t.Errorf("Codex's trace shows hook runs %v, want one well under its timeout", runs)
	}
	if !strings.Contains(s.hookLog(), "event=Stop session="+execID+":") {
		t.Errorf("dream's hook.log has no Stop for exec session %s:\n%s", execID, s.hookLog())
	}
	t.Logf("codex exec: the hook ran in %v as Codex timed it", runs)

	codexTUI(t, s, a, "hello")
	var tuiID string
	for id, src := range codexRollouts(t, s) {
		if id != execID {
			tuiID = id
			if src != "vscode" {
				t.Errorf("the interactive session recorded source %q", src)
			}
		}
	}
	if tuiID == "" {
		t.Fatal("the interactive session wrote no rollout")
	}
	Eventually(t, 30*time.Second, "the hook ran for the interactive session", func() bool {
		return strings.Contains(s.hookLog(), "event=Stop session="+tuiID+":")
	})
	// The UI's app-server keeps no trace of hook times; dream's own log
	// has how long the hook took inside dream.
	t.Logf("hook.log:\n%s", s.hookLog())
}

// TestCodexUntrustedHookNeverRuns: why init records the trust. With
// dream's hook in hooks.json but no trust, `codex exec` drops it without a
// word and doctor says so; `dream init codex` makes it run.
func TestCodexUntrustedHookNeverRuns(t *testing.T) {
	s, a := codexSandbox(t, false)
	check(t, a, "an untrusted hook never runs; doctor says so; init fixes it")
	s.Dream("init", "codex")
	config := s.codexHome("config.toml")
	trusted := s.ReadFile(config)
	i := strings.Index(trusted, "\n[hooks.state.")
	if i < 0 {
		t.Fatalf("init recorded no trust:\n%s", trusted)
	}
	s.WriteFile(config, trusted[:i+1])
	r := codexExec(s, a, "hello")
	if strings.Contains(r.Stdout+r.Stderr, "hook: Stop") || s.hookLog() != "" {
		t.Fatalf("Codex ran an untrusted hook:\n%s\nhook.log: %s", r.Stderr, s.hookLog())
	}
	dr := s.Run(time.Minute, s.Project, dreamBinary(t), "doctor", "--host", "codex")
	if !strings.Contains(dr.Stdout, "Codex has not trusted it") {
		t.Errorf("doctor does not say the hook is untrusted:\n%s", dr.Stdout)
	}
	s.Dream("init", "codex")
	codexExec(s, a, "hello")
	if !strings.Contains(s.hookLog(), "event=Stop") {
		t.Errorf("after init the hook did not run:\n%s", s.hookLog())
	}
}

// TestCodexTrustIsCodexs: the key and hash dream records are the ones
// Codex computes for that hook (its app-server's hooks/list), and Codex
// lists the hook as trusted.
func TestCodexTrustIsCodexs(t *testing.T) {
	s, a := codexSandbox(t, false)
	check(t, a, "dream's trust key and hash are Codex's own (hooks/list)")
	s.Dream("init", "codex")
	m := regexp.MustCompile(`\[hooks\.state\."([^"]+)"\]\ntrusted_hash = "([^"]+)"`).FindStringSubmatch(s.ReadFile(s.codexHome("config.toml")))
	if m == nil {
		t.Fatal("no trust recorded")
	}
	cmd := exec.Command(a.Bin, "app-server")
	cmd.Env, cmd.Dir = s.Environ(), s.Project
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"dream-conformance","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":[` + tomlString(s.Project) + `]}}`,
	} {
		fmt.Fprintln(in, msg)
	}
	type hookEntry struct {
		Key, EventName, Command, CurrentHash, TrustStatus string
	}
	var hooks []hookEntry
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(outp)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var resp struct {
				ID     int `json:"id"`
				Result struct {
					Data []struct{ Hooks []hookEntry } `json:"data"`
				} `json:"result"`
			}
			if json.Unmarshal(sc.Bytes(), &resp) == nil && resp.ID == 2 {
				for _, d := range resp.Result.Data {
					hooks = append(hooks, d.Hooks...)
				}
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("codex app-server did not answer hooks/list")
	}
	if len(hooks) != 1 || hooks[0].Key != m[1] || hooks[0].CurrentHash != m[2] || hooks[0].TrustStatus != "trusted" || hooks[0].EventName != "stop" {
		t.Fatalf("Codex lists %+v; dream recorded key %s hash %s", hooks, m[1], m[2])
	}
}

// TestCodexSessionsCounted: the sessions dream counts are the rollouts
// Codex wrote, counted as its memory pipeline counts them: the
// interactive one ("vscode"), not the exec ones unless
// codex_exec_sessions is set; --session leaves the current one out.
func TestCodexSessionsCounted(t *testing.T) {
	s, a := codexSandbox(t, false)
	check(t, a, "the sessions dream counts are Codex's rollouts, its way")
	codexExec(s, a, "hello")
	codexExec(s, a, "hello again")
	codexTUI(t, s, a, "hello")
	sources := map[string]int{}
	var tuiID string
	for id, src := range codexRollouts(t, s) {
		sources[src]++
		if src == "vscode" {
			tuiID = id
		}
	}
	if sources["exec"] != 2 || sources["vscode"] != 1 || len(sources) != 2 {
		t.Fatalf("Codex wrote rollouts with sources %v", sources)
	}
	// A memory to dream (the feature is off: Codex writes none itself).
	s.WriteFile(s.codexHome("memories", "memory_summary.md"), "## Summary\n\n- a fact\n")
	if n := codexStatus(s).SessionsTouched; n != 1 {
		t.Errorf("dream counts %d sessions, want the interactive one", n)
	}
	s.Setenv("DREAM_CODEX_EXEC_SESSIONS", "true")
	if n := codexStatus(s).SessionsTouched; n != 3 {
		t.Errorf("with codex_exec_sessions dream counts %d sessions, want 3", n)
	}
	if n := codexStatus(s, "--session", tuiID).SessionsTouched; n != 2 {
		t.Errorf("with --session %s dream counts %d, want 2", tuiID, n)
	}
}

// TestCodexLoadsTheMemoryDreamConsolidates: with Codex's memories feature
// on, a marker planted in the memories/ dream derives reaches Codex's
// prompt through memory_summary.md, and MEMORY.md is not in the prompt
// (read on demand), as dream's status says; with the feature off nothing
// of memories/ is loaded and status says that too.
func TestCodexLoadsTheMemoryDreamConsolidates(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "memories on", false: "memories off"}[on], func(t *testing.T) {
			s, a := codexSandbox(t, on)
			check(t, a, "the memory dream consolidates is what Codex loads ("+map[bool]string{true: "memories on", false: "memories off"}[on]+")")
			st := codexStatus(s)
			if st.MemoryDir != s.codexHome("memories") {
				t.Fatalf("dream's memory dir %s", st.MemoryDir)
			}
			s.WriteFile(filepath.Join(st.MemoryDir, "memory_summary.md"), "## User preferences\n\n- MARKER-SUMMARY-4c1d: run make check before a push\n")
			s.WriteFile(filepath.Join(st.MemoryDir, "MEMORY.md"), "---\nrollout_summary_files:\n  - a.md\ndescription: d\nkeywords: k\n---\n\n- MARKER-BLOCK-9e2a\n")
			codexExec(s, a, "hello")
			prompts := strings.Join(codexPrompts(t, s), "\n")
			st = codexStatus(s)
			files := map[string]bool{}
			for _, f := range st.Layout.Files {
				files[f.Path] = f.Loaded && !f.OnDemand
			}
			if on {
				if !strings.Contains(prompts, "MARKER-SUMMARY-4c1d") || !files["memory_summary.md"] {
					t.Errorf("memory_summary.md: in Codex's prompt %v, dream says loaded %v", strings.Contains(prompts, "MARKER-SUMMARY-4c1d"), files["memory_summary.md"])
				}
				if strings.Contains(prompts, "MARKER-BLOCK-9e2a") || files["MEMORY.md"] {
					t.Errorf("MEMORY.md: in Codex's prompt %v, dream says loaded into every session %v", strings.Contains(prompts, "MARKER-BLOCK-9e2a"), files["MEMORY.md"])
				}
				if st.Layout.NotLoaded != "" {
					t.Errorf("status says Codex does not load it: %s", st.Layout.NotLoaded)
				}
				return
			}
			if strings.Contains(prompts, "MARKER-") || st.Layout.NotLoaded == "" {
				t.Errorf("memories off: markers in Codex's prompt %v; status's not-loaded line %q", strings.Contains(prompts, "MARKER-"), st.Layout.NotLoaded)
			}
		})
	}
}

// TestCodexSummaryLimit: memory_summary.md is cut the way dream counts it
// (host.CodexSummaryLoaded): what Codex put in its prompt, byte for byte,
// for a summary past 10,000 bytes with multi-byte characters at the cut;
// doctor says how much is not loaded.
func TestCodexSummaryLimit(t *testing.T) {
	s, a := codexSandbox(t, true)
	check(t, a, "memory_summary.md cut as dream counts it (first and last 5,000 bytes)")
	var b strings.Builder
	b.WriteString("## Summary\n\n")
	for i := 0; b.Len() < 30000; i++ {
		fmt.Fprintf(&b, "- fact %04d: déjà vu in 日本語 %s\n", i, strings.Repeat("é", i%7))
	}
	content := b.String()
	s.WriteFile(s.codexHome("memories", "memory_summary.md"), content)
	codexExec(s, a, "hello")
	prompts := codexPrompts(t, s)
	got, ok := codexSummarySection(t, prompts[0])
	if !ok {
		t.Fatal("no memory summary in Codex's prompt")
	}
	want, cut := host.CodexSummaryLoaded([]byte(content))
	if got != want || cut == 0 {
		t.Errorf("Codex loaded %d bytes of the summary, dream counts %d (%d cut):\n--- Codex, at the cut\n%s\n--- dream\n%s", len(got), len(want), cut, around(got, "truncated"), around(want, "truncated"))
	}
	dr := s.Run(time.Minute, s.Project, dreamBinary(t), "doctor", "--host", "codex")
	if !strings.Contains(dr.Stdout, fmt.Sprintf("the %d bytes between are not in its prompt", cut)) {
		t.Errorf("doctor does not say what Codex leaves out:\n%s", dr.Stdout)
	}
}

func around(s, word string) string {
	i := strings.Index(s, word)
	if i < 0 {
		return tail(s, 200)
	}
	return s[max(0, i-120):min(len(s), i+120)]
}

// TestCodexOwnsItsMemory: with the memories feature on, Codex makes
// memories/ its own consolidation workspace; dream, not told who owns it,
// leaves it alone (the hook starts nothing and says why, no
// .consolidate-lock appears, none of Codex's files change); told
// codex_memory_owner = dream, a dream runs, touches none of Codex's own
// files, and Codex still loads the dreamed memory_summary.md.
func TestCodexOwnsItsMemory(t *testing.T) {
	s, a := codexSandbox(t, true)
	check(t, a, "a memory Codex consolidates is left to it; after a dream Codex still loads it")
	s.Setenv("DREAM_MIN_SESSIONS", "1")
	s.Setenv("DREAM_MIN_HOURS", "0.0001")
	s.Setenv("DREAM_CODEX_EXEC_SESSIONS", "true")
	mem := s.codexHome("memories")
	summary := "## Build\n\n- MARKER-DREAMED-77e1: make check runs the linters\n- MARKER-DREAMED-77e1: make check runs the linters\n"
	s.WriteFile(filepath.Join(mem, "memory_summary.md"), summary)
	s.Dream("init", "codex")
	codexExec(s, a, "hello")
	codexExec(s, a, "hello again")
	if _, err := os.Stat(filepath.Join(mem, ".codex-baseline")); err != nil {
		t.Logf("Codex did not make its consolidation workspace here (%v)", err)
	}
	if !strings.Contains(s.hookLog(), "until you choose who owns it") {
		t.Errorf("the hook does not say why it left Codex's memory alone:\n%s", s.hookLog())
	}
	if _, err := os.Stat(filepath.Join(mem, ".consolidate-lock")); !os.IsNotExist(err) {
		t.Errorf(".consolidate-lock appeared in Codex's workspace (%v)", err)
	}
	if got := s.ReadFile(filepath.Join(mem, "memory_summary.md")); got != summary {
		t.Errorf("memory_summary.md changed though dream was to leave it alone:\n%s", got)
	}

	s.Setenv("DREAM_CODEX_MEMORY_OWNER", "dream")
	own := codexOwnFiles(t, mem)
	var run struct {
		Status       string   `json:"status"`
		FilesTouched []string `json:"files_touched"`
	}
	s.DreamJSON(&run, "run", "--host", "codex", "--provider", "offline")
	if run.Status != "completed" || len(run.FilesTouched) != 1 || run.FilesTouched[0] != "memory_summary.md" {
		t.Fatalf("the dream: %+v", run)
	}
	if after := codexOwnFiles(t, mem); after != own {
		t.Errorf("the dream changed Codex's own files")
	}
	dreamed := s.ReadFile(filepath.Join(mem, "memory_summary.md"))
	if strings.Count(dreamed, "MARKER-DREAMED-77e1") != 1 {
		t.Fatalf("the offline dream did not merge the duplicate: %q", dreamed)
	}
	before := len(codexPrompts(t, s))
	codexExec(s, a, "hello after the dream")
	prompts := codexPrompts(t, s)[before:]
	got, ok := codexSummarySection(t, strings.Join(prompts, "\n"))
	if want, _ := host.CodexSummaryLoaded([]byte(dreamed)); !ok || got != want {
		t.Errorf("after the dream Codex loaded %q, want %q", got, want)
	}
}

// codexOwnFiles is every file of Codex's consolidation workspace
// (.codex-baseline/, extensions/, phase2_workspace_diff.md, .git/) with
// its bytes.
func codexOwnFiles(t *testing.T, mem string) string {
	t.Helper()
	var b strings.Builder
	for _, own := range []string{".codex-baseline", "extensions", "phase2_workspace_diff.md", ".git", "raw_memories.md", "rollout_summaries"} {
		filepath.WalkDir(filepath.Join(mem, own), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				fmt.Fprintf(&b, "%s %d %x\n", p, len(data), data[:min(len(data), 64)])
			}
			return nil
		})
	}
	return b.String()
}

// TestCodexUIKeepsItsEnvironment: what the README says of the interactive
// UI: its hooks run from the background app-server, with the environment
// that server started with. A setting exported for a later session
// (DREAM_ENABLED=false) does not reach dream's hook; restarting the
// app-server, as doctor advises, makes it.
func TestCodexUIKeepsItsEnvironment(t *testing.T) {
	s, a := codexSandbox(t, false)
	check(t, a, "the UI's hooks keep the app-server's environment (documented)")
	s.Dream("init", "codex")
	codexTUI(t, s, a, "hello")
	s.Setenv("DREAM_ENABLED", "false")
	mark := len(s.hookLog())
	codexTUI(t, s, a, "hello again")
	Eventually(t, 30*time.Second, "the hook ran for the second session", func() bool { return len(s.hookLog()) > mark })
	if strings.Contains(s.hookLog()[mark:], "disabled") {
		t.Fatalf("the hook saw a variable exported after the app-server started:\n%s", s.hookLog())
	}
	r := s.Run(time.Minute, s.Project, a.Bin, "app-server", "daemon", "restart")
	if r.Err != nil {
		t.Fatalf("codex app-server daemon restart: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	mark = len(s.hookLog())
	codexTUI(t, s, a, "hello once more")
	Eventually(t, 30*time.Second, "the hook ran after the restart", func() bool { return len(s.hookLog()) > mark })
	if !strings.Contains(s.hookLog()[mark:], "disabled") {
		t.Errorf("after the restart the hook still did not see DREAM_ENABLED=false:\n%s", s.hookLog()[mark:])
	}
}
