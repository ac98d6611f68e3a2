package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm/llmtest"
)

// What Gemini CLI needs to run offline, found by trying: the fake server
// as GOOGLE_GEMINI_BASE_URL, any GEMINI_API_KEY with selectedType
// gemini-api-key in settings.json, and the project in trustedFolders.json.
// A model named with -m (the one its router picks) skips the router,
// whose classifier asks the model for JSON on every prompt (answered
// anyway, see geminiTurn);
// GEMINI_CLI_NO_RELAUNCH spares the start-up's second Node process; update
// checks and usage statistics are off, as they would reach the network.
func geminiSandbox(t *testing.T) (*Sandbox, Agent) {
	t.Helper()
	a := requireAgent(t, "gemini")
	s := newSandbox(t, llmtest.Turn{Repeat: -1, Dynamic: geminiTurn})
	s.Setenv("GOOGLE_GEMINI_BASE_URL", s.Fake.URL)
	s.Setenv("GEMINI_API_KEY", "conformance")
	s.Setenv("GEMINI_CLI_NO_RELAUNCH", "true")
	// The gemini the user runs is on PATH, where dream reads its version.
	s.Setenv("PATH", filepath.Dir(a.Bin)+string(os.PathListSeparator)+s.env["PATH"])
	s.WriteJSON(s.geminiHome("settings.json"), map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	})
	s.WriteJSON(s.geminiHome("trustedFolders.json"), map[string]string{s.Project: "TRUST_FOLDER"})
	return s, a
}

func (s *Sandbox) geminiHome(rel ...string) string {
	return filepath.Join(append([]string{s.Home, ".gemini"}, rel...)...)
}

