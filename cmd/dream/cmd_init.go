package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/hookinstall"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/journal/linediff"
	"github.com/dreamkit/dream/internal/lock"
)

// initOptions are `dream init`'s own flags.
type initOptions struct {
	user, project, local bool
	remove, dryRun       bool
	modelDreams          bool
}

// cmdInit installs (or removes) dream's hook in an agent's settings.
func cmdInit(a *app, args []string) error {
	var o initOptions
	pos, err := a.standardCommand("init", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&o.user, "user", false, "claude: the user settings (~/.claude/settings.json; the default)")
		fs.BoolVar(&o.project, "project", false, "claude: the project's shared .claude/settings.json")
		fs.BoolVar(&o.local, "local", false, "claude: the project's .claude/settings.local.json (not committed)")
		fs.BoolVar(&o.remove, "remove", false, "take dream's hook out again, restoring the file byte for byte when it was not edited since")
		fs.BoolVar(&o.dryRun, "dry-run", false, "print the change as a diff and write nothing")
		fs.BoolVar(&o.modelDreams, "model-dreams", false, "let the hook's dreams spend the agent's model key: records the provider in dream's config.toml and shows what a dream costs")
	})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("init needs one agent: claude, codex, gemini, nanobot or codebot")
	}
	agent := pos[0]
	if o.modelDreams && (o.remove || o.dryRun) {
		return usagef("--model-dreams records your consent: not with --remove or --dry-run (to withdraw it, take provider out of %s)", a.userConfigPath())
	}
	switch agent {
	case "nanobot", "codebot":
		if err := a.initInstructions(agent); err != nil || !o.modelDreams {
			return err
		}
		return a.initModelDreams(agent)
	}
	t, err := a.hookTarget(agent, o)
	if err != nil {
		return err
	}
	res, err := changeHook(t, o)
	if err != nil {
		return err
	}
	var trust *codexTrustStep
	if agent == "codex" {
		if trust, err = a.codexTrust(t, res, o); err != nil {
			return err
		}
	}
	if a.jsonOut {
		return a.printInitJSON(agent, t, res, o, trust)
	}
	w := a.stdout
	printHookChange(w, agent, t, res, o)
	printCodexTrust(w, trust, o)
	if o.remove && res.Changed && res.Command != "" && !o.dryRun {
		if p := hookinstall.Program(res.Command); programState(p) != "" {
			fmt.Fprintf(w, "note: the removed hook ran %s%s\n", p, programState(p))
		}
	}
	if !o.remove {
		for _, n := range a.initNotes(agent) {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	if o.modelDreams {
		return a.initModelDreams(agent)
	}
	return nil
}

// changeHook installs or removes dream's hook in t's settings file (or,
// with --dry-run, only computes the change). A refused edit is the user's
// to fix, so it is a usage error.
func changeHook(t hookinstall.Target, o initOptions) (hookinstall.Result, error) {
	var res hookinstall.Result
	var err error
	if o.remove {
		res, err = hookinstall.RemoveFile(t, o.dryRun)
	} else {
		res, err = hookinstall.InstallFile(t, o.dryRun)
	}
	if err != nil {
		if errors.Is(err, hookinstall.ErrRefused) {
			return res, usagef("%v", err)
		}
		return res, err
	}
	return res, nil
}

// printInitJSON prints `dream init --json`: the hook's change, codex's
// trust step and the model-dreams consent in one object, so a script reads
// the whole outcome at once.
func (a *app) printInitJSON(agent string, t hookinstall.Target, res hookinstall.Result, o initOptions, trust *codexTrustStep) error {
	v := initView(agent, t, res, o, a.initNotes(agent))
	if tv := codexTrustView(trust); tv != nil {
		v["trust"] = tv
	}
	if o.modelDreams {
		md, err := a.recordModelDreams(agent)
		if err != nil {
			return err
		}
		v["model_dreams"] = md
	}
	a.printJSON(v)
	return nil
}

// printHookChange says in one sentence what `dream init` did to the
// settings file (or, with --dry-run, would do), and how to undo it.
func printHookChange(w io.Writer, agent string, t hookinstall.Target, res hookinstall.Result, o initOptions) {
	switch {
	case o.dryRun && res.Changed:
		fmt.Fprint(w, linediff.Unified(
			linediff.File{Path: res.Path, Data: res.Before, Absent: !res.Existed},
			linediff.File{Path: res.Path, Data: res.After, Absent: res.Deleted}))
		fmt.Fprintln(w, "(dry run: nothing written)")
	case !res.Changed && o.remove:
		fmt.Fprintf(w, "no dream hook in %s: nothing to remove\n", res.Path)
	case !res.Changed:
		fmt.Fprintf(w, "dream's %s hook is already in %s: nothing to do\n", t.Event, res.Path)
	case o.remove && res.Deleted:
		fmt.Fprintf(w, "removed %s, which dream had created for its hook\n", res.Path)
	case o.remove && res.Restored:
		fmt.Fprintf(w, "removed dream's %s hook from %s: restored from %s byte for byte, and removed that backup\n", t.Event, res.Path, res.Backup)
	case o.remove:
		fmt.Fprintf(w, "removed dream's %s hook from %s (the file was edited since the install; only the hook was cut)\n", t.Event, res.Path)
	case res.Command != "":
		fmt.Fprintf(w, "dream's %s hook in %s ran %s%s; it now runs %s\n", t.Event, res.Path,
			hookinstall.Program(res.Command), programState(hookinstall.Program(res.Command)), hookinstall.Program(t.Command))
	default:
		fmt.Fprintf(w, "added dream's %s hook to %s\n", t.Event, res.Path)
		if res.Backup != "" {
			fmt.Fprintf(w, "the file as it was is kept in %s\n", res.Backup)
		}
		fmt.Fprintf(w, "undo with: dream init %s --remove%s\n", agent, scopeFlag(o))
	}
}

// programState says, for a hook's program, when it is not there to run:
// "" when it is an executable file.
func programState(prog string) string {
	info, err := os.Stat(prog)
	switch {
	case err != nil:
		return ", which no longer exists (the binary moved or was removed)"
	case !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0:
		return ", which is not an executable file"
	}
	return ""
}

func scopeFlag(o initOptions) string {
	switch {
	case o.project:
		return " --project"
	case o.local:
		return " --local"
	}
	return ""
}

// hookCommand is the command line an agent runs for dream's hook: this
// binary by absolute path, so that the hook works whatever PATH the agent
// starts hooks with.
func hookCommand(agent string) string {
	exe, err := os.Executable()
	if err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
	} else {
		exe = "dream"
	}
	return hookinstall.ShellQuote(exe) + " hook --host " + agent
}

