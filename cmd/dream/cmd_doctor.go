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
	"github.com/dreamkit/dream/provider"
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

func (a *app) doctor(ctx context.Context) []check {
	var out []check
	add := func(name, status, detail, fix string) {
		out = append(out, check{Name: name, Status: status, Detail: detail, Fix: fix})
	}
	s := a.loaded.Settings
	repo := s.Repo
	l, err := a.resolveLayout(s.Host, s.MemoryDir, repo)
	switch {
	case err != nil:
		add("host", statusFail, err.Error(), "dream doctor --host NAME")
	case l == nil && s.MemoryDir == "":
		add("host", statusFail, "no agent keeps memory for "+repo, "dream doctor --host claude|codex|gemini|nanobot|codebot, or --memory-dir DIR")
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

	// Memory: the folder, its files, and whether the agent can still load them.
	memOK := false
	if mem == "" {
		add("memory", statusFail, "no memory directory", "dream doctor --memory-dir DIR")
	} else if info, err := os.Stat(mem); err != nil || !info.IsDir() {
		fix := memoryFix(hostName, mem)
		if hostName == "codex" {
			fix = noMemoryAdvice(l)
		}
		add("memory", statusFail, mem+" does not exist yet", fix)
	} else {
		memOK = true
		n := countMarkdown(mem)
		detail := fmt.Sprintf("%s (%d Markdown file(s))", mem, n)
		if l != nil {
			if errs := host.CheckFormats(*l); len(errs) > 0 {
				msgs := make([]string, len(errs))
				for i, e := range errs {
					msgs[i] = e.Error()
				}
				add("memory", statusFail, detail+"; the agent cannot load: "+strings.Join(msgs, "; "), "dream log, then dream undo ID for the dream that broke it (or fix the file by hand)")
			} else {
				add("memory", statusOK, detail+", every file the agent loads parses", "")
			}
		} else {
			add("memory", statusOK, detail, "")
		}
	}

	// The dir dream uses against the one the agent loads.
	if l != nil {
		switch {
		case s.MemoryDir != "" && filepath.Clean(s.MemoryDir) != filepath.Clean(l.MemoryDir):
			add("agent dir", statusWarn, "dream uses "+s.MemoryDir+" ("+a.loaded.Source["memory_dir"]+"), but "+l.Host+" loads "+l.MemoryDir, "drop --memory-dir / memory_dir to dream what "+l.Host+" loads")
		case len(l.Elsewhere) > 0:
			for _, e := range l.Elsewhere {
				add("agent dir", statusWarn, "dream uses "+l.MemoryDir+"; "+l.Host+" may load "+e.Path+" instead: "+e.From,
					"start "+l.Host+" in "+repo+" once and accept its trust dialog, or pass --memory-dir "+e.Path)
			}
		}
	}

	// Sessions: what the agent would count, ever and since the last dream.
	var last time.Time
	if memOK {
		last, _ = lock.New(mem, "").LastConsolidatedAt()
	}
	if sessions == "" {
		add("sessions", statusWarn, "no sessions dir: the session gate never opens by itself", "dream doctor --sessions-dir DIR, or dream run by hand")
	} else {
		var rule *gate.Rule
		if l != nil {
			rule = l.Sessions
		}
		all, err1 := gate.CountSessions(ctx, sessions, time.Time{}, rule, "")
		since, _ := gate.CountSessions(ctx, sessions, last, rule, "")
		execNote := ""
		if hostName == "codex" && !s.CodexExecSessions && err1 == nil {
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

	// Provider and key, never the key's value.
	choice, err := provider.Choose(s, a.getenv)
	keys := []string{}
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		if a.getenv(k) != "" {
			keys = append(keys, k+" set")
		}
	}
	keyText := "no model key set"
	if len(keys) > 0 {
		keyText = strings.Join(keys, ", ")
	}
	switch {
	case err != nil:
		add("provider", statusFail, err.Error()+" ("+keyText+")", "export ANTHROPIC_API_KEY=... or OPENAI_API_KEY=..., or --provider offline")
	case choice.Name == provider.Offline:
		add("provider", statusWarn, "offline engine ("+choice.Why+"): mechanical fixes only, zero tokens", "export ANTHROPIC_API_KEY=... (or OPENAI_API_KEY=...) for model dreams")
	default:
		add("provider", statusOK, fmt.Sprintf("%s, model %s (%s; the value is never shown)", choice.Name, choice.Model, choice.Why), "")
	}

	// Lock.
	if memOK {
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

	// State dir.
	if st := s.StateDir; st == "" {
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

	// The agent's own consolidator.
	if hostName == "codex" {
		a.doctorCodexMemory(l, add)
	} else if l != nil && l.Consolidator != nil {
		c := l.Consolidator
		switch {
		case !c.Enabled:
			add("own dream", statusOK, c.Detail, "")
		case c.TakesLock:
			add("own dream", statusOK, c.Detail, "")
		default:
			add("own dream", statusWarn, c.Detail, consolidatorFix(hostName))
		}
	}
	return out
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