// geminiTurn answers Gemini CLI's requests: its structured side requests
// (a JSON schema in generationConfig) with an object of that schema, the
// rest with the fake answer.
func geminiTurn(r llmtest.Recorded) llmtest.Turn {
	var req struct {
		GenerationConfig struct {
			Schema map[string]any `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	if json.Unmarshal(r.Body, &req) == nil && req.GenerationConfig.Schema != nil {
		b, _ := json.Marshal(fillSchema(req.GenerationConfig.Schema))
		return llmtest.Turn{Text: string(b)}
	}
	return llmtest.Turn{Text: fakeAnswer}
}

// fillSchema makes a value of a (Gemini-style, upper-case types) schema.
func fillSchema(schema map[string]any) any {
	switch t, _ := schema["type"].(string); strings.ToLower(t) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			if sub, ok := v.(map[string]any); ok {
				out[k] = fillSchema(sub)
			}
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		return 1
	case "boolean":
		return false
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	return "simple"
}

// geminiModel is the model Gemini CLI's router picks for these prompts by
// default; naming it skips the router. Its prompt (Gemini 3's) is the one
// that names the global GEMINI.md as the agent's global memory.
const geminiModel = "gemini-3.1-pro-preview"

// geminiPrint runs one `gemini -p` session in the project with --debug
// (Gemini then logs its hook runs) and fails the test unless it answers.
func geminiPrint(s *Sandbox, a Agent, prompt string) Result {
	s.t.Helper()
	r := s.Run(3*time.Minute, s.Project, a.Bin, "--debug", "-m", geminiModel, "-p", prompt)
	if r.Err != nil || !strings.Contains(r.Stdout, fakeAnswer) {
		s.t.Fatalf("gemini -p: %v\nstdout:\n%s\nstderr:\n%s", r.Err, tail(r.Stdout, 2000), tail(r.Stderr, 4000))
	}
	return r
}

// geminiPrompts are the system instructions and contents of the main
// requests Gemini sent (streamGenerateContent), one string each.
func geminiPrompts(t *testing.T, s *Sandbox) []string {
	t.Helper()
	var out []string
	for _, r := range s.Fake.Requests() {
		if r.Protocol != llmtest.ProtocolGemini || !r.Stream {
			continue
		}
		type parts struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		}
		var req struct {
			SystemInstruction parts   `json:"systemInstruction"`
			Contents          []parts `json:"contents"`
		}
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Fatalf("a request Gemini sent does not decode: %v", err)
		}
		var b strings.Builder
		for _, p := range append([]parts{req.SystemInstruction}, req.Contents...) {
			for _, x := range p.Parts {
				b.WriteString(x.Text + "\n")
			}
		}
		out = append(out, b.String())
	}
	return out
}

func lastGeminiPrompt(t *testing.T, s *Sandbox) string {
	t.Helper()
	p := geminiPrompts(t, s)
	if len(p) == 0 {
		t.Fatal("Gemini sent no main request")
	}
	return p[len(p)-1]
}

// geminiStatusView is the part of `dream status --host gemini --json`
// these tests read.
type geminiStatusView struct {
	MemoryDir       string `json:"memory_dir"`
	SessionsDir     string `json:"sessions_dir"`
	SessionsTouched int    `json:"sessions_touched_since"`
	Layout          struct {
		Sources []struct{ What, Path, From string } `json:"sources"`
		Files   []struct {
			Path     string `json:"path"`
			Role     string `json:"role"`
			Loaded   bool   `json:"loaded"`
			OnDemand bool   `json:"on_demand"`
			Writable bool   `json:"writable"`
			Limit    string `json:"limit"`
			Section  string `json:"section"`
		} `json:"files"`
	} `json:"layout"`
}

func geminiStatus(s *Sandbox, args ...string) geminiStatusView {
	s.t.Helper()
	var st geminiStatusView
	s.DreamJSON(&st, append([]string{"status", "--host", "gemini"}, args...)...)
	return st
}

// inEveryPrompt is, per file dream lists, whether dream says Gemini puts
// it in every prompt.
func (st geminiStatusView) inEveryPrompt() map[string]bool {
	out := map[string]bool{}
	for _, f := range st.Layout.Files {
		out[f.Path] = f.Loaded && !f.OnDemand
	}
	return out
}

// firstGeminiSession runs one session, which registers the project and
// makes its folders, and creates the memory dir the way the agent would
// (Gemini makes it when it first saves a memory).
func firstGeminiSession(t *testing.T, s *Sandbox, a Agent) geminiStatusView {
	t.Helper()
	geminiPrint(s, a, "hello")
	var st geminiStatusView
	s.DreamJSON(&st, "status", "--host", "gemini") // the memory dir may not exist yet
	if err := os.MkdirAll(st.MemoryDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return geminiStatus(s)
}

// globalMemoryRE is how 0.61.0's prompt names ~/.gemini/GEMINI.md: the
// agent's own global memory tier, not a section of it.
var globalMemoryRE = regexp.MustCompile("\\*\\*Global Personal Memory\\*\\* \\(`[^`]*\\.gemini/GEMINI\\.md`\\)")

var geminiHookRunRE = regexp.MustCompile(`Hook execution for SessionEnd: (\d+) hooks executed successfully, total duration: (\d+)ms`)

// TestGeminiHookRuns: with `dream init gemini`, Gemini runs dream's
// SessionEnd hook at the end of every session, reports it successful, in
// far less than its 60 s hook timeout, and the hook gets the session's id.
func TestGeminiHookRuns(t *testing.T) {
	s, a := geminiSandbox(t)
	check(t, a, "dream's SessionEnd hook runs each session and returns in time")
	s.Dream("init", "gemini")
	var took []string
	for i := 0; i < 2; i++ {
		r := geminiPrint(s, a, "hello")
		m := geminiHookRunRE.FindStringSubmatch(r.Stdout + r.Stderr)
		if m == nil || m[1] != "1" {
			t.Fatalf("session %d: Gemini did not report dream's hook successful:\n%s", i+1, tail(r.Stderr, 3000))
		}
		if ms, _ := strconv.Atoi(m[2]); ms > 10000 {
			t.Errorf("session %d: the hook took %s ms as Gemini timed it", i+1, m[2])
		}
		took = append(took, m[2]+" ms")
	}
	st := geminiStatus(s)
	entries, _ := os.ReadDir(st.SessionsDir)
	var ids []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "session-") {
			ids = append(ids, strings.TrimSuffix(e.Name()[len(e.Name())-14:], ".jsonl"))
		}
	}
	log := s.hookLog()
	if len(ids) != 2 || strings.Count(log, "event=SessionEnd session=") != 2 {
		t.Fatalf("chats %v; hook.log:\n%s", ids, log)
	}
	for _, id := range ids {
		if !strings.Contains(log, "event=SessionEnd session="+id) {
			t.Errorf("hook.log has no SessionEnd for the chat %s:\n%s", id, log)
		}
	}
	t.Logf("the hook ran in %v as Gemini timed it (process start included)", took)
}

// TestGeminiSessionsCounted: the sessions dream counts are the chats
// Gemini wrote (one per session), and --session leaves the current one
// out.
func TestGeminiSessionsCounted(t *testing.T) {
	s, a := geminiSandbox(t)
	check(t, a, "the sessions dream counts are the chats Gemini wrote")
	st := firstGeminiSession(t, s, a)
	geminiPrint(s, a, "hello again")
	geminiPrint(s, a, "and again")
	entries, err := os.ReadDir(st.SessionsDir)
	if err != nil {
		t.Fatal(err)
	}
	var chats []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), "session-") {
			chats = append(chats, e.Name())
		}
	}
	if len(chats) != 3 {
		t.Fatalf("Gemini wrote %v", chats)
	}
	if n := geminiStatus(s).SessionsTouched; n != 3 {
		t.Errorf("dream counts %d sessions, Gemini wrote 3", n)
	}
	// Gemini hands its hooks the full session id; the chat file carries its
	// first 8 characters.
	first, _ := os.ReadFile(filepath.Join(st.SessionsDir, chats[0]))
	var head struct{ SessionID string }
	json.Unmarshal([]byte(strings.SplitN(string(first), "\n", 2)[0]), &head)
	if n := geminiStatus(s, "--session", head.SessionID).SessionsTouched; head.SessionID == "" || n != 2 {
		t.Errorf("with --session %q dream counts %d, want 2", head.SessionID, n)
	}
}

