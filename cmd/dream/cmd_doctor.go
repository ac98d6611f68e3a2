package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/hookinstall"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/lock"
)

// check is one line of `dream doctor`.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
	// Fix is the command (or the one edit) that fixes a warn or fail.
	Fix string `json:"fix,omitempty"`
}

const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
)

// cmdDoctor says what is set up and what is missing, each problem with the
// command that fixes it. It changes nothing. Exit 0 when nothing fails, 1
// otherwise.
func cmdDoctor(a *app, args []string) error {
	if _, err := a.standardCommand("doctor", args, nil); err != nil {
		return err
	}
	checks := a.doctor(a.ctx)
	if a.jsonOut {
		a.printJSON(checks)
	} else {
		for _, c := range checks {
			mark := map[string]string{statusOK: "ok  ", statusWarn: "WARN", statusFail: "FAIL"}[c.Status]
			fmt.Fprintf(a.stdout, "%s  %-12s %s\n", mark, c.Name, c.Detail)
			if c.Fix != "" {
				fmt.Fprintf(a.stdout, "      %-12s fix: %s\n", "", c.Fix)
			}
		}
	}
	for _, c := range checks {
		if c.Status == statusFail {
			return reported(exitFailed, fmt.Errorf("doctor: %s: %s", c.Name, c.Detail))
		}
	}
	return nil
}

// doctor runs every check of `dream doctor`, in the order they print. Each
// area has its own helper so that adding a check touches one place.
func (a *app) doctor(ctx context.Context) []check {
	var out []check
	add := func(name, status, detail, fix string) {
		out = append(out, check{Name: name, Status: status, Detail: detail, Fix: fix})
	}
	s := a.loaded.Settings
	l, err := a.resolveLayout(s.Host, s.MemoryDir, s.Repo)
	a.doctorHost(l, err, add)
	mem := s.MemoryDir
	if mem == "" && l != nil {
		mem = l.MemoryDir
	}
	sessions := s.SessionsDir
	if sessions == "" && l != nil {
		sessions = l.SessionsDir
	}
	hostName := ""
	if l != nil {
		hostName = l.Host
	}

	memOK := doctorMemory(l, mem, add)
	a.doctorAgentDir(l, add)
	a.doctorSessions(ctx, l, sessions, mem, memOK, add)

	// The agent's version, against the one its layout was verified with.
	if hostName != "" {
		a.doctorAgent(ctx, hostName, add)
	}

	// Hook.
	switch hostName {
	case "claude", "codex", "gemini":
		a.doctorHook(hostName, add)
	case "nanobot", "codebot":
		add("hook", statusOK, hostName+" has no command hooks: run dream from cron or the daemon", "")
	}

	// Provider and key, never the key's value; and whether the
	// background dreams (hook, daemon, MCP) may spend it.
	a.doctorProvider(add)

	if memOK {
		doctorLock(mem, add)
	}
	doctorStateDir(s.StateDir, add)
	a.doctorOwnDream(l, add)
	return out
}

// doctorHost reports which agent dream resolved for the repository, and
// how, so that every later check reads against the right layout.
func (a *app) doctorHost(l *host.Layout, err error, add func(name, status, detail, fix string)) {
	s := a.loaded.Settings
	switch {
	case err != nil:
		add("host", statusFail, err.Error(), "dream doctor --host NAME")
	case l == nil && s.MemoryDir == "":
		add("host", statusFail, "no agent keeps memory for "+s.Repo, "dream doctor --host claude|codex|gemini|nanobot|codebot, or --memory-dir DIR")
	case l == nil:
		add("host", statusOK, "none: --memory-dir "+s.MemoryDir, "")
	default:
		how := "from --host"
		for _, src := range l.Sources {
			if src.What == "host" {
				how = src.From
			}
		}
		add("host", statusOK, l.Host+" ("+how+")", "")
	}
}

// doctorMemory checks the memory folder, its files, and whether the agent
// can still load them. It reports whether the folder exists, because the
// session and lock checks need it.
func doctorMemory(l *host.Layout, mem string, add func(name, status, detail, fix string)) bool {
	hostName := ""
	if l != nil {
		hostName = l.Host
	}
	if mem == "" {
		add("memory", statusFail, "no memory directory", "dream doctor --memory-dir DIR")
		return false
	}
	if info, err := os.Stat(mem); err != nil || !info.IsDir() {
		fix := memoryFix(hostName, mem)
		if hostName == "codex" {
			fix = noMemoryAdvice(l)
		}
		add("memory", statusFail, mem+" does not exist yet", fix)
		return false
	}
	n := countMarkdown(mem)
	detail := fmt.Sprintf("%s (%d Markdown file(s))", mem, n)
	if l == nil {
		add("memory", statusOK, detail, "")
		return true
	}
	if errs := host.CheckFormats(*l); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		add("memory", statusFail, detail+"; the agent cannot load: "+strings.Join(msgs, "; "), "dream log, then dream undo ID for the dream that broke it (or fix the file by hand)")
	} else {
		add("memory", statusOK, detail+", every file the agent loads parses", "")
	}
	return true
}

