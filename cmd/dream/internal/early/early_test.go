package early

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// place is a home, a memory consolidated two hours ago, a repo and a state
// dir: the time gate (24h) is closed.
type place struct {
	home, mem, repo, state string
	env                    map[string]string
}

func newPlace(t testing.TB, now time.Time) *place {
	t.Helper()
	root := t.TempDir()
	p := &place{
		home:  filepath.Join(root, "home"),
		mem:   filepath.Join(root, "memory"),
		repo:  filepath.Join(root, "repo"),
		state: filepath.Join(root, "state"),
	}
	for _, d := range []string{p.home, p.mem, p.repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(p.mem, "MEMORY.md"), "# Memory\n\n- [Build](build.md) — how it builds\n")
	lock := filepath.Join(p.mem, ".consolidate-lock")
	write(t, lock, "")
	last := now.Add(-2 * time.Hour)
	if err := os.Chtimes(lock, last, last); err != nil {
		t.Fatal(err)
	}
	p.env = map[string]string{
		"HOME":            p.home,
		"XDG_CONFIG_HOME": filepath.Join(p.home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(p.home, ".local", "state"),
	}
	return p
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (p *place) lookup(k string) (string, bool) {
	v, ok := p.env[k]
	return v, ok
}

func (p *place) loc() []string {
	return []string{"--memory-dir", p.mem, "--repo", p.repo, "--state-dir", p.state}
}

// TestMaybeAnswersOnlyWhenCertain: the early start answers the closed time
// gate, and hands every case it cannot be sure of to the full command,
// writing nothing.
func TestMaybeAnswersOnlyWhenCertain(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	const text = "no dream: the time gate is closed: 2.0h since the last consolidation, need 24h; opens at "
	tests := []struct {
		name  string
		setup func(t *testing.T, p *place) (args []string, stdin string)
		done  bool
	}{
		{"closed time gate", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe"}, p.loc()...), ""
		}, true},
		{"flags after a value of one dash", func(t *testing.T, p *place) ([]string, string) {
			return append(p.loc(), "maybe"), ""
		}, false},
		{"another command", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"status"}, p.loc()...), ""
		}, false},
		{"a positional argument", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "extra"}, p.loc()...), ""
		}, false},
		{"help", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--help"}, p.loc()...), ""
		}, false},
		{"a flag missing its value", func(t *testing.T, p *place) ([]string, string) {
			return []string{"maybe", "--memory-dir", "--repo", p.repo}, ""
		}, false},
		{"an unknown flag", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--memroy-dir", p.mem}, p.loc()...), ""
		}, false},
		{"a bad flag value", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--min-hours", "abc"}, p.loc()...), ""
		}, false},
		{"a warning to print", func(t *testing.T, p *place) ([]string, string) {
			p.env["DREAM_MIN_HOURS"] = "abc"
			return append([]string{"maybe"}, p.loc()...), ""
		}, false},
		{"min hours reached", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--min-hours", "1"}, p.loc()...), ""
		}, false},
		{"disabled", func(t *testing.T, p *place) ([]string, string) {
			p.env["DREAM_ENABLED"] = "false"
			return append([]string{"maybe"}, p.loc()...), ""
		}, false},
		{"the etcd lock", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--lock", "etcd", "--etcd-endpoints", "http://127.0.0.1:2379"}, p.loc()...), ""
		}, false},
		{"anthropic with its key", func(t *testing.T, p *place) ([]string, string) {
			p.env["ANTHROPIC_API_KEY"] = "sk-test"
			return append([]string{"maybe"}, p.loc()...), ""
		}, true},
		{"anthropic without a key", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--provider", "anthropic"}, p.loc()...), ""
		}, false},
		{"a base URL the SDK would check", func(t *testing.T, p *place) ([]string, string) {
			p.env["OPENAI_API_KEY"] = "sk-test"
			p.env["OPENAI_BASE_URL"] = "http://127.0.0.1:11434/v1"
			return append([]string{"maybe"}, p.loc()...), ""
		}, false},
		{"an unknown provider", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--provider", "gpt"}, p.loc()...), ""
		}, false},
		{"nanobot's flow", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--host", "nanobot"}, p.loc()...), ""
		}, false},
		{"a dead holder to reclaim", func(t *testing.T, p *place) ([]string, string) {
			dead := exec.Command("true")
			if err := dead.Run(); err != nil {
				t.Skip("no true(1) to make a dead pid:", err)
			}
			lock := filepath.Join(p.mem, ".consolidate-lock")
			write(t, lock, strconv.Itoa(dead.Process.Pid))
			last := now.Add(-2 * time.Hour)
			if err := os.Chtimes(lock, last, last); err != nil {
				t.Fatal(err)
			}
			return append([]string{"maybe"}, p.loc()...), ""
		}, false},
		{"a hook payload", func(t *testing.T, p *place) ([]string, string) {
			return []string{"maybe", "--hook", "--memory-dir", p.mem, "--state-dir", p.state}, `{"session_id":"s1","cwd":` + quote(p.repo) + `}`
		}, true},
		{"a hook payload that is not JSON", func(t *testing.T, p *place) ([]string, string) {
			return append([]string{"maybe", "--hook"}, p.loc()...), "not json"
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlace(t, now)
			args, stdin := tc.setup(t, p)
			var out bytes.Buffer
			in := strings.NewReader(stdin)
			rec := &readRecorder{r: in}
			done := Maybe(args, rec, &out, p.lookup, func() time.Time { return now })
			if done != tc.done {
				t.Fatalf("done = %v, want %v (stdout %q)", done, tc.done, out.String())
			}
			if !done {
				if out.Len() != 0 {
					t.Fatalf("handed over but wrote %q", out.String())
				}
				if got, err := io.ReadAll(rec.rest(in)); err != nil || string(got) != stdin {
					t.Fatalf("the full command would read %q (%v) of stdin %q", got, err, stdin)
				}
				return
			}
			if !strings.HasPrefix(out.String(), text) {
				t.Fatalf("stdout %q, want it to start %q", out.String(), text)
			}
		})
	}
}