// TestGeminiLoadsTheMemoryDreamConsolidates: markers planted where dream's
// layout says reach Gemini's prompt exactly as dream's status says: the
// MEMORY.md index and the global GEMINI.md in every prompt, a note beside
// the index not (read when needed), memory/GEMINI.md not while MEMORY.md
// exists and in its place when it does not; the layout names the version
// it followed, and the prompt shows this version's memory (no save_memory
// tool, the global file as the agent's global memory).
func TestGeminiLoadsTheMemoryDreamConsolidates(t *testing.T) {
	s, a := geminiSandbox(t)
	check(t, a, "the memory dream consolidates is the memory Gemini loads")
	st := firstGeminiSession(t, s, a)
	global := s.geminiHome("GEMINI.md")
	s.WriteFile(filepath.Join(st.MemoryDir, "MEMORY.md"), "- MARKER-INDEX-5a1e see [deploys](deploys.md)\n")
	s.WriteFile(filepath.Join(st.MemoryDir, "deploys.md"), "MARKER-NOTE-7b2f\n")
	s.WriteFile(filepath.Join(st.MemoryDir, "GEMINI.md"), "MARKER-LEGACY-3c9d\n")
	s.WriteFile(global, "MARKER-GLOBAL-1d4e\n")
	geminiPrint(s, a, "hello")
	prompt := lastGeminiPrompt(t, s)
	st = geminiStatus(s)
	loads := st.inEveryPrompt()
	for _, c := range []struct {
		marker, file string
	}{{"MARKER-INDEX-5a1e", "MEMORY.md"}, {"MARKER-NOTE-7b2f", "*.md"}, {"MARKER-LEGACY-3c9d", "*.md"}, {"MARKER-GLOBAL-1d4e", global}} {
		if got := strings.Contains(prompt, c.marker); got != loads[c.file] {
			t.Errorf("%s: in Gemini's prompt %v; dream says %s is loaded into every session %v", c.marker, got, c.file, loads[c.file])
		}
	}
	if !strings.Contains(prompt, "There is no `save_memory` tool") || !globalMemoryRE.MatchString(prompt) {
		t.Errorf("Gemini's prompt does not describe the memory dream's layout follows:\n%s", around(prompt, "Memory"))
	}
	var version string
	for _, src := range st.Layout.Sources {
		if src.What == "gemini version" {
			version = src.From
		}
	}
	if version != a.Version {
		t.Errorf("dream followed the layout of Gemini %q, the agent is %s", version, a.Version)
	}

	// Without MEMORY.md, memory/GEMINI.md is what Gemini loads.
	os.Remove(filepath.Join(st.MemoryDir, "MEMORY.md"))
	geminiPrint(s, a, "hello")
	prompt = lastGeminiPrompt(t, s)
	loads = geminiStatus(s).inEveryPrompt()
	if !strings.Contains(prompt, "MARKER-LEGACY-3c9d") || !loads["GEMINI.md"] {
		t.Errorf("without MEMORY.md: memory/GEMINI.md in Gemini's prompt %v, dream says loaded %v", strings.Contains(prompt, "MARKER-LEGACY-3c9d"), loads["GEMINI.md"])
	}
}