// doctorAgentDir warns when the dir dream uses is not the one the agent
// loads: dreams there would never reach the agent.
func (a *app) doctorAgentDir(l *host.Layout, add func(name, status, detail, fix string)) {
	if l == nil {
		return
	}
	s := a.loaded.Settings
	switch {
	case s.MemoryDir != "" && filepath.Clean(s.MemoryDir) != filepath.Clean(l.MemoryDir):
		add("agent dir", statusWarn, "dream uses "+s.MemoryDir+" ("+a.loaded.Source["memory_dir"]+"), but "+l.Host+" loads "+l.MemoryDir, "drop --memory-dir / memory_dir to dream what "+l.Host+" loads")
	case len(l.Elsewhere) > 0:
		for _, e := range l.Elsewhere {
			add("agent dir", statusWarn, "dream uses "+l.MemoryDir+"; "+l.Host+" may load "+e.Path+" instead: "+e.From,
				"start "+l.Host+" in "+s.Repo+" once and accept its trust dialog, or pass --memory-dir "+e.Path)
		}
	}
}

// doctorSessions reports what the session gate would count, ever and since
// the last dream, so a user can tell why a dream has not started.
func (a *app) doctorSessions(ctx context.Context, l *host.Layout, sessions, mem string, memOK bool, add func(name, status, detail, fix string)) {
	s := a.loaded.Settings
	var last time.Time
	if memOK {
		last, _ = lock.New(mem, "").LastConsolidatedAt()
	}
	if sessions == "" {
		add("sessions", statusWarn, "no sessions dir: the session gate never opens by itself", "dream doctor --sessions-dir DIR, or dream run by hand")
		return
	}
	var rule *gate.Rule
	if l != nil {
		rule = l.Sessions
	}
	all, err1 := gate.CountSessions(ctx, sessions, time.Time{}, rule, "")
	since, _ := gate.CountSessions(ctx, sessions, last, rule, "")
	execNote := ""
	if l != nil && l.Host == "codex" && !s.CodexExecSessions && err1 == nil {
		if n := codexExecSkipped(ctx, *l, sessions, all); n > 0 {
			execNote = fmt.Sprintf("; %d codex exec run(s) not counted (codex_exec_sessions = true counts them)", n)
		}
	}
	switch {
	case err1 != nil:
		add("sessions", statusFail, err1.Error(), "dream doctor --sessions-dir DIR")
	case all == 0:
		add("sessions", statusWarn, sessions+": no sessions found yet"+execNote, "use the agent in this repository; sessions appear there")
	default:
		add("sessions", statusOK, fmt.Sprintf("%s: %d session(s), %d since the last dream (need %d)%s", sessions, all, since, s.MinSessions, execNote), "")
	}
}

// doctorLock reads the memory's lock without taking it, to tell a live
// dream from one a dead holder left behind.
func doctorLock(mem string, add func(name, status, detail, fix string)) {
	h, err := lock.New(mem, "").Inspect()
	switch {
	case err != nil:
		add("lock", statusFail, err.Error(), "dream status (it recovers a dead dream's lock)")
	case !h.Exists:
		add("lock", statusOK, "no "+lock.FileName+" yet: never consolidated", "")
	case h.Live:
		add("lock", statusOK, "held: "+h.Reason, "")
	case h.PID != 0:
		add("lock", statusWarn, "left by a dead holder: "+h.Reason, "dream status (it recovers the dream and rewinds the lock)")
	default:
		add("lock", statusOK, "free; last dream "+h.MTime.UTC().Format(time.RFC3339), "")
	}
}

// doctorStateDir checks that the state dir takes files: every dream, gate
// and throttle writes there.
func doctorStateDir(st string, add func(name, status, detail, fix string)) {
	if st == "" {
		add("state dir", statusFail, "no state dir", "dream doctor --state-dir DIR")
	} else if err := writable(st); err != nil {
		fix := "chmod u+rwx " + st + " (or set state_dir / --state-dir to a writable DIR)"
		if info, serr := os.Stat(st); serr == nil && !info.IsDir() {
			fix = "move the file " + st + " aside, or set state_dir / --state-dir to a DIR"
		}
		add("state dir", statusFail, st+": "+err.Error(), fix)
	} else {
		add("state dir", statusOK, st+" writable", "")
	}
}

