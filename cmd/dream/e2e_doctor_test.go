package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateDoctor = flag.Bool("update-doctor", false, "rewrite testdata/doctor/*.golden")

// fakeKey is a made-up key: doctor must say one is set and never print it.
const fakeKey = "sk-ant-api03-not-a-real-key-0123456789"

// agentOnPath puts first on w's PATH a claude that answers --version with
// version, as the real one does (the conformance suite runs the real one).
func agentOnPath(t *testing.T, w *hostWorld, version string) {
	t.Helper()
	bin := filepath.Join(w.root, "agent-bin")
	mustMkdir(t, bin)
	writeExecutable(t, filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '"+version+"'\n"))
	for i, e := range w.env {
		if strings.HasPrefix(e, "PATH=") {
			w.env[i] = "PATH=" + bin + string(os.PathListSeparator) + strings.TrimPrefix(e, "PATH=")
		}
	}
}

// TestDoctorGolden: `dream doctor` on a healthy and on a broken Claude Code
// setup, against golden files (paths shown as $ROOT).
func TestDoctorGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(w *hostWorld)
		code  int
	}{
		{"healthy", func(w *hostWorld) {
			if r := w.dream("init", "claude"); r.code != 0 {
				t.Fatalf("init: %s", r)
			}
			w.env = append(w.env, "ANTHROPIC_API_KEY="+fakeKey)
			agentOnPath(t, w, "2.1.197 (Claude Code)")
			lock := filepath.Join(w.layout.MemoryDir, ".consolidate-lock")
			os.WriteFile(lock, nil, 0o644)
			at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
			os.Chtimes(lock, at, at)
		}, 0},
		{"broken", func(w *hostWorld) {
			// No hook; a topic file whose frontmatter never closes; a lock
			// left by a dead dream; a state dir that is a file; Claude
			// Code's own autoDream on.
			os.WriteFile(filepath.Join(w.layout.MemoryDir, "deploy.md"), []byte("---\nname: deploy\ndescription: staging then prod\n\n1. make deploy\n"), 0o644)
			lock := filepath.Join(w.layout.MemoryDir, ".consolidate-lock")
			os.WriteFile(lock, []byte("4194000"), 0o644)
			at := time.Now().Add(-50 * time.Hour)
			os.Chtimes(lock, at, at)
			state := filepath.Join(w.root, "state-is-a-file")
			os.WriteFile(state, []byte("x"), 0o644)
			w.env = append(w.env, "DREAM_STATE_DIR="+state)
			os.MkdirAll(filepath.Join(w.home, ".claude"), 0o755)
			os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte("{\n  \"autoDreamEnabled\": true\n}\n"), 0o644)
			agentOnPath(t, w, "2.9.0 (Claude Code)")
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newHostWorld(t, "claude")
			tc.setup(w)
			r := w.dream("doctor")
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r)
			}
			if strings.Contains(r.stdout+r.stderr, fakeKey) {
				t.Fatal("doctor printed the key")
			}
			got := strings.ReplaceAll(r.stdout, w.layout.SessionsDir, "$PROJECT")
			got = strings.ReplaceAll(got, w.root, "$ROOT")
			got = strings.ReplaceAll(got, binPath, "$DREAM")
			golden := filepath.Join("testdata", "doctor", tc.name+".golden")
			if *updateDoctor {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-doctor)", err)
			}
			if got != string(want) {
				t.Errorf("doctor output differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}