// hookTarget is the settings file and event for agent.
func (a *app) hookTarget(agent string, o initOptions) (hookinstall.Target, error) {
	home := a.home()
	n := 0
	for _, b := range []bool{o.user, o.project, o.local} {
		if b {
			n++
		}
	}
	if n > 1 {
		return hookinstall.Target{}, usagef("pick one of --user, --project, --local")
	}
	if n > 0 && agent != "claude" {
		return hookinstall.Target{}, usagef("--user, --project and --local are for claude; %s has one settings file", agent)
	}
	t := hookinstall.Target{Agent: agent, Command: hookCommand(agent)}
	switch agent {
	case "claude":
		t.Event, t.Comments = "SessionEnd", true
		switch {
		case o.project || o.local:
			name := "settings.json"
			if o.local {
				name = "settings.local.json"
			}
			t.Path = filepath.Join(host.WorktreeRoot(a.loaded.Settings.Repo), ".claude", name)
		default:
			base := claudeHome(a.env, home)
			if base == "" {
				return t, usagef("home directory unknown and CLAUDE_CONFIG_DIR not set")
			}
			t.Path = filepath.Join(base, "settings.json")
		}
	case "codex":
		base := codexHome(a.env, home)
		if base == "" {
			return t, usagef("home directory unknown and CODEX_HOME not set")
		}
		// Codex has no session-end event; Stop fires after each turn, and
		// the hook's time gate makes all but one a no-op.
		t.Path, t.Event = filepath.Join(base, "hooks.json"), "Stop"
	case "gemini":
		gh := home
		if v, ok := a.env("GEMINI_CLI_HOME"); ok && v != "" {
			gh = fsutil.ExpandHome(v, home)
		}
		if gh == "" {
			return t, usagef("home directory unknown and GEMINI_CLI_HOME not set")
		}
		t.Path, t.Event, t.Comments, t.Name = filepath.Join(gh, ".gemini", "settings.json"), "SessionEnd", true, "dream"
	default:
		return t, unknownWord("agent", agent, []string{"claude", "codex", "gemini", "nanobot", "codebot"}, "claude, codex, gemini, nanobot or codebot")
	}
	return t, nil
}

