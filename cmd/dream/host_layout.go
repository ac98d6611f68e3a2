package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/cmd/dream/internal/cmdline"
	"github.com/dreamkit/dream/internal/host"
)

// resolveLayout returns the host layout for this invocation: the named
// host's, or, with neither --host nor --memory-dir, the one agent that keeps
// memory for repo. Several candidates are a usage error naming them; none is
// not an error (the caller then asks for --memory-dir).
func (a *app) resolveLayout(name, mem, repo string) (*host.Layout, error) {
	if a.layout != nil {
		return a.layout, nil
	}
	l, err := cmdline.Layout(name, mem, repo, a.home(), a.lookupEnv)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if l != nil && a.loaded.Settings.CodexExecSessions {
		host.CountCodexExec(l)
	}
	a.layout = l
	return a.layout, nil
}

// printLayout writes the derived layout for `dream status`: each path and
// where it came from, what the session gate counts, the files and their
// roles, and what the layout assumed.
func printLayout(w io.Writer, l *host.Layout) {
	if l == nil {
		return
	}
	fmt.Fprintf(w, "host:         %s (%s)\n", l.Host, l.Notes)
	for _, s := range l.Sources {
		fmt.Fprintf(w, "  %-13s %s  [%s]\n", s.What+":", s.Path, s.From)
	}
	if l.SessionsCounted != "" {
		fmt.Fprintf(w, "  counts:      %s\n", l.SessionsCounted)
	}
	for _, e := range l.Elsewhere {
		fmt.Fprintf(w, "  NOT FOLLOWED: %s %s: %s\n", e.What, e.Path, e.From)
	}
	for _, f := range l.Files {
		access := "read-only"
		if f.Writable {
			access = "writable"
		}
		load := ""
		switch {
		case f.Loaded && f.OnDemand:
			load = ", read by the agent when needed"
		case f.Loaded && f.Limit != "":
			load = ", loaded into every session: " + f.Limit
		case f.Loaded:
			load = ", loaded into every session"
		}
		extra := ""
		if f.Section != "" {
			extra = " (only inside " + f.Section + ")"
		}
		fmt.Fprintf(w, "  file:        %s  %s, %s, %s%s%s\n", f.Path, f.Role, f.Format, access, load, extra)
	}
	if len(l.DriftRepos) > 0 {
		fmt.Fprintf(w, "  drift repos: %s\n", strings.Join(l.DriftRepos, ", "))
	}
	if l.NotLoaded != "" {
		fmt.Fprintf(w, "  NOT LOADED:  %s\n", l.NotLoaded)
	}
	if c := l.Consolidator; c != nil {
		state := "off"
		if c.Enabled {
			state = "on"
		}
		fmt.Fprintf(w, "  own dream:   %s %s: %s\n", c.Name, state, c.Detail)
	}
	for _, as := range l.Assumptions {
		fmt.Fprintf(w, "  assumes:     %s\n", as)
	}
}

// statusWithLayout is `dream status --json`: the report's fields, plus the
// derived layout under "layout" when a host was named or detected, and the
// index under "index".
type statusWithLayout struct {
	dream.StatusReport
	Layout *host.Layout `json:"layout,omitempty"`
	// Index is the memory's index and the rule it is counted by.
	Index *indexState `json:"index,omitempty"`
}

// layoutRepo is the repository drift checks use. For a global memory
// (Codex) that is the repository the memory itself names, not the
// directory dream happens to run in: when --repo was not given, the
// current directory is not one the memory names, and the memory names
// exactly one that exists, that one is taken.
func (a *app) layoutRepo(l *host.Layout, repo string) string {
	if len(l.DriftRepos) == 0 {
		return repo
	}
	if src := a.loaded.Source["repo"]; src != "" && src != "default" {
		return repo
	}
	for _, r := range l.DriftRepos {
		if rel, err := filepath.Rel(r, repo); err == nil && !strings.HasPrefix(rel, "..") {
			return repo
		}
	}
	if len(l.DriftRepos) == 1 {
		if info, err := os.Stat(l.DriftRepos[0]); err == nil && info.IsDir() {
			l.Sources = append(l.Sources, host.Source{What: "repo", Path: l.DriftRepos[0], From: "the only repository the memory names"})
			return l.DriftRepos[0]
		}
	}
	return repo
}