// TestMaybeHandsOverStdin: what --hook read reaches the full command
// whole, and a stdin that has ended is never read again (a terminal would
// wait for a second end); a read that failed fails the same way again.
func TestMaybeHandsOverStdin(t *testing.T) {
	now := time.Now()
	p := newPlace(t, now)
	payload := `{"session_id":"s1","cwd":` + quote(p.repo) + `}`
	args := append([]string{"maybe", "--hook", "--min-hours", "1"}, p.loc()...)
	tty := &endsOnce{data: payload}
	rec := &readRecorder{r: tty}
	if Maybe(args, rec, &bytes.Buffer{}, p.lookup, func() time.Time { return now }) {
		t.Fatal("answered an open gate")
	}
	if got, err := io.ReadAll(rec.rest(tty)); err != nil || string(got) != payload {
		t.Fatalf("handed over %q, %v: want the payload", got, err)
	}

	broken := errors.New("input/output error")
	rec = &readRecorder{r: io.MultiReader(strings.NewReader("{"), errReader{broken})}
	if Maybe(args, rec, &bytes.Buffer{}, p.lookup, func() time.Time { return now }) {
		t.Fatal("answered after a failed read")
	}
	got, err := io.ReadAll(rec.rest(strings.NewReader("never read")))
	if string(got) != "{" || !errors.Is(err, broken) {
		t.Fatalf("handed over %q, %v: want the byte read, then the same error", got, err)
	}

	// Past the payload limit the rest of stdin is still there.
	long := strings.Repeat(" ", 2<<20)
	in := strings.NewReader(long)
	rec = &readRecorder{r: in}
	if Maybe(args, rec, &bytes.Buffer{}, p.lookup, func() time.Time { return now }) {
		t.Fatal("answered an open gate")
	}
	if got, _ := io.ReadAll(rec.rest(in)); len(got) != len(long) {
		t.Fatalf("handed over %d bytes of %d", len(got), len(long))
	}
}

// endsOnce is a terminal's stdin: data, one end of input, and then it would
// block; a second read after the end fails the test's reader instead.
type endsOnce struct {
	data  string
	ended bool
}

