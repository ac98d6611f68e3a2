// Command daemonidle measures what `dream daemon` costs while nothing
// happens: it lays out N projects in Claude Code's layout under a fake
// home (transcripts carrying their cwd, a memory dir each), starts the
// daemon on them with detection, and in the same run a baseline daemon
// watching no project; after both report their scan it samples each
// process's CPU time (utime+stime from /proc/PID/stat) over the window and
// its resident memory (VmRSS, VmHWM from /proc/PID/status). Linux only.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/host"
)

func main() {
	bin := flag.String("dream", "", "the dream binary")
	n := flag.Int("projects", 50, "projects to watch")
	window := flag.Duration("window", time.Minute, "how long to sample idle CPU")
	flag.Parse()
	if *bin == "" {
		fatal(fmt.Errorf("-dream is required"))
	}
	root, err := os.MkdirTemp("", "daemonidle-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(root)

	watched := start(*bin, layout(root, "watched", *n), *n)
	baseline := start(*bin, layout(root, "baseline", 0), 0)
	defer watched.stop()
	defer baseline.stop()
	wait(watched, *n)
	wait(baseline, 0)
	// Let the first scan's funnel walks (time gate closed: cheap) finish.
	time.Sleep(3 * time.Second)

	w0, b0 := cpu(watched.pid()), cpu(baseline.pid())
	t0 := time.Now()
	time.Sleep(*window)
	el := time.Since(t0).Seconds()
	w1, b1 := cpu(watched.pid()), cpu(baseline.pid())
	tick := 100.0 // USER_HZ on every Linux the Go runtime supports
	wc, bc := float64(w1-w0)/tick, float64(b1-b0)/tick
	wr, wh := rss(watched.pid())
	br, bh := rss(baseline.pid())
	fmt.Printf("window %.1fs (CPU resolution one clock tick: 10 ms = %.4f%% of a core)\n", el, 100*0.01/el)
	fmt.Printf("daemon, %d projects (%d directories watched): CPU %.3fs = %.4f%% of a core; RSS %d KiB (peak %d KiB)\n", *n, watched.watches, wc, 100*wc/el, wr, wh)
	fmt.Printf("daemon, no project (baseline):     CPU %.3fs = %.4f%% of a core; RSS %d KiB (peak %d KiB)\n", bc, 100*bc/el, br, bh)
	ratio := "n/a (baseline used no measurable CPU)"
	if bc > 0 {
		ratio = fmt.Sprintf("%.2fx", wc/bc)
	}
	fmt.Printf("CPU ratio %d projects / baseline: %s; goal < 0.1%% of a core: %v\n", *n, ratio, 100*wc/el < 0.1)
}

// daemon is one running daemon process.
type daemon struct {
	cmd     *exec.Cmd
	log     *os.File
	watches int
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }
func (d *daemon) stop() {
	d.cmd.Process.Signal(os.Interrupt)
	d.cmd.Wait()
}

type world struct {
	home, state string
}

// layout makes n Claude Code projects under root/name/home.
func layout(root, name string, n int) world {
	w := world{home: filepath.Join(root, name, "home"), state: filepath.Join(root, name, "state")}
	env := func(string) (string, bool) { return "", false }
	must(os.MkdirAll(filepath.Join(w.home, ".claude", "projects"), 0o755))
	for i := 0; i < n; i++ {
		repo := filepath.Join(root, name, "src", fmt.Sprintf("app-%02d", i))
		must(os.MkdirAll(repo, 0o755))
		p, err := host.ResolveProject("claude", repo, w.home, env)
		must(err)
		must(os.MkdirAll(p.MemoryDir, 0o755))
		must(os.WriteFile(filepath.Join(p.MemoryDir, "MEMORY.md"), []byte("# Memory\n\n- [Build](build.md) — how it builds\n"), 0o644))
		must(os.WriteFile(filepath.Join(p.MemoryDir, "build.md"), []byte("# Build\n\n1. `make test`\n2. `make release`\n"), 0o644))
		for s := 0; s < 20; s++ {
			line := fmt.Sprintf(`{"parentUuid":null,"cwd":%q,"sessionId":"s%d","type":"user","message":{"role":"user","content":"hello"}}`+"\n", repo, s)
			must(os.WriteFile(filepath.Join(p.SessionsDir, fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", s)), []byte(line), 0o644))
		}
	}
	return w
}

func start(bin string, w world, n int) *daemon {
	logf, err := os.CreateTemp("", "daemonidle-log-")
	must(err)
	cmd := exec.Command(bin, "daemon", "--state-dir", w.state, "--listen", "127.0.0.1:0")
	// Offline and a closed time gate: the first walks are cheap, as on
	// any night after the first.
	cmd.Env = []string{"HOME=" + w.home, "XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"), "XDG_STATE_HOME=" + filepath.Join(w.home, ".state"),
		"PATH=" + os.Getenv("PATH"), "DREAM_PROVIDER=offline", "DREAM_MIN_HOURS=100000"}
	cmd.Stderr, cmd.Stdout = logf, logf
	must(cmd.Start())
	return &daemon{cmd: cmd, log: logf}
}

// wait reads the daemon's JSON log until it watches n memory dirs.
func wait(d *daemon, n int) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(d.log.Name())
		s := string(b)
		if strings.Count(s, `"msg":"watching"`) >= n && strings.Contains(s, `"msg":"daemon started"`) {
			d.watches = watches(s)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(d.log.Name())
	fatal(fmt.Errorf("daemon did not watch %d projects:\n%s", n, b))
}

// watches asks the daemon's /status how many directories it watches.
func watches(log string) int {
	i := strings.Index(log, `"msg":"listening","addr":"`)
	if i < 0 {
		return -1
	}
	rest := log[i+len(`"msg":"listening","addr":"`):]
	addr := rest[:strings.IndexByte(rest, '"')]
	resp, err := http.Get("http://" + addr + "/status")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var st struct {
		Watches int `json:"watches"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return -1
	}
	return st.Watches
}

// cpu is utime+stime in clock ticks.
func cpu(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	s := string(b)
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// rss returns VmRSS and VmHWM in KiB.
func rss(pid int) (cur, peak int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	must(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(fs[1], 10, 64)
		switch fs[0] {
		case "VmRSS:":
			cur = v
		case "VmHWM:":
			peak = v
		}
	}
	return cur, peak
}

func must(err error) {
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "daemonidle:", err)
	os.Exit(1)
}
