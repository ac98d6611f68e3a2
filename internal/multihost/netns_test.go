package multihost

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/etcdtest"
)

// The multi-host test runs this test binary again as helper processes: a
// hub (etcd and a git smart-HTTP server) in its own network namespace, and
// each host in another, joined by veth pairs to a bridge inside the hub
// namespace. Nothing is added to the namespace the test starts in, and all
// traffic stays inside the namespaces the test makes.
const (
	roleEnv   = "DREAM_MULTIHOST_ROLE"
	subnet    = "10.213.0."
	hubAddr   = subnet + "1"
	netnsTTL  = 3 * time.Second
	raceRound = 70 // dreams each host lands in the race phase: 3 hosts, >= 210 rounds
)

func TestHelperHub(t *testing.T) {
	if os.Getenv(roleEnv) != "hub" {
		return
	}
	dir := os.Getenv("DREAM_MULTIHOST_DIR")
	srv, err := etcdtest.StartIn(filepath.Join(dir, "etcd"), hubAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(hubAddr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Root: "/",
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Join(dir, "git"), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
	}
	go http.Serve(ln, h)
	info, _ := json.Marshal(map[string]string{"etcd": srv.URL, "git": "http://" + ln.Addr().String() + "/memory.git"})
	tmp := filepath.Join(dir, "hub.json.tmp")
	if err := os.WriteFile(tmp, info, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "hub.json")); err != nil {
		t.Fatal(err)
	}
	// Serve until the test closes our stdin or signals us.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		bufio.NewReader(os.Stdin).ReadString(0)
		stop()
	}()
	<-ctx.Done()
}

func TestHelperHost(t *testing.T) {
	if os.Getenv(roleEnv) != "host" {
		return
	}
	env := func(k string) string { return os.Getenv("DREAM_MULTIHOST_" + k) }
	dir, name, mode := env("DIR"), env("HOST"), env("MODE")
	r := &hostRunner{host: name}
	results := filepath.Join(dir, "results.jsonl")
	switch mode {
	case "hold":
		hold, _ := time.ParseDuration(env("HOLD"))
		r.hold = func(ctx context.Context) error {
			r.mu.Lock()
			task := r.last.Task
			r.mu.Unlock()
			if err := os.WriteFile(filepath.Join(dir, "holding"), []byte(task), 0o644); err != nil {
				return err
			}
			select {
			case <-time.After(hold):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	d, err := newHostDreamer(filepath.Join(dir, "memory"), filepath.Join(dir, "state"), env("ETCD"), env("GIT"), netnsTTL, r)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	switch mode {
	case "race":
		// Race until this host has landed n dreams, within bounds.
		n, _ := strconv.Atoi(env("ROUNDS"))
		deadline := time.Now().Add(8 * time.Minute)
		for won, tries := 0, 0; won < n && tries < 200*n && time.Now().Before(deadline); tries++ {
			a := runOnce(ctx, d, r)
			if err := appendJSON(results, a); err != nil {
				t.Fatal(err)
			}
			pause := time.Duration(rand.IntN(3000)) * time.Microsecond
			if a.Status == "completed" {
				won++
				pause += 10 * time.Millisecond // let the others in
			}
			time.Sleep(pause)
		}
	case "hold":
		if err := appendJSON(results, runOnce(ctx, d, r)); err != nil {
			t.Fatal(err)
		}
	case "until":
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) {
			a := runOnce(ctx, d, r)
			if err := appendJSON(results, a); err != nil {
				t.Fatal(err)
			}
			if a.Status == "completed" {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatal("no dream completed within 90s")
	case "sync":
		if err := hostSync(ctx, d, dir, env); err != nil {
			t.Fatal(err)
		}
	case "probe":
		s, err := d.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, "probe.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown mode %q", mode)
	}
}

// netns is the namespaces of one test run.
type netns struct {
	t     *testing.T
	names []string
}

var nsName = regexp.MustCompile(`^dmh(\d+)-`)

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// removeStale deletes namespaces left by an earlier run of this test that
// was killed before its cleanup ran (its PID is gone).
func removeStale() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		m := nsName.FindStringSubmatch(f[0])
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid > 0 && syscall.Kill(pid, 0) != nil {
			_ = ipCmd("netns", "del", f[0])
		}
	}
}

func (n *netns) add(name string) error {
	if err := ipCmd("netns", "add", name); err != nil {
		return err
	}
	n.names = append(n.names, name)
	return nil
}

func (n *netns) ip(args ...string) {
	n.t.Helper()
	if err := ipCmd(args...); err != nil {
		n.t.Fatal(err)
	}
}

func (n *netns) cleanup() {
	for _, name := range n.names {
		if err := ipCmd("netns", "del", name); err != nil {
			n.t.Logf("cleanup: %v", err)
		}
	}
}

// proc is one helper process.
type proc struct {
	cmd  *exec.Cmd
	out  *strings.Builder
	done chan error
}

func helperEnv(role string, kv map[string]string) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(k, "DREAM_") || strings.Contains(strings.ToLower(k), "proxy") {
			continue // no proxy, no outside settings: the hosts talk to the hub only
		}
		env = append(env, e)
	}
	env = append(env, roleEnv+"="+role)
	for k, v := range kv {
		env = append(env, "DREAM_MULTIHOST_"+k+"="+v)
	}
	return env
}