// TestGeminiLoadsTheIndexWhole: Gemini puts the whole MEMORY.md in its
// prompt however long (no line or byte limit in this version), and dream
// names no limit for it, so a dream never cuts what Gemini would load.
func TestGeminiLoadsTheIndexWhole(t *testing.T) {
	s, a := geminiSandbox(t)
	check(t, a, "MEMORY.md loaded whole (no limit), as dream counts it")
	st := firstGeminiSession(t, s, a)
	var b strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "- fact %03d: déjà vu, %s\n\n", i, strings.Repeat("x", 60))
	}
	b.WriteString("- MARKER-LAST-LINE-2e8a\n")
	s.WriteFile(filepath.Join(st.MemoryDir, "MEMORY.md"), b.String())
	geminiPrint(s, a, "hello")
	prompt := lastGeminiPrompt(t, s)
	if !strings.Contains(prompt, strings.TrimSpace(b.String())) {
		t.Errorf("Gemini did not load the %d-byte, %d-line index whole", b.Len(), strings.Count(b.String(), "\n"))
	}
	for _, f := range geminiStatus(s).Layout.Files {
		if f.Path == "MEMORY.md" && f.Limit != "" {
			t.Errorf("dream says Gemini loads %s of MEMORY.md", f.Limit)
		}
	}
}

// TestGeminiStillLoadsMemoryAfterDream: after a dream, Gemini loads the
// dreamed MEMORY.md and the dreamed note stays where the index points.
func TestGeminiStillLoadsMemoryAfterDream(t *testing.T) {
	s, a := geminiSandbox(t)
	check(t, a, "after a dream Gemini still loads the memory")
	st := firstGeminiSession(t, s, a)
	index := filepath.Join(st.MemoryDir, "MEMORY.md")
	s.WriteFile(index, "# Memory\n\n- MARKER-AFTER-8f3b: deploys go through make ship\n- [Style](style.md): how we write Go\n- MARKER-AFTER-8f3b: deploys go through make ship\n")
	s.WriteFile(filepath.Join(st.MemoryDir, "style.md"), "# Style\n\n- wrap errors\n- wrap errors\n")
	var run struct {
		Status       string   `json:"status"`
		FilesTouched []string `json:"files_touched"`
	}
	s.DreamJSON(&run, "run", "--host", "gemini", "--provider", "offline")
	if run.Status != "completed" || len(run.FilesTouched) == 0 {
		t.Fatalf("the offline dream: %+v", run)
	}
	after := s.ReadFile(index)
	if strings.Count(after, "MARKER-AFTER-8f3b") != 1 {
		t.Fatalf("the dream did not merge the duplicate: %q", after)
	}
	geminiPrint(s, a, "hello")
	if prompt := lastGeminiPrompt(t, s); !strings.Contains(prompt, strings.TrimSpace(after)) {
		t.Errorf("Gemini did not load the dreamed index %q", after)
	}
}