func claudeHome(env func(string) (string, bool), home string) string {
	if v, ok := env("CLAUDE_CONFIG_DIR"); ok && filepath.IsAbs(fsutil.ExpandHome(v, home)) {
		return filepath.Clean(fsutil.ExpandHome(v, home))
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude")
}

func codexHome(env func(string) (string, bool), home string) string {
	if v, ok := env("CODEX_HOME"); ok && filepath.IsAbs(fsutil.ExpandHome(v, home)) {
		return filepath.Clean(fsutil.ExpandHome(v, home))
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".codex")
}

// initNotes are what else the agent needs for the hook to run.
func (a *app) initNotes(agent string) []string {
	var notes []string
	if exe, err := os.Executable(); err == nil && strings.HasPrefix(exe, filepath.Clean(os.TempDir())+string(filepath.Separator)) && strings.Contains(exe, "go-build") {
		notes = append(notes, "this dream binary was built by `go run` in a temporary directory that will vanish: `go install ./cmd/dream`, then run dream init again")
	}
	if agent == "codex" {
		return append(notes, a.codexNotes()...)
	}
	if l, err := host.Resolve(agent, a.loaded.Settings.Repo, a.home(), a.env); err == nil && l.Consolidator != nil && l.Consolidator.Enabled {
		notes = append(notes, "the agent's own consolidator is on: "+l.Consolidator.Detail)
	}
	return notes
}

// initInstructions: nanobot and codebot have no command hooks dream can
// install into; say how to run it beside them.
func (a *app) initInstructions(agent string) error {
	w := a.stdout
	l, err := host.Resolve(agent, a.loaded.Settings.Repo, a.home(), a.env)
	if err != nil {
		return usagef("%v", err)
	}
	switch agent {
	case "nanobot":
		fmt.Fprintf(w, "nanobot has no command hooks dream can install into. Run dream beside it:\n\n")
		fmt.Fprintf(w, "  dream daemon add %s        # dream when its sessions go idle\n", l.MemoryDir)
		fmt.Fprintf(w, "  dream maybe --host nanobot       # or from cron, e.g. hourly\n\n")
		fmt.Fprintf(w, "dream edits only SOUL.md, USER.md and memory/MEMORY.md in %s; history.jsonl, the cursors and nanobot's .git are left to nanobot.\n", l.MemoryDir)
	case "codebot":
		fmt.Fprintf(w, "codebot dreams by itself from its idle hook and takes the same %s, so dream and it never overlap.\n", filepath.Join(l.MemoryDir, lock.FileName))
		fmt.Fprintf(w, "To use dream instead (audit history, undo, review), run it beside codebot:\n\n")
		fmt.Fprintf(w, "  dream maybe --host codebot       # from cron or `dream daemon add %s`\n", l.SessionsDir)
	}
	if c := l.Consolidator; c != nil && c.Enabled && !c.TakesLock && dirExists(l.MemoryDir) {
		fmt.Fprintf(w, "\nwarning: %s\n", c.Detail)
		fmt.Fprintf(w, "         turn it off (agents.defaults.dream.enabled = false in nanobot's config.json) or do not run dream on this workspace.\n")
	}
	return nil
}

func dirExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// initView is `dream init --json`: what changed in which file.
func initView(agent string, t hookinstall.Target, res hookinstall.Result, o initOptions, notes []string) map[string]any {
	v := map[string]any{
		"agent": agent, "path": res.Path, "event": t.Event, "changed": res.Changed,
		"remove": o.remove, "dry_run": o.dryRun, "backup": res.Backup,
		"restored": res.Restored, "deleted": res.Deleted,
	}
	if o.dryRun && res.Changed {
		v["diff"] = linediff.Unified(
			linediff.File{Path: res.Path, Data: res.Before, Absent: !res.Existed},
			linediff.File{Path: res.Path, Data: res.After, Absent: res.Deleted})
	}
	if notes == nil {
		notes = []string{}
	}
	if !o.remove {
		v["notes"] = notes
	}
	return v
}