func (e *endsOnce) Read(p []byte) (int, error) {
	if e.ended {
		return 0, errors.New("read again after the end of input")
	}
	if e.data == "" {
		e.ended = true
		return 0, io.EOF
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

// TestMaybeReadsTheClockAfterStdin: a payload that comes late meets the
// gate as it is then, as the full command reads the clock after stdin.
func TestMaybeReadsTheClockAfterStdin(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	late := start.Add(30 * time.Minute)
	p := newPlace(t, start) // consolidated at 08:00; the gate opens at 10:15
	clock := start
	now := func() time.Time { return clock }
	slow := &clockedReader{r: strings.NewReader(`{"session_id":"s1"}`), now: &clock, after: late}
	if Maybe(append([]string{"maybe", "--hook", "--min-hours", "2.25"}, p.loc()...), slow, &bytes.Buffer{}, p.lookup, now) {
		t.Fatal("maybe: the gate opened while stdin was read, but the early start answered closed")
	}
	clock = start
	slow = &clockedReader{r: strings.NewReader(`{}`), now: &clock, after: late}
	if _, done := Hook([]string{"hook", "--memory-dir", p.mem, "--state-dir", p.state, "--min-hours", "2.25"}, slow, p.lookup, now); done {
		t.Fatal("hook: the gate opened while stdin was read, but the early start settled it")
	}
	// The same at 10:00 throughout: closed, and answered early.
	clock = start
	if _, done := Hook([]string{"hook", "--memory-dir", p.mem, "--state-dir", p.state, "--min-hours", "2.25"}, strings.NewReader(`{}`), p.lookup, now); !done {
		t.Fatal("hook: a closed gate was not settled")
	}
}

// clockedReader moves *now to after as it is read: the agent took that
// long to send its payload.
type clockedReader struct {
	r     io.Reader
	now   *time.Time
	after time.Time
}

func (c *clockedReader) Read(p []byte) (int, error) {
	*c.now = c.after
	return c.r.Read(p)
}

func TestMaybeJSON(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	p := newPlace(t, now)
	var out bytes.Buffer
	if done := Maybe(append([]string{"maybe", "--json"}, p.loc()...), nil, &out, p.lookup, func() time.Time { return now }); !done {
		t.Fatal("not answered")
	}
	var got map[string]string
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got["gate"] != "time" || !strings.HasPrefix(got["detail"], "2.0h since the last consolidation") || len(got) != 2 {
		t.Fatalf("JSON %v", got)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestHookSettlesOnlyTheSilentCase: `dream hook` is settled early only when
// the full command would neither log nor start anything (the time gate
// closed); every other case gets the payload it read handed over.
func TestHookSettlesOnlyTheSilentCase(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name  string
		setup func(t *testing.T, p *place) []string
		done  bool
	}{
		{"closed time gate", func(t *testing.T, p *place) []string {
			return []string{"hook", "--memory-dir", p.mem, "--state-dir", p.state}
		}, true},
		{"open time gate: a dream to start", func(t *testing.T, p *place) []string {
			return []string{"hook", "--memory-dir", p.mem, "--state-dir", p.state, "--min-hours", "1"}
		}, false},
		{"bad arguments: logged", func(t *testing.T, p *place) []string {
			return []string{"hook", "--memory-dir", p.mem, "--min-hours", "soon"}
		}, false},
		{"a positional argument: logged", func(t *testing.T, p *place) []string {
			return []string{"hook", "stop", "--memory-dir", p.mem}
		}, false},
		{"help", func(t *testing.T, p *place) []string {
			return []string{"hook", "--help"}
		}, false},
		{"no memory dir yet: logged", func(t *testing.T, p *place) []string {
			return []string{"hook", "--memory-dir", filepath.Join(p.mem, "absent")}
		}, false},
		{"disabled: logged", func(t *testing.T, p *place) []string {
			p.env["DREAM_ENABLED"] = "false"
			return []string{"hook", "--memory-dir", p.mem}
		}, false},
		{"another command", func(t *testing.T, p *place) []string {
			return []string{"maybe", "--memory-dir", p.mem}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlace(t, now)
			args := tc.setup(t, p)
			payload := `{"session_id":"s1","cwd":` + quote(p.repo) + `,"hook_event_name":"Stop"}`
			read, done := Hook(args, strings.NewReader(payload), p.lookup, func() time.Time { return now })
			if done != tc.done {
				t.Fatalf("done = %v, want %v", done, tc.done)
			}
			if args[0] != "hook" {
				if read != nil {
					t.Fatalf("read stdin for %q", args[0])
				}
				return
			}
			if read == nil || read.SessionID != "s1" || read.CWD != p.repo || read.HookEventName != "Stop" {
				t.Fatalf("payload read %+v", read)
			}
		})
	}
}

// FuzzEarlyStart: whatever the command line and stdin, the early start
// never panics, and what it answers is the closed time gate and nothing
// else; a hook it settles says nothing at all.
func FuzzEarlyStart(f *testing.F) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	p := newPlace(f, now)
	f.Add("maybe\x00--memory-dir\x00"+p.mem+"\x00--json", "")
	f.Add("maybe\x00--hook\x00--memory-dir\x00"+p.mem, `{"session_id":"x","cwd":"/"}`)
	f.Add("hook\x00--memory-dir\x00"+p.mem, `{"transcript_path":"/etc/passwd"}`)
	f.Add("maybe\x00--memory-dir\x00--min-hours=-1", "[]")
	f.Fuzz(func(t *testing.T, line, stdin string) {
		args := strings.Split(line, "\x00")
		var out bytes.Buffer
		if done := Maybe(args, strings.NewReader(stdin), &out, p.lookup, func() time.Time { return now }); done {
			got := out.String()
			if !strings.HasPrefix(got, "no dream: the time gate is closed: ") && !strings.Contains(got, `"gate": "time"`) {
				t.Fatalf("Maybe(%q) answered %q", args, got)
			}
		} else if out.Len() != 0 {
			t.Fatalf("Maybe(%q) handed over after writing %q", args, out.String())
		}
		if _, done := Hook(args, strings.NewReader(stdin), p.lookup, func() time.Time { return now }); done && args[0] != "hook" {
			t.Fatalf("Hook settled %q", args)
		}
	})
}
