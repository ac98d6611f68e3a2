package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/hookinstall"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/settings"
)

// doctorCodexHook checks what Codex needs besides hooks.json to run
// dream's hook: its hooks feature, and the trust of that exact hook.
func (a *app) doctorCodexHook(hooksFile string, add func(name, status, detail, fix string)) {
	base := codexHome(a.env, a.home())
	config := filepath.Join(base, "config.toml")
	if k, off := codexHooksOff(base); off {
		add("hook", statusFail, fmt.Sprintf("installed in %s but Codex's hooks feature is off (%s = false under [features] in %s)", hooksFile, k, config), "remove that line: hooks are on by default")
		return
	}
	t, err := a.hookTarget("codex", initOptions{})
	if err != nil {
		return
	}
	src, err := os.ReadFile(t.Path)
	if err != nil {
		add("hook", statusFail, err.Error(), "dream init codex")
		return
	}
	h, ok, err := hookinstall.CodexHookOf(t, src, a.codexHooksPath())
	if err != nil || !ok {
		add("hook", statusWarn, fmt.Sprintf("installed in %s; whether Codex trusts it is Codex's to say (%v)", hooksFile, err), "codex, then /hooks: trust dream's Stop hook")
		return
	}
	cfg, err := os.ReadFile(config)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		add("hook", statusFail, err.Error(), "")
		return
	}
	state, err := hookinstall.CodexTrustState(cfg, h)
	switch {
	case err != nil:
		add("hook", statusFail, config+" does not parse, so Codex does not start: "+err.Error(), "fix "+config)
	case state == hookinstall.CodexTrusted:
		add("hook", statusOK, "installed in "+hooksFile+" and trusted in "+config+" (Codex runs it after every turn)", "")
	case state == hookinstall.CodexDisabled:
		add("hook", statusWarn, "installed in "+hooksFile+" but disabled in Codex (enabled = false in "+config+")", "codex, then /hooks: enable dream's Stop hook")
	case state == hookinstall.CodexModified:
		add("hook", statusFail, "installed in "+hooksFile+", but Codex trusted another version of it (the hook changed since): Codex does not run it", "dream init codex (records the trust as Codex's /hooks does)")
	default:
		add("hook", statusFail, "installed in "+hooksFile+", but Codex has not trusted it, and Codex runs no untrusted hook (codex exec drops it without a word)", "dream init codex (records the trust as Codex's /hooks does), or codex, then /hooks")
	}
	add("hook env", statusOK, codexDaemonNote, "")
}

// doctorCodexMemory says whether Codex loads the memory dream dreams, and
// whose it is when Codex consolidates it too.
func (a *app) doctorCodexMemory(l *host.Layout, add func(name, status, detail, fix string)) {
	owner := a.loaded.Settings.CodexMemoryOwner
	config := filepath.Join(codexHome(a.env, a.home()), "config.toml")
	if l.NotLoaded != "" {
		add("agent loads", statusWarn, l.NotLoaded+": a dream there changes nothing Codex sees", "set memories = true under [features] in "+config+" (Codex then consolidates memories/ too: choose who owns it with codex_memory_owner)")
	}
	if b, err := os.ReadFile(filepath.Join(l.MemoryDir, "memory_summary.md")); err == nil {
		if _, cut := host.CodexSummaryLoaded(b); cut > 0 {
			add("limit", statusWarn, fmt.Sprintf("Codex loads the first and last 5,000 bytes of memory_summary.md (%d bytes): the %d bytes between are not in its prompt", len(b), cut),
				"shorten memory_summary.md to 10,000 bytes or less (dream run --host codex)")
		}
	}
	why := host.AgentOwns(*l, owner)
	switch {
	case why != "" && owner == settings.CodexOwner:
		add("own dream", statusOK, why, "")
	case why != "":
		add("own dream", statusWarn, l.Consolidator.Detail+"; "+why,
			`set codex_memory_owner = "codex" in dream's config to leave it to Codex, or "dream" to dream it too (Codex's own pass still reworks it at each start)`)
	case owner == settings.DreamOwner && l.Consolidator.Enabled:
		add("own dream", statusWarn, l.Consolidator.Detail+"; dream dreams it too (codex_memory_owner = dream)", "turn Codex's memories feature off, or set codex_memory_owner = codex")
	default:
		add("own dream", statusOK, l.Consolidator.Detail, "")
	}
}

// codexExecSkipped counts the codex exec rollouts the session rule leaves
// out of counted (all sessions ever), for doctor to say so.
func codexExecSkipped(ctx context.Context, l host.Layout, sessions string, counted int) int {
	host.CountCodexExec(&l)
	n, err := gate.CountSessions(ctx, sessions, time.Time{}, l.Sessions, "")
	if err != nil {
		return 0
	}
	return n - counted
}

// noMemoryAdvice is what to do when the agent's memory dir does not exist.
func noMemoryAdvice(l *host.Layout) string {
	if l == nil {
		return "create it, or pass --memory-dir DIR"
	}
	if l.Host == "codex" && l.NotLoaded != "" {
		return l.NotLoaded + "; Codex writes none either until then, so there is nothing to dream"
	}
	return l.Host + " has not written memory here yet: nothing to dream until it does (use " + l.Host + " in this repository)"
}
