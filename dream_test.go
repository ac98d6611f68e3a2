package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dreamkit/dream/evidence"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/settings"
)

// fakeClock is a settable clock for the gates.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// countingRunner records how often it ran and what it was given; it writes
// one memory file so the dream has something to commit.
type countingRunner struct {
	runs  atomic.Int32
	block chan struct{} // if non-nil, Run waits on it (or ctx)
	err   error
	last  atomic.Value // Job
}

func (r *countingRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	r.runs.Add(1)
	r.last.Store(job)
	if r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
	}
	if r.err != nil {
		return Outcome{}, r.err
	}
	p := filepath.Join(job.MemoryDir, "dreamt.md")
	if err := os.WriteFile(p, []byte(fmt.Sprintf("dream %s\n", job.TaskID)), 0o644); err != nil {
		return Outcome{}, err
	}
	job.Progress(Progress{Kind: ProgressFileTouched, Path: "dreamt.md"})
	// The id it writes over the last dream's is the one its job gave it:
	// that is its evidence for the changed value.
	return Outcome{Turns: 1, FilesTouched: []string{"dreamt.md"}, Shown: []evidence.Shown{{Tool: "job", Source: "the job", Text: job.TaskID}}}, nil
}

type fixture struct {
	mem, sessions, state string
	clock                *fakeClock
	runner               *countingRunner
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{
		mem:      filepath.Join(root, "memory"),
		sessions: filepath.Join(root, "sessions"),
		state:    filepath.Join(root, "state"),
		clock:    &fakeClock{t: time.Now()},
		runner:   &countingRunner{},
	}
	for _, d := range []string{f.mem, f.sessions} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.mem, "MEMORY.md"), []byte("- [A](a.md) — a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) settings() settings.Dream {
	s := settings.DreamDefaults()
	s.Enabled = true
	s.MinHours = 24
	s.MinSessions = 5
	s.Timeout = time.Minute
	return s
}

