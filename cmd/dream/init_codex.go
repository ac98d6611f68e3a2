package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/dreamkit/dream/internal/hookinstall"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/journal/linediff"
)

// Codex runs only the hooks its user trusted (codex exec drops an
// untrusted one without a word), so `dream init codex` ends with the trust
// Codex's own /hooks records: hookinstall.TrustCodex.

// codexTrustStep is the config.toml half of `dream init codex`.
type codexTrustStep struct {
	Hook hookinstall.CodexHook
	Res  hookinstall.Result
	// Refused is why the trust could not be recorded; the user then trusts
	// the hook in Codex's /hooks.
	Refused error
}

// codexHooksPath is hooks.json as Codex names it in its trust keys: under
// CODEX_HOME with its symbolic links resolved (Codex canonicalizes that
// variable), or $HOME/.codex as it is.
func (a *app) codexHooksPath() string {
	base := codexHome(a.env, a.home())
	if v, ok := a.env("CODEX_HOME"); ok && v != "" {
		if r, err := filepath.EvalSymlinks(base); err == nil {
			base = r
		}
	}
	return filepath.Join(base, "hooks.json")
}

// codexTrust records Codex's trust of the hook hooks.json holds after the
// hooks.json step (res.After), or takes dream's record out when removing
// (the hook as it was, res.Before). nil when there is no hook to trust.
func (a *app) codexTrust(t hookinstall.Target, res hookinstall.Result, o initOptions) (*codexTrustStep, error) {
	src := res.After
	if o.remove || !res.Changed {
		src = res.Before
	}
	h, ok, err := hookinstall.CodexHookOf(t, src, a.codexHooksPath())
	if err != nil && !errors.Is(err, hookinstall.ErrRefused) {
		return nil, err
	}
	if !ok && err == nil {
		return nil, nil
	}
	step := &codexTrustStep{Hook: h, Refused: err}
	if err != nil {
		return step, nil
	}
	config := filepath.Join(codexHome(a.env, a.home()), "config.toml")
	step.Res, err = hookinstall.CodexTrustFile(config, h, o.remove, o.dryRun)
	if errors.Is(err, hookinstall.ErrRefused) {
		step.Refused, err = err, nil
	}
	return step, err
}

// printCodexTrust says what the trust step did.
func printCodexTrust(w io.Writer, st *codexTrustStep, o initOptions) {
	if st == nil {
		return
	}
	r := st.Res
	switch {
	case st.Refused != nil && !o.remove:
		fmt.Fprintf(w, "Codex runs no hook you have not trusted, and dream could not record the trust: %v\n", st.Refused)
		fmt.Fprintf(w, "next step: start codex, type /hooks, pick dream's Stop hook and trust it\n")
	case st.Refused != nil:
	case o.dryRun && r.Changed:
		fmt.Fprint(w, linediff.Unified(
			linediff.File{Path: r.Path, Data: r.Before, Absent: !r.Existed},
			linediff.File{Path: r.Path, Data: r.After}))
		fmt.Fprintln(w, "(dry run: nothing written)")
	case o.remove && r.Changed:
		fmt.Fprintf(w, "removed Codex's trust of dream's hook from %s\n", r.Path)
	case o.remove:
	case r.Changed:
		fmt.Fprintf(w, "trusted dream's Stop hook for Codex in %s, as Codex's /hooks does ([hooks.state.\"%s\"] trusted_hash = %q): Codex runs no hook you have not trusted\n", r.Path, st.Hook.Key, st.Hook.Hash)
	default:
		fmt.Fprintf(w, "Codex already trusts dream's Stop hook (%s)\n", r.Path)
	}
}

// codexTrustView is the trust step in `dream init --json`.
func codexTrustView(st *codexTrustStep) map[string]any {
	if st == nil {
		return nil
	}
	v := map[string]any{"path": st.Res.Path, "key": st.Hook.Key, "hash": st.Hook.Hash, "changed": st.Res.Changed}
	if st.Refused != nil {
		v["refused"] = st.Refused.Error()
	}
	return v
}

// codexHooksOff reports whether config.toml turns Codex's hooks feature
// off: it is on by default since 0.171.0's "hooks" (codex_hooks is its
// deprecated alias), so only an explicit false stops it.
func codexHooksOff(base string) (string, bool) {
	var cfg struct {
		Features map[string]any `toml:"features"`
	}
	if _, err := toml.DecodeFile(filepath.Join(base, "config.toml"), &cfg); err != nil {
		return "", false
	}
	for _, k := range []string{"hooks", "codex_hooks"} {
		if on, ok := cfg.Features[k].(bool); ok && !on {
			return k, true
		}
	}
	return "", false
}

// codexDaemonNote is what the interactive UI's hooks see: Codex runs them
// from its background app-server, which keeps the environment it started
// with (verified with 0.171.0: a DREAM_* variable exported before a later
// `codex` never reached the hook).
const codexDaemonNote = "the interactive codex runs hooks from its background app-server, which keeps the environment it started with: after changing DREAM_* variables or a model key, run `codex app-server daemon restart` (or set them in dream's config file instead)"

// codexNotes are what `dream init codex` tells beside the hook and trust.
func (a *app) codexNotes() []string {
	base := codexHome(a.env, a.home())
	var notes []string
	if k, off := codexHooksOff(base); off {
		notes = append(notes, fmt.Sprintf("Codex's hooks feature is off (%s = false under [features] in %s): Codex runs no hook until you remove that line", k, filepath.Join(base, "config.toml")))
	}
	l, err := host.Resolve("codex", "", a.home(), a.env)
	if err == nil {
		if l.NotLoaded != "" {
			notes = append(notes, l.NotLoaded+"; until then dream has nothing Codex reads to consolidate")
		}
		if why := host.AgentOwns(l, a.loaded.Settings.CodexMemoryOwner); why != "" {
			notes = append(notes, why)
		}
	}
	if !a.loaded.Settings.CodexExecSessions {
		notes = append(notes, "codex exec runs are not counted as sessions (Codex's memory pipeline skips them); set codex_exec_sessions = true in dream's config to count them")
	}
	return append(notes, codexDaemonNote)
}