func start(t *testing.T, ns, hostname, test string, env []string) *proc {
	t.Helper()
	args := []string{"netns", "exec", ns}
	if hostname != "" {
		// Each host its own UTS namespace too, so the lock names it by its
		// own host name. Every step execs: the PID is the helper's.
		args = append(args, "unshare", "--uts", "sh", "-c", `hostname "$0" && exec "$@"`, hostname)
	}
	args = append(args, os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd := exec.Command("ip", args...)
	cmd.Env = env
	p := &proc{cmd: cmd, out: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("helper %v: %v\n%s", p.cmd.Args, err, p.out)
		}
	case <-time.After(within):
		p.cmd.Process.Kill()
		t.Fatalf("helper %v did not finish within %s\n%s", p.cmd.Args, within, p.out)
	}
}

func waitFile(t *testing.T, path string, within time.Duration, p *proc) []byte {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return b
		}
		if p != nil {
			select {
			case err := <-p.done:
				p.done <- err
				t.Fatalf("helper exited (%v) before writing %s:\n%s", err, filepath.Base(path), p.out)
			default:
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s not written within %s", path, within)
	return nil
}

type mhost struct {
	name, ns, ip, dir string
}

func TestMultiHostNetns(t *testing.T) {
	needMultiHost(t)
	if testing.Short() {
		t.Skip("multi-host test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("multi-host test skipped: creating network namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("multi-host test skipped: the ip command (iproute2) is not installed")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("multi-host test skipped: unshare (util-linux) is not installed")
	}
	removeStale()
	n := &netns{t: t}
	t.Cleanup(n.cleanup)
	tag := fmt.Sprintf("dmh%d-", os.Getpid())
	hub := tag + "hub"
	if err := n.add(hub); err != nil {
		t.Skipf("multi-host test skipped: cannot create a network namespace here: %v", err)
	}
	n.ip("-n", hub, "link", "set", "lo", "up")
	n.ip("-n", hub, "link", "add", "br0", "type", "bridge")
	n.ip("-n", hub, "addr", "add", hubAddr+"/24", "dev", "br0")
	n.ip("-n", hub, "link", "set", "br0", "up")

	root := t.TempDir()
	hosts := make([]mhost, 3)
	for i := range hosts {
		h := mhost{name: fmt.Sprintf("host%d", i+1), ns: fmt.Sprintf("%sh%d", tag, i+1), ip: fmt.Sprintf("%s%d", subnet, 11+i)}
		h.dir = filepath.Join(root, h.name)
		if err := n.add(h.ns); err != nil {
			t.Fatal(err)
		}
		veth := fmt.Sprintf("vh%d", i+1)
		n.ip("-n", hub, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", h.ns)
		n.ip("-n", hub, "link", "set", veth, "master", "br0", "up")
		n.ip("-n", h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
		n.ip("-n", h.ns, "link", "set", "eth0", "up")
		n.ip("-n", h.ns, "link", "set", "lo", "up")
		if err := os.MkdirAll(filepath.Join(h.dir, "memory"), 0o755); err != nil {
			t.Fatal(err)
		}
		hosts[i] = h
	}
	if err := writeSeed(filepath.Join(hosts[0].dir, "memory")); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(root, "hub", "git", "memory.git")
	for _, args := range [][]string{
		{"init", "-q", "--bare", "--initial-branch=main", bare},
		{"--git-dir=" + bare, "config", "http.receivepack", "true"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}

	hubProc := start(t, hub, "", "TestHelperHub", helperEnv("hub", map[string]string{"DIR": filepath.Join(root, "hub")}))
	var info struct{ Etcd, Git string }
	if err := json.Unmarshal(waitFile(t, filepath.Join(root, "hub", "hub.json"), 90*time.Second, hubProc), &info); err != nil {
		t.Fatal(err)
	}
	t.Logf("hub: etcd %s, git %s; hosts %s..%s", info.Etcd, info.Git, hosts[0].ip, hosts[2].ip)

	run := func(h mhost, mode string, extra map[string]string) *proc {
		kv := map[string]string{"DIR": h.dir, "HOST": h.name, "MODE": mode, "ETCD": info.Etcd, "GIT": info.Git}
		for k, v := range extra {
			kv[k] = v
		}
		os.Remove(filepath.Join(h.dir, "holding"))
		return start(t, h.ns, h.name, "TestHelperHost", helperEnv("host", kv))
	}
	hostAttempts := func(h mhost) []attempt {
		as, err := readAttempts(filepath.Join(h.dir, "results.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	attempts := func() []attempt {
		var all []attempt
		for _, h := range hosts {
			as, err := readAttempts(filepath.Join(h.dir, "results.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, as...)
		}
		return all
	}
	probe := func(h mhost) map[string]any {
		os.Remove(filepath.Join(h.dir, "probe.json"))
		run(h, "probe", nil).wait(t, time.Minute)
		var s map[string]any
		if err := json.Unmarshal(waitFile(t, filepath.Join(h.dir, "probe.json"), time.Second, nil), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Phase 0: the first host seeds the remote.
	run(hosts[0], "race", map[string]string{"ROUNDS": "1"}).wait(t, 2*time.Minute)

	// Phase 1: all three race.
	began := time.Now()
	var procs []*proc
	for _, h := range hosts {
		procs = append(procs, run(h, "race", map[string]string{"ROUNDS": strconv.Itoa(raceRound)}))
	}
	for _, p := range procs {
		p.wait(t, 10*time.Minute)
	}
	all := attempts()
	landed, failed, held := split(all)
	t.Logf("race: %s in %s", summary(all), time.Since(began).Round(time.Second))
	for _, h := range hosts {
		l, _, _ := split(hostAttempts(h))
		t.Logf("  %s landed %d", h.name, len(l))
	}
	for _, a := range failed {
		t.Errorf("a racing dream failed: %+v", a)
	}
	if len(landed) < 3*raceRound || held == 0 {
		t.Fatalf("not a race: %s", summary(all))
	}
	checkNoOverlap(t, landed, 0)
	checkRemoteHistory(t, bare, landed, failed)
	if t.Failed() {
		return
	}

	// Phase 2: SIGKILL the holder mid-dream.
	before := probe(hosts[2])["last_consolidated_at"]
	victim := run(hosts[0], "hold", map[string]string{"HOLD": "5m"})
	killedTask := string(waitFile(t, filepath.Join(hosts[0].dir, "holding"), time.Minute, victim))
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	<-victim.done
	victim.done <- nil
	after := probe(hosts[2])
	if after["last_consolidated_at"] != before {
		t.Errorf("the killed dream moved the time gate: %v, was %v", after["last_consolidated_at"], before)
	}
	if lb, _ := after["lock_backend"].(map[string]any); lb["held"] != true || lb["host"] != hosts[0].name {
		t.Errorf("right after the kill the lock should still be %s's (lease alive): %v", hosts[0].name, lb)
	}
	startN := len(hostAttempts(hosts[1]))
	run(hosts[1], "until", nil).wait(t, 2*time.Minute)
	took := hostAttempts(hosts[1])[startN:]
	last := took[len(took)-1]
	wait := last.Start.Sub(killedAt)
	t.Logf("SIGKILL: %s took over %s after the holder was killed (lease TTL %s), after %d refused attempts",
		hosts[1].name, wait.Round(10*time.Millisecond), netnsTTL, len(took)-1)
	// The lease was renewed at most a third of its TTL before the kill, so
	// the takeover cannot come sooner than two thirds of it after.
	if last.Status != "completed" || wait < netnsTTL/2 || wait > netnsTTL+10*time.Second || len(took) < 2 {
		t.Errorf("takeover after SIGKILL: %+v after %s (%d attempts)", last, wait, len(took))
	}
	// The survivor started from the memory before the killed dream: it saw
	// exactly the dreams that had landed.
	if want := len(landed); last.Seen != want {
		t.Errorf("the survivor saw %d dreams, want %d (the killed one must not count)", last.Seen, want)
	}
	if after["last_consolidated_at"] == nil {
		t.Error("no last consolidation time in etcd after the race")
	}

	// Phase 3: cut the holder's link mid-dream.
	startN = len(hostAttempts(hosts[2]))
	cut := run(hosts[2], "hold", map[string]string{"HOLD": (netnsTTL + 4*time.Second).String()})
	cutTask := string(waitFile(t, filepath.Join(hosts[2].dir, "holding"), time.Minute, cut))
	n.ip("-n", hosts[2].ns, "link", "set", "eth0", "down")
	other := run(hosts[0], "until", nil)
	cut.wait(t, 2*time.Minute)
	other.wait(t, 2*time.Minute)
	n.ip("-n", hosts[2].ns, "link", "set", "eth0", "up")
	var cutResult attempt
	for _, a := range hostAttempts(hosts[2])[startN:] {
		if a.Task == cutTask {
			cutResult = a
		}
	}
	t.Logf("link cut: %s's dream ended %q: %s", hosts[2].name, cutResult.Status, cutResult.Error)
	if cutResult.Status == "completed" || !strings.Contains(cutResult.Error, "fenced") {
		t.Errorf("the cut-off holder's dream: %+v, want failed by fencing", cutResult)
	}

	all = attempts()
	landed, failed, _ = split(all)
	notLanded := append(failed, attempt{Task: killedTask, Host: hosts[0].name, Status: "killed"})
	checkNoOverlap(t, landed, 0)
	checkRemoteHistory(t, bare, landed, notLanded)
	checkRemoteIsWholeDream(t, bare, landed)
	t.Logf("in all: %s; remote history holds each of the %d landed dreams once, neither the killed nor the cut-off one", summary(all), len(landed))
	if t.Failed() {
		return
	}

	// Phase 4: the sync cases.
	testSyncAcrossHosts(t, hosts, bare, run, probe)
}