func (f *fixture) dreamer(t *testing.T, mutate func(*Config)) *Dreamer {
	t.Helper()
	cfg := Config{
		MemoryDir:      f.mem,
		SessionsDir:    f.sessions,
		StateDir:       f.state,
		Settings:       f.settings(),
		Runner:         f.runner,
		CurrentSession: func() string { return "current" },
		Now:            f.clock.Now,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// addSessions creates n transcripts modified at mtime.
func (f *fixture) addSessions(t *testing.T, n int, mtime time.Time, prefix string) {
	t.Helper()
	for i := 0; i < n; i++ {
		p := filepath.Join(f.sessions, fmt.Sprintf("%s%d.jsonl", prefix, i))
		if err := os.WriteFile(p, []byte(`{"type":"user"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// setLastConsolidated writes an empty lock file with mtime t.
func (f *fixture) setLastConsolidated(t *testing.T, at time.Time) {
	t.Helper()
	p := filepath.Join(f.mem, lock.FileName)
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

func (d *Dreamer) waitIdle() { d.wg.Wait() }

func TestMaybeStartGates(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name    string
		setup   func(t *testing.T, f *fixture)
		mutate  func(*Config)
		wantRun bool
		gate    string // the gate Status must name as closed first
	}{
		{
			name:    "every gate open",
			setup:   func(t *testing.T, f *fixture) { f.addSessions(t, 5, now, "s") },
			wantRun: true, gate: GateReady,
		},
		{
			name:   "disabled",
			setup:  func(t *testing.T, f *fixture) { f.addSessions(t, 5, now, "s") },
			mutate: func(c *Config) { c.Settings.Enabled = false },
			gate:   GateEnabled,
		},
		{
			name: "time gate closed",
			setup: func(t *testing.T, f *fixture) {
				f.setLastConsolidated(t, now.Add(-2*time.Hour))
				f.addSessions(t, 9, now, "s")
			},
			gate: GateTime,
		},
		{
			name: "too few sessions",
			setup: func(t *testing.T, f *fixture) {
				f.addSessions(t, 4, now, "s")
			},
			gate: GateSessions,
		},
		{
			name: "sessions older than the last consolidation do not count",
			setup: func(t *testing.T, f *fixture) {
				f.setLastConsolidated(t, now.Add(-48*time.Hour))
				f.addSessions(t, 9, now.Add(-72*time.Hour), "old")
				f.addSessions(t, 4, now, "new")
			},
			gate: GateSessions,
		},
		{
			name: "the current session is excluded",
			setup: func(t *testing.T, f *fixture) {
				f.addSessions(t, 4, now, "s")
				f.addSessions(t, 1, now, "x_current") // x_current0.jsonl is not the current one
				for _, n := range []string{"current.jsonl", "2026_current.jsonl"} {
					if err := os.WriteFile(filepath.Join(f.sessions, n), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			},
			wantRun: true, gate: GateReady,
		},
		{
			name: "only the current session and four others",
			setup: func(t *testing.T, f *fixture) {
				f.addSessions(t, 4, now, "s")
				if err := os.WriteFile(filepath.Join(f.sessions, "current.jsonl"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			gate: GateSessions,
		},
		{
			name: "missing sessions dir counts zero",
			setup: func(t *testing.T, f *fixture) {
				os.RemoveAll(f.sessions)
			},
			gate: GateSessions,
		},
		{
			name: "sessions dir is a file",
			setup: func(t *testing.T, f *fixture) {
				os.RemoveAll(f.sessions)
				os.WriteFile(f.sessions, []byte("x"), 0o644)
			},
			gate: GateSessions,
		},
		{
			name: "lock held by a live process",
			setup: func(t *testing.T, f *fixture) {
				f.addSessions(t, 5, now, "s")
				// A live foreign holder (Claude Code's format: its PID as the body),
				// acquired just now. Our parent is alive for the whole test.
				p := filepath.Join(f.mem, lock.FileName)
				os.WriteFile(p, []byte(strconv.Itoa(os.Getppid())), 0o644)
			},
			// The lock's mtime is now, so the time gate closes first: a live
			// holder has by definition just written it.
			gate: GateTime,
		},
		{
			name: "future lock mtime (clock skew) does not close the gate",
			setup: func(t *testing.T, f *fixture) {
				f.setLastConsolidated(t, now.Add(72*time.Hour))
				f.addSessions(t, 5, now.Add(time.Minute), "s")
			},
			// The time gate is open, and the session gate counts every
			// session rather than those "since the future" (issue 9, class
			// 5: counting since the skewed mtime kept the dream from ever
			// running until the clock caught up).
			wantRun: true, gate: GateReady,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.setup(t, f)
			d := f.dreamer(t, tt.mutate)
			st, err := d.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Next != tt.gate {
				t.Errorf("Status().Next = %q, want %q (gates %+v)", st.Next, tt.gate, st.Gates)
			}
			d.MaybeStart()
			d.waitIdle()
			if got := f.runner.runs.Load() > 0; got != tt.wantRun {
				t.Errorf("dream ran = %v, want %v", got, tt.wantRun)
			}
		})
	}
}

func TestGateOrderCheapestFirst(t *testing.T) {
	// Every gate closed at once: the funnel must name them in order as each
	// earlier one opens.
	f := newFixture(t)
	now := f.clock.Now()
	f.setLastConsolidated(t, now.Add(-time.Hour))
	f.addSessions(t, 1, now, "s")
	enabled := false
	d := f.dreamer(t, func(c *Config) { c.Settings.Enabled = enabled })
	want := []string{GateEnabled}
	st, _ := d.Status(context.Background())
	got := []string{st.Next}

	d2 := f.dreamer(t, nil)
	st, _ = d2.Status(context.Background())
	got = append(got, st.Next)
	want = append(want, GateTime)

	f.clock.Add(25 * time.Hour)
	st, _ = d2.Status(context.Background())
	got = append(got, st.Next)
	want = append(want, GateSessions)

	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gate order %v, want %v", got, want)
	}
}

func TestScanThrottle(t *testing.T) {
	f := newFixture(t)
	now := f.clock.Now()
	f.addSessions(t, 4, now, "s")
	d := f.dreamer(t, nil)
	d.MaybeStart() // scans, finds 4 < 5
	d.waitIdle()
	f.addSessions(t, 3, now, "more")
	f.clock.Add(5 * time.Minute)
	d.MaybeStart() // throttled: must not scan even though 7 sessions exist now
	d.waitIdle()
	if n := f.runner.runs.Load(); n != 0 {
		t.Fatalf("dream ran within the scan throttle (%d runs)", n)
	}
	if res, _ := d.MaybeRun(context.Background()); res.Gate != GateThrottle {
		t.Fatalf("Maybe gate = %q, want throttle", res.Gate)
	}
	f.clock.Add(6 * time.Minute)
	d.MaybeStart()
	d.waitIdle()
	if n := f.runner.runs.Load(); n != 1 {
		t.Fatalf("dream runs after the throttle = %d, want 1", n)
	}
}

func TestRunningFlagBlocksSecondDream(t *testing.T) {
	f := newFixture(t)
	f.addSessions(t, 5, f.clock.Now(), "s")
	f.runner.block = make(chan struct{})
	d := f.dreamer(t, nil)
	d.MaybeStart()
	// Wait for the first dream to be inside the runner.
	deadline := time.Now().Add(5 * time.Second)
	for f.runner.runs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	f.clock.Add(time.Hour) // past the throttle
	for i := 0; i < 50; i++ {
		d.MaybeStart()
	}
	if _, err := d.Run(context.Background(), RunOptions{}); !errors.Is(err, ErrRunning) {
		t.Errorf("Run during a dream: err = %v, want ErrRunning", err)
	}
	close(f.runner.block)
	d.waitIdle()
	if n := f.runner.runs.Load(); n != 1 {
		t.Fatalf("runs = %d, want exactly 1", n)
	}
}

func TestMaybeStartConcurrentCallers(t *testing.T) {
	f := newFixture(t)
	f.addSessions(t, 5, f.clock.Now(), "s")
	d := f.dreamer(t, nil)
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				d.MaybeStart()
			}
		}()
	}
	wg.Wait()
	d.waitIdle()
	if n := f.runner.runs.Load(); n != 1 {
		t.Fatalf("runs = %d, want 1", n)
	}
}

func TestSuccessfulDreamCompletesLock(t *testing.T) {
	f := newFixture(t)
	d := f.dreamer(t, nil)
	rep, err := d.Run(context.Background(), RunOptions{})
	if err != nil {
		t.Fatalf("Run: %v (%+v)", err, rep)
	}
	if rep.Status != StatusCompleted || len(rep.FilesTouched) != 1 || rep.FilesTouched[0] != "dreamt.md" {
		t.Fatalf("report %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(f.mem, "dreamt.md")); err != nil {
		t.Fatalf("the dream's file did not land: %v", err)
	}
	body, err := os.ReadFile(filepath.Join(f.mem, lock.FileName))
	if err != nil || len(body) != 0 {
		t.Fatalf("lock body after Complete = %q, %v; want empty", body, err)
	}
	st, _ := d.Status(context.Background())
	if st.Next != GateTime {
		t.Fatalf("after a dream the time gate must close; next = %q", st.Next)
	}
}

func TestFailedDreamRollsBack(t *testing.T) {
	for _, prior := range []bool{false, true} {
		t.Run(fmt.Sprintf("prior=%v", prior), func(t *testing.T) {
			f := newFixture(t)
			priorAt := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
			if prior {
				f.setLastConsolidated(t, priorAt)
			}
			f.runner.err = errors.New("model exploded")
			d := f.dreamer(t, nil)
			rep, err := d.Run(context.Background(), RunOptions{})
			if err == nil || rep.Status != StatusFailed {
				t.Fatalf("want a failure, got %v %+v", err, rep)
			}
			fi, statErr := os.Stat(filepath.Join(f.mem, lock.FileName))
			if !prior {
				if !os.IsNotExist(statErr) {
					t.Fatalf("with no prior the lock file must be removed: %v", statErr)
				}
				return
			}
			if statErr != nil || !fi.ModTime().Equal(priorAt) {
				t.Fatalf("lock mtime = %v (%v), want rewound to %v", fi.ModTime(), statErr, priorAt)
			}
			if _, err := os.Stat(filepath.Join(f.mem, "dreamt.md")); !os.IsNotExist(err) {
				t.Fatal("a failed dream left a file behind")
			}
		})
	}
}

func TestKillByTimeout(t *testing.T) {
	f := newFixture(t)
	f.runner.block = make(chan struct{})
	d := f.dreamer(t, func(c *Config) { c.Settings.Timeout = 100 * time.Millisecond })
	rep, err := d.Run(context.Background(), RunOptions{})
	if err == nil || rep.Status != StatusFailed {
		t.Fatalf("want a timeout failure, got %v %+v", err, rep)
	}
	if want := "timed out after 100ms"; rep.Error != want {
		t.Errorf("error = %q, want %q", rep.Error, want)
	}
}

func TestRunLockHeld(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(f.mem, lock.FileName)
	if err := os.WriteFile(p, []byte(strconv.Itoa(os.Getppid())), 0o644); err != nil {
		t.Fatal(err)
	}
	d := f.dreamer(t, nil)
	rep, err := d.Run(context.Background(), RunOptions{})
	if !errors.Is(err, ErrLockHeld) {
		t.Fatalf("err = %v, want ErrLockHeld", err)
	}
	var held *LockHeldError
	if !errors.As(err, &held) || held.PID != os.Getppid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getppid())) {
		t.Fatalf("err = %v (%+v), want a LockHeldError naming pid %d", err, held, os.Getppid())
	}
	if f.runner.runs.Load() != 0 {
		t.Fatal("the runner ran although the lock is held")
	}
	if rep.TaskID != "" {
		t.Errorf("a refused run registered task %q", rep.TaskID)
	}
	body, _ := os.ReadFile(p)
	if string(body) != strconv.Itoa(os.Getppid()) {
		t.Fatalf("the live holder's body was changed to %q", body)
	}
	st, err := d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !st.Lock.Held || st.Lock.PID != os.Getppid() {
		t.Fatalf("status lock = %+v, want held by %d", st.Lock, os.Getppid())
	}
}

func TestNoRunner(t *testing.T) {
	f := newFixture(t)
	d := f.dreamer(t, func(c *Config) { c.Runner = nil })
	if _, err := d.Run(context.Background(), RunOptions{}); !errors.Is(err, errNoRunner) {
		t.Fatalf("err = %v, want errNoRunner", err)
	}
	if _, err := os.Stat(filepath.Join(f.mem, lock.FileName)); !os.IsNotExist(err) {
		t.Fatal("a run without a runner must not touch the lock")
	}
}

func TestMaybeStartNoAllocsWhenTimeGateClosed(t *testing.T) {
	f := newFixture(t)
	f.setLastConsolidated(t, time.Now().Add(-time.Hour))
	d := f.dreamer(t, nil)
	if n := testing.AllocsPerRun(1000, d.MaybeStart); n != 0 {
		t.Fatalf("MaybeStart with the time gate closed allocates %v times per call", n)
	}
}

// BenchmarkMaybeStart measures the idle hook's per-turn cost against one
// os.Stat of the lock file, in the same run (bench/maybestart.sh prints
// the ratio).
func BenchmarkMaybeStart(b *testing.B) {
	root := b.TempDir()
	mem := filepath.Join(root, "memory")
	os.MkdirAll(mem, 0o755)
	lockPath := filepath.Join(mem, lock.FileName)
	os.WriteFile(lockPath, nil, 0o644)
	recent := time.Now().Add(-time.Hour)
	os.Chtimes(lockPath, recent, recent)
	mk := func(enabled bool) *Dreamer {
		s := settings.DreamDefaults()
		s.Enabled = enabled
		d, err := New(Config{MemoryDir: mem, StateDir: filepath.Join(root, "state"), Settings: s, Runner: &countingRunner{}})
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	b.Run("disabled", func(b *testing.B) {
		d := mk(false)
		b.ReportAllocs()
		for b.Loop() {
			d.MaybeStart()
		}
	})
	b.Run("time-gate-closed", func(b *testing.B) {
		d := mk(true)
		b.ReportAllocs()
		for b.Loop() {
			d.MaybeStart()
		}
	})
	b.Run("os.Stat-lock-file", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := os.Stat(lockPath); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestHelperHangingDream is not a test: run as a child process with
// DREAM_TEST_HANG set, it starts a dream whose runner never returns, so that
// the parent can SIGKILL a real process in the middle of a dream.
func TestHelperHangingDream(t *testing.T) {
	mem, state := os.Getenv("DREAM_TEST_HANG_MEM"), os.Getenv("DREAM_TEST_HANG_STATE")
	if os.Getenv("DREAM_TEST_HANG") != "1" {
		t.Skip("helper process only")
	}
	s := settings.DreamDefaults()
	d, err := New(Config{MemoryDir: mem, StateDir: state, Settings: s, Runner: RunnerFunc(func(ctx context.Context, job Job) (Outcome, error) {
		fmt.Println("dreaming")
		select {}
	})})
	if err != nil {
		t.Fatal(err)
	}
	d.Run(context.Background(), RunOptions{})
}

// TestNewRecoversADeadDream: a host SIGKILLed mid-dream leaves the lock
// naming a dead PID with a fresh mtime. A new Dreamer must not cache that
// mtime: it recovers, and the time gate is open again at once.
func TestNewRecoversADeadDream(t *testing.T) {
	f := newFixture(t)
	f.addSessions(t, 5, f.clock.Now(), "s")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperHangingDream$")
	cmd.Env = append(os.Environ(), "DREAM_TEST_HANG=1", "DREAM_TEST_HANG_MEM="+f.mem, "DREAM_TEST_HANG_STATE="+f.state)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, _ := out.Read(buf); !strings.Contains(string(buf[:n]), "dreaming") {
		cmd.Process.Kill()
		t.Fatalf("the helper did not start dreaming: %q", buf[:n])
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	body, _ := os.ReadFile(filepath.Join(f.mem, lock.FileName))
	if string(body) != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("the killed dream's lock body is %q, want its pid", body)
	}
	d := f.dreamer(t, nil)
	d.MaybeStart()
	d.waitIdle()
	if n := f.runner.runs.Load(); n != 1 {
		t.Fatalf("runs = %d: the dead dream's mtime closed the time gate", n)
	}
}

// TestDefaultStateDir: the settings fill the state dir as the command
// line does ($XDG_STATE_HOME/dream, else ~/.local/state/dream), and New
// refuses an environment that names none instead of writing ./locks.
func TestDefaultStateDir(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "xdg"))
	if got, want := settings.Defaults(os.LookupEnv, os.Getenv("HOME")).StateDir, filepath.Join(root, "xdg", "dream"); got != want {
		t.Errorf("with XDG_STATE_HOME: state dir %q, want %q", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", filepath.Join(root, "home"))
	if got, want := settings.Defaults(os.LookupEnv, os.Getenv("HOME")).StateDir, filepath.Join(root, "home", ".local", "state", "dream"); got != want {
		t.Errorf("with HOME: state dir %q, want %q", got, want)
	}

	mem := filepath.Join(root, "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{MemoryDir: mem, Settings: settings.DreamDefaults(), Runner: &countingRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "home", ".local", "state", "dream"); d.Config().StateDir != want {
		t.Errorf("New with the defaults: state dir %q, want %q", d.Config().StateDir, want)
	}
	d.Close()

	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	wd := t.TempDir()
	t.Chdir(wd)
	if _, err := New(Config{MemoryDir: mem, Settings: settings.DreamDefaults(), Runner: &countingRunner{}}); !errors.Is(err, errNoStateDir) {
		t.Fatalf("New with no state dir anywhere: %v, want errNoStateDir", err)
	}
	if ents, _ := os.ReadDir(wd); len(ents) != 0 {
		t.Errorf("New wrote into the working directory: %v", ents)
	}
}

// TestReviewSettingStagesAutomaticDreams: review = true (the user's, or a
// project file tightening it) stages every dream, also those the funnel
// starts (dream maybe, the hook's child, the daemon, MaybeStart); before,
// only `dream run` and MCP read it, and automatic dreams landed.
func TestReviewSettingStagesAutomaticDreams(t *testing.T) {
	f := newFixture(t)
	f.addSessions(t, 6, f.clock.Now(), "s")
	d := f.dreamer(t, func(c *Config) { c.Settings.Review = true })
	res, err := d.MaybeRun(context.Background())
	if err != nil || res.Report == nil {
		t.Fatalf("MaybeRun: %+v %v", res, err)
	}
	if res.Report.Status != StatusStaged {
		t.Fatalf("with review = true the funnel's dream is %s, want %s", res.Report.Status, StatusStaged)
	}
	if _, err := os.Stat(filepath.Join(f.mem, "dreamt.md")); err == nil {
		t.Fatal("the dream landed in the memory dir although review = true")
	}
}

// TestAfterLandUnderTheRunningFlag: the follow-up of a landed dream and of
// an applied review runs before the Dreamer's running flag drops, so no
// other dream of the Dreamer overlaps it (two nanobot commits would race
// on its git store's index.lock).
func TestAfterLandUnderTheRunningFlag(t *testing.T) {
	f := newFixture(t)
	var d *Dreamer
	var during []error
	d = f.dreamer(t, func(c *Config) {
		c.AfterLand = func(ctx context.Context, _ string) error {
			_, err := d.Run(ctx, RunOptions{})
			during = append(during, err)
			return nil
		}
	})
	ctx := context.Background()
	if rep, err := d.Run(ctx, RunOptions{}); err != nil || rep.Status != StatusCompleted {
		t.Fatalf("run: %+v %v", rep, err)
	}
	staged, err := d.Run(ctx, RunOptions{Review: true})
	if err != nil || staged.Status != StatusStaged {
		t.Fatalf("review run: %+v %v", staged, err)
	}
	if _, _, err := d.Apply(ctx, staged.TaskID); err != nil {
		t.Fatal(err)
	}
	if len(during) != 2 || !errors.Is(during[0], ErrRunning) || !errors.Is(during[1], ErrRunning) {
		t.Fatalf("a dream started during the follow-ups (run, apply): %v", during)
	}
}
