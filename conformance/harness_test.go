package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm/llmtest"
)

// agentsFile pins the agents: one home for the versions, read here and by
// install.sh.
const agentsFile = "agents.txt"

// dirVariable overrides where install.sh put the agents.
const dirVariable = "DREAM_CONFORMANCE_DIR"

// installHint is the one line a test skipped for a missing agent says.
const installHint = "bash conformance/install.sh"

// Spec is one pinned agent: a line of agents.txt.
type Spec struct {
	Name, Package, Version, Command string
}

// Agent is an installed agent.
type Agent struct {
	Spec
	// Bin is the agent's command in its install folder.
	Bin string
}

// pinned reads agents.txt.
func pinned() ([]Spec, error) {
	f, err := os.Open(agentsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Spec
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 fields (agent, npm package, version, command), got %d", agentsFile, n, len(f))
		}
		out = append(out, Spec{Name: f[0], Package: f[1], Version: f[2], Command: f[3]})
	}
	return out, sc.Err()
}

// agentsDir is where install.sh puts the agents: $DREAM_CONFORMANCE_DIR, else
// dream/agents in the user's cache dir (the same rule as the script).
func agentsDir() (string, error) {
	if d := os.Getenv(dirVariable); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "dream", "agents"), nil
}

// locate finds spec's install, checking that the package there is the
// pinned version: a stale folder is reported, never run.
func locate(spec Spec) (Agent, error) {
	dir, err := agentsDir()
	if err != nil {
		return Agent{}, err
	}
	root := filepath.Join(dir, spec.Name+"-"+spec.Version)
	bin := filepath.Join(root, "node_modules", ".bin", spec.Command)
	if _, err := os.Stat(bin); err != nil {
		return Agent{}, fmt.Errorf("%s %s is not installed in %s", spec.Name, spec.Version, root)
	}
	var manifest struct{ Version string }
	data, err := os.ReadFile(filepath.Join(root, "node_modules", filepath.FromSlash(spec.Package), "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &manifest)
	}
	if err != nil || manifest.Version != spec.Version {
		return Agent{}, fmt.Errorf("%s in %s is not version %s (%q, %v)", spec.Package, root, spec.Version, manifest.Version, err)
	}
	return Agent{Spec: spec, Bin: bin}, nil
}

// requireAgent returns the named agent, or skips the test with one line
// saying how to install it.
func requireAgent(t *testing.T, name string) Agent {
	t.Helper()
	specs, err := pinned()
	if err != nil {
		t.Fatalf("reading %s: %v", agentsFile, err)
	}
	for _, s := range specs {
		if s.Name != name {
			continue
		}
		a, err := locate(s)
		if err != nil {
			t.Skipf("%v: run `%s`", err, installHint)
		}
		return a
	}
	t.Fatalf("%s pins no agent %q", agentsFile, name)
	return Agent{}
}

// The dream binary the agents' hooks run: built once per test binary,
// without the race detector (an agent gives a hook a deadline, and the
// race runtime's start-up and exit costs would be measured as dream's).
var (
	dreamOnce sync.Once
	dreamPath string
	dreamErr  error
	buildDir  string
)

// dreamBinary builds cmd/dream on first use and returns its path.
func dreamBinary(t *testing.T) string {
	t.Helper()
	dreamOnce.Do(func() {
		dreamPath = filepath.Join(buildDir, "dream")
		cmd := exec.Command("go", "build", "-o", dreamPath, "../cmd/dream")
		if out, err := cmd.CombinedOutput(); err != nil {
			dreamErr = fmt.Errorf("go build ../cmd/dream: %v\n%s", err, out)
		}
	})
	if dreamErr != nil {
		t.Fatal(dreamErr)
	}
	return dreamPath
}

// Sandbox is one test's world: a private HOME, a project (a git
// repository) inside it, and a fake model server. Agents and dream run
// with Env only: nothing of the caller's environment (keys, agent
// settings, XDG dirs) reaches them.
type Sandbox struct {
	t       *testing.T
	Home    string
	Project string
	Fake    *llmtest.Server
	env     map[string]string
}

// newSandbox makes the HOME, the project and the fake server. script is the
// fake model's script; none means one text answer, forever.
func newSandbox(t *testing.T, script ...llmtest.Turn) *Sandbox {
	t.Helper()
	// Symbolic links resolved: agents key their storage by the real path.
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Sandbox{t: t, Home: home, Project: filepath.Join(home, "work", "project")}
	if err := os.MkdirAll(s.Project, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(script) == 0 {
		script = []llmtest.Turn{{Text: fakeAnswer, Repeat: -1}}
	}
	s.Fake = llmtest.NewServer(script...)
	t.Cleanup(s.Fake.Close)
	s.env = map[string]string{
		"HOME":            home,
		"USER":            envOr("USER", "conformance"),
		"PATH":            filepath.Dir(dreamBinary(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"LANG":            "C.UTF-8",
		"TERM":            "xterm-256color",
		"TMPDIR":          filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		// The dream a hook starts runs the offline engine: these tests
		// check where dream reads and writes, not a model's prose.
		"DREAM_PROVIDER": "offline",
	}
	if err := os.MkdirAll(s.env["TMPDIR"], 0o700); err != nil {
		t.Fatal(err)
	}
	s.Git(s.Project, "init", "-q")
	return s
}

// fakeAnswer is what the fake model says unless a test scripts otherwise.
const fakeAnswer = "FAKE-MODEL-ANSWER"

func envOr(k, dflt string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return dflt
}

// Setenv sets a variable for every later agent and dream run of s.
func (s *Sandbox) Setenv(k, v string) { s.env[k] = v }

// Environ is s's environment plus extra ("K=V"), sorted for stable logs.
func (s *Sandbox) Environ(extra ...string) []string {
	out := make([]string, 0, len(s.env)+len(extra))
	for k, v := range s.env {
		out = append(out, k+"="+v)
	}
	return append(out, extra...)
}

// Result is one finished process.
type Result struct {
	Stdout, Stderr string
	Err            error
	Took           time.Duration
}

// Run runs bin with args in dir under s's environment, with a deadline, and
// returns what it printed. It does not fail the test: callers decide what
// a non-zero exit means.
func (s *Sandbox) Run(timeout time.Duration, dir, bin string, args ...string) Result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = s.Environ()
	cmd.Stdin = nil
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String(), Err: err, Took: time.Since(start)}
	if ctx.Err() != nil {
		r.Err = fmt.Errorf("%s %s: no exit within %s (%v)", filepath.Base(bin), strings.Join(args, " "), timeout, err)
	}
	s.t.Logf("$ %s %s  (%s, %v)", filepath.Base(bin), strings.Join(args, " "), r.Took.Round(time.Millisecond), r.Err)
	return r
}

// Dream runs the dream binary in the project and fails the test unless it
// exits 0.
func (s *Sandbox) Dream(args ...string) string {
	s.t.Helper()
	r := s.Run(2*time.Minute, s.Project, dreamBinary(s.t), args...)
	if r.Err != nil {
		s.t.Fatalf("dream %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// DreamJSON runs dream with --json and decodes its output into v.
func (s *Sandbox) DreamJSON(v any, args ...string) {
	s.t.Helper()
	out := s.Dream(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		s.t.Fatalf("dream %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Git runs git in dir, failing the test on error.
func (s *Sandbox) Git(dir string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(s.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// WriteFile writes data at path (absolute, or relative to Home), making
// its directories.
func (s *Sandbox) WriteFile(path, data string) string {
	s.t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.Home, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// WriteJSON writes v as indented JSON at path (as WriteFile).
func (s *Sandbox) WriteJSON(path string, v any) string {
	s.t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		s.t.Fatal(err)
	}
	return s.WriteFile(path, string(b)+"\n")
}

// ReadFile returns the file's content, failing the test if it is missing.
func (s *Sandbox) ReadFile(path string) string {
	s.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// Eventually polls cond until it holds or the timeout passes, for what a
// detached process (the dream a hook started) finishes after the agent.
func Eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The suite's table: one row per check, printed by TestMain.
var (
	tableMu sync.Mutex
	table   []row
)

type row struct {
	agent, version, check, result string
	took                          time.Duration
}

// check names the current test as one check of a's in the table; its
// result (pass, FAIL, skip) and time are recorded when the test ends.
func check(t *testing.T, a Agent, name string) {
	t.Helper()
	start := time.Now()
	t.Cleanup(func() {
		r := row{agent: a.Name, version: a.Version, check: name, result: "pass", took: time.Since(start)}
		switch {
		case t.Failed():
			r.result = "FAIL"
		case t.Skipped():
			r.result = "skip"
		}
		tableMu.Lock()
		table = append(table, r)
		tableMu.Unlock()
	})
}

// printTable writes the table and the suite's time.
func printTable(w *os.File, total time.Duration) {
	tableMu.Lock()
	defer tableMu.Unlock()
	if len(table) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-8s %-9s %-76s %-6s %8s\n", "agent", "version", "check", "result", "time")
	for _, r := range table {
		fmt.Fprintf(w, "%-8s %-9s %-76s %-6s %7.1fs\n", r.agent, r.version, r.check, r.result, r.took.Seconds())
	}
	fmt.Fprintf(w, "conformance suite: %d checks in %.1fs (%s/%s)\n", len(table), total.Seconds(), runtime.GOOS, runtime.GOARCH)
}

// TestMain prints, once, a line per agent that is not installed, runs the
// suite, and prints the table.
func TestMain(m *testing.M) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "dream-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	if specs, err := pinned(); err == nil {
		for _, s := range specs {
			if _, err := locate(s); err != nil {
				fmt.Printf("conformance: %v: its checks skip; run `%s`\n", err, installHint)
			}
		}
	}
	code := m.Run()
	printTable(os.Stdout, time.Since(start))
	os.RemoveAll(dir)
	os.Exit(code)
}

// Unsetenv removes a variable from every later agent and dream run of s.
func (s *Sandbox) Unsetenv(k string) { delete(s.env, k) }