// doctorOwnDream reports the agent's own consolidator, which would rewrite
// the same memory as dream unless it is off or takes dream's lock.
func (a *app) doctorOwnDream(l *host.Layout, add func(name, status, detail, fix string)) {
	if l != nil && l.Host == "codex" {
		a.doctorCodexMemory(l, add)
		return
	}
	if l == nil || l.Consolidator == nil {
		return
	}
	c := l.Consolidator
	switch {
	case !c.Enabled:
		add("own dream", statusOK, c.Detail, "")
	case c.TakesLock:
		add("own dream", statusOK, c.Detail, "")
	default:
		add("own dream", statusWarn, c.Detail, consolidatorFix(l.Host))
	}
}

// doctorHook reports whether dream's hook is in the agent's settings, and
// whether the binary it runs is still there.
func (a *app) doctorHook(agent string, add func(name, status, detail, fix string)) {
	scopes := []initOptions{{}}
	if agent == "claude" {
		scopes = []initOptions{{user: true}, {project: true}, {local: true}}
	}
	var found []string
	for _, o := range scopes {
		t, err := a.hookTarget(agent, o)
		if err != nil {
			continue
		}
		data, err := os.ReadFile(t.Path)
		if err != nil {
			continue
		}
		cmd, ok, err := hookinstall.InstalledCommand(t, data)
		if err != nil {
			add("hook", statusFail, err.Error(), "fix the JSON in "+t.Path+", then dream init "+agent)
			return
		}
		if !ok {
			continue
		}
		if p := hookinstall.Program(cmd); programState(p) != "" {
			add("hook", statusFail, "dream's hook in "+t.Path+" runs "+p+programState(p), "dream init "+agent+scopeFlag(o)+" (from the dream binary you use now: it points the hook at it)")
			return
		}
		found = append(found, t.Path)
	}
	if len(found) == 0 {
		add("hook", statusFail, "dream's hook is not installed for "+agent, "dream init "+agent)
		return
	}
	if agent == "codex" {
		a.doctorCodexHook(found[0], add)
		return
	}
	if len(found) > 1 {
		add("hook", statusWarn, "installed in "+strings.Join(found, " and ")+": Claude Code runs the hooks of every settings file, so dream's runs "+fmt.Sprint(len(found))+" times per session",
			"keep one: dream init claude --remove with --project or --local for the others")
		return
	}
	add("hook", statusOK, "installed in "+found[0], "")
}

// versionRE finds a version number in an agent's --version output
// ("2.1.197 (Claude Code)", "codex-cli 0.171.0", "0.61.0").
var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+[0-9A-Za-z.+-]*`)

// doctorAgent names the agent version on PATH and whether dream's layout
// for it was verified against that version.
func (a *app) doctorAgent(ctx context.Context, agent string, add func(name, status, detail, fix string)) {
	command, verified := host.Agent(agent)
	if command == "" {
		return
	}
	against := "dream's " + agent + " layout was verified against " + agent + " " + verified
	if verified == "" {
		against = "dream's " + agent + " layout names no version it was verified against"
	}
	path, err := exec.LookPath(command)
	if err != nil {
		add("agent", statusOK, command+" is not on PATH, so its version is unknown; "+against, "")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	version := versionRE.FindString(string(out))
	switch {
	case version == "":
		add("agent", statusWarn, fmt.Sprintf("%s --version told no version (%v); %s", path, err, against), "")
	case version == verified:
		add("agent", statusOK, fmt.Sprintf("%s %s (%s): %s", agent, version, path, against), "")
	default:
		add("agent", statusWarn, fmt.Sprintf("%s %s (%s); %s, not this one", agent, version, path, against),
			"check that `dream status --host "+agent+"` names the memory the agent loads (its layout may have changed)")
	}
}

func memoryFix(hostName, mem string) string {
	switch hostName {
	case "claude", "gemini", "codex", "codebot", "nanobot":
		return "use " + hostName + " in this repository until it writes memory, or mkdir -p " + mem
	}
	return "mkdir -p " + mem
}

func consolidatorFix(hostName string) string {
	if hostName == "nanobot" {
		return `set "dream": {"enabled": false} under agents.defaults in nanobot's config.json, or stop running dream on this workspace`
	}
	return "turn the agent's own consolidator off, or run only one of them"
}

// countMarkdown counts *.md files under dir, not following links.
func countMarkdown(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".md") {
			n++
		}
		return nil
	})
	return n
}

// writable checks that dir exists (or can be made) and takes a file.
func writable(dir string) error {
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return fmt.Errorf("not a directory")
	} else if err != nil {
		// It is made on first use; it must be creatable.
		parent := dir
		for {
			parent = filepath.Dir(parent)
			if _, err := os.Stat(parent); err == nil || parent == filepath.Dir(parent) {
				break
			}
		}
		return writableDir(parent)
	}
	return writableDir(dir)
}

func writableDir(dir string) error {
	f, err := os.CreateTemp(dir, ".dream-doctor-*")
	if err != nil {
		return fmt.Errorf("cannot write: %w", err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
