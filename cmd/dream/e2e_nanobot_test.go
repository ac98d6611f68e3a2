package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNanobotDreamTouchesOnlyItsMemory: a dream on nanobot's workspace
// (with nanobot's own git store in it) changes only the writable memory
// files; history.jsonl, the cursors, AGENTS.md and .git stay byte for byte.
func TestNanobotDreamTouchesOnlyItsMemory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	w := newHostWorld(t, "nanobot")
	copyTree(t, filepath.Join(fixtureSrc, "nanobot", "home"), w.home, w)
	ws := filepath.Join(w.home, ".nanobot", "workspace")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=n@b", "-c", "user.name=nanobot", "commit", "-qm", "nanobot memory"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	keep := func(rel string) bool {
		return strings.HasPrefix(rel, "memory/MEMORY.md") || rel == "SOUL.md" || rel == "USER.md" || rel == ".consolidate-lock"
	}
	before := treeHash(t, ws, keep)
	beforeMem := snapshot(t, ws)
	r := w.dream("run", "--host", "nanobot")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	if after := treeHash(t, ws, keep); after != before {
		t.Fatalf("the dream changed files outside nanobot's writable set:\nbefore\n%s\nafter\n%s", before, after)
	}
	afterMem := snapshot(t, ws)
	changed := 0
	for _, f := range []string{"memory/MEMORY.md", "SOUL.md", "USER.md"} {
		if beforeMem[f] != afterMem[f] {
			changed++
		}
	}
	if changed == 0 {
		t.Fatalf("the planted duplicates were not consolidated: %s", r)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "HEAD")); err != nil {
		t.Fatal(err)
	}
}
