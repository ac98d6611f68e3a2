package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/cmd/dream/internal/gatestamp"
)

// TestGateStampAnswersUntilAnInputChanges: the binary's second `dream
// maybe` with nothing changed answers from the gate stamp the first one
// recorded, after a couple of dozen initialisers instead of about 145, with
// the full command's words; a changed config file, environment or lock
// makes it decide again, and say what the full command says.
func TestGateStampAnswersUntilAnInputChanges(t *testing.T) {
	w := newWorld(t)
	home := filepath.Join(w.root, "home")
	for _, d := range []string{filepath.Join(home, ".config"), filepath.Join(home, ".local", "state"), filepath.Join(w.state, "journal")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeLock(t, w.mem, "", time.Now().Add(-2*time.Hour))
	time.Sleep(gatestamp.RacyMargin + 100*time.Millisecond) // files younger than this are not recorded

	args := []string{"maybe", "--memory-dir", w.mem, "--sessions-dir", w.sessions, "--state-dir", w.state, "--repo", w.repo}
	run := func(extraEnv ...string) (stdout string, inits int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, binPath, args...)
		env := append(append(append([]string{}, w.env...), "GODEBUG=inittrace=1"), extraEnv...)
		cmd.Env = env
		cmd.Dir = w.root
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("dream %v: %v\n%s", args, err, errb.String())
		}
		// What the full command, in this process, prints for the same.
		lookup := func(k string) (string, bool) {
			for i := len(env) - 1; i >= 0; i-- {
				if name, v, ok := strings.Cut(env[i], "="); ok && name == k {
					return v, true
				}
			}
			return "", false
		}
		var full, fullErr bytes.Buffer
		if code := Main(context.Background(), args, strings.NewReader(""), &full, &fullErr, lookup); code != 0 {
			t.Fatalf("Main: exit %d\n%s", code, fullErr.String())
		}
		if out.String() != full.String() {
			t.Fatalf("the binary printed\n%s\nthe full command\n%s", out.String(), full.String())
		}
		return out.String(), strings.Count("\n"+errb.String(), "\ninit ")
	}
	const light = 40 // the stamp answers after about 24 initialisers, the early start after about 145

	out, inits := run()
	if !strings.Contains(out, "need 24h") || inits <= light {
		t.Fatalf("first run: %q after %d initialisers; want the early start's decision", out, inits)
	}
	if entries, err := os.ReadDir(filepath.Join(home, ".local", "state", "dream", "gate")); err != nil || len(entries) != 1 {
		t.Fatalf("gate dir: %v (%v), want one record", entries, err)
	}
	if out2, inits := run(); out2 != out || inits > light {
		t.Fatalf("second run: %q after %d initialisers; want the stamp's answer", out2, inits)
	}

	// The user's config file appears: decided again, with its min_hours.
	w.write(filepath.Join(home, ".config", "dream"), "config.toml", "min_hours = 30\n")
	if out, inits := run(); !strings.Contains(out, "need 30h") || inits <= light {
		t.Fatalf("after the config changed: %q after %d initialisers", out, inits)
	}
	// The environment sets it: decided again.
	if out, inits := run("DREAM_MIN_HOURS=40"); !strings.Contains(out, "need 40h") || inits <= light {
		t.Fatalf("with DREAM_MIN_HOURS: %q after %d initialisers", out, inits)
	}
	// A dream consolidated an hour ago: decided again, from the new mtime.
	writeLock(t, w.mem, "", time.Now().Add(-time.Hour))
	if out, inits := run(); !strings.Contains(out, ": 1.0h since the last consolidation, need 30h") || inits <= light {
		t.Fatalf("after a dream: %q after %d initialisers", out, inits)
	}
	// A project file appears in the repo: the full command, and its
	// warning, whatever was recorded.
	time.Sleep(gatestamp.RacyMargin + 100*time.Millisecond)
	if _, inits := run(); inits <= light {
		t.Fatalf("deciding after the margin: %d initialisers", inits)
	}
	if _, inits := run(); inits > light {
		t.Fatalf("the record after the margin was not used: %d initialisers", inits)
	}
	w.write(w.repo, ".dream.toml", "min_hours = 1\n")
	if out, inits := run(); strings.Contains(out, "time gate is closed") && inits <= light {
		t.Fatalf("with a project file: %q after %d initialisers", out, inits)
	}
}
