package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusShowsDetectedLayout: with no --host, status finds the one
// agent that keeps memory for the repository and shows each path with
// where it came from, and the session count is the agent's own.
func TestStatusShowsDetectedLayout(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "claude")
	r := w.dream("status")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	for _, want := range []string{
		"host:         claude",
		"memory dir:   " + w.layout.MemoryDir,
		"[default projects/<sanitized git root>/memory]",
		"[detected: the only agent with memory for " + w.repo + "]",
		"counts:      top-level <uuid>.jsonl transcripts",
		"file:        MEMORY.md  index, markdown, writable, loaded into every session: first 200 lines, then 25000 UTF-16 code units; none of a file over 4194304 bytes (Claude Code 2.1.197)",
		"file:        **/*.md  document, markdown, writable, read by the agent when needed",
		"index:        MEMORY.md: 5 lines, 207 UTF-16 code units as Claude Code 2.1.197 counts it (it loads 200 lines and 25000 UTF-16 code units): within budget",
		"own dream:   autoDream on",
		"assumes:     settings given with claude --settings",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	r = w.dream("status", "--json")
	var s struct {
		SessionsTouchedSince int `json:"sessions_touched_since"`
		Layout               struct {
			Host    string `json:"host"`
			Sources []struct{ What, Path, From string }
		} `json:"layout"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	// Six top-level UUID transcripts; agent-*.jsonl and subagents/ are not
	// sessions to Claude Code.
	if s.Layout.Host != "claude" || len(s.Layout.Sources) == 0 || s.SessionsTouchedSince != 6 {
		t.Fatalf("status --json: %+v", s)
	}
}

// TestAmbiguousHost: two agents with memory for the repository is a usage
// error that names them and asks for --host.
func TestAmbiguousHost(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "claude")
	codebot := filepath.Join(w.home, ".codebot", "projects", strings.NewReplacer("/", "-", ".", "-").Replace(w.repo), "memory")
	os.MkdirAll(codebot, 0o755)
	os.WriteFile(filepath.Join(codebot, "MEMORY.md"), []byte("# Memory\n"), 0o644)
	r := w.dream("status")
	if r.code != exitUsage || !strings.Contains(r.stderr, "claude, codebot") || !strings.Contains(r.stderr, "--host") {
		t.Fatalf("%s", r)
	}
	if r := w.dream("status", "--host", "codebot"); r.code != 0 {
		t.Fatalf("--host settles it: %s", r)
	}
}

// TestCodexDriftRepo: Codex's memory is global, so drift checks use the
// repository its MEMORY.md names, not the directory dream runs in.
func TestCodexDriftRepo(t *testing.T) {
	t.Parallel()
	w := newHostWorld(t, "codex")
	mem := filepath.Join(w.layout.MemoryDir, "MEMORY.md")
	os.WriteFile(mem, []byte("---\nrollout_summary_files:\n  - a.md (success, cwd="+w.repo+", updated_at=2026-11-28T11:02:13Z)\ndescription: d\nkeywords: k\n---\n\n- x\n"), 0o644)
	elsewhere := filepath.Join(w.root, "elsewhere")
	os.MkdirAll(elsewhere, 0o755)
	w.repo = elsewhere // run from a directory the memory does not describe
	r := w.dream("status", "--host", "codex")
	if r.code != 0 || !strings.Contains(r.stdout, "repo:") || !strings.Contains(r.stdout, "[the only repository the memory names]") {
		t.Fatalf("%s", r)
	}
	r = w.dream("status", "--host", "codex", "--repo", elsewhere)
	if strings.Contains(r.stdout, "the only repository the memory names") {
		t.Fatalf("an explicit --repo was overridden: %s", r)
	}
}
