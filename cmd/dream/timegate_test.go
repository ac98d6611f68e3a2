package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/cmd/dream/internal/early"
	"github.com/dreamkit/dream/internal/journal"
	"github.com/dreamkit/dream/internal/lock"
	"github.com/dreamkit/dream/settings"
)

// TestTimeGateClosedAgreesWithMaybe holds the early start's closed-gate
// answer to the funnel it stands in for: wherever early.TimeGateClosed says closed, a Dreamer
// built on the same directories stops at the time gate with the same words;
// where a dead dream or a left-over journal would be recovered (which
// reopens the gate), the shortcut stands aside.
func TestTimeGateClosedAgreesWithMaybe(t *testing.T) {
	t.Parallel()
	// The real clock: the lock judges a holder live against it.
	now := time.Now()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1) to make a dead pid:", err)
	}
	tests := []struct {
		name   string
		setup  func(t *testing.T, mem, state string)
		enable bool
		want   bool // early.TimeGateClosed's answer
	}{
		{"consolidated an hour ago", func(t *testing.T, mem, _ string) { writeLock(t, mem, "", now.Add(-time.Hour)) }, true, true},
		{"empty body, 23.9h ago", func(t *testing.T, mem, _ string) { writeLock(t, mem, "", now.Add(-23*time.Hour-54*time.Minute)) }, true, true},
		{"a day ago: open", func(t *testing.T, mem, _ string) { writeLock(t, mem, "", now.Add(-25*time.Hour)) }, true, false},
		{"never consolidated", func(t *testing.T, mem, _ string) {}, true, false},
		{"mtime in the future: clock skew opens", func(t *testing.T, mem, _ string) { writeLock(t, mem, "", now.Add(2*time.Hour)) }, true, false},
		{"held by a dead dream", func(t *testing.T, mem, _ string) {
			writeLock(t, mem, strconv.Itoa(dead.Process.Pid), now.Add(-time.Minute))
		}, true, false},
		{"held by this live process", func(t *testing.T, mem, _ string) {
			writeLock(t, mem, strconv.Itoa(os.Getpid()), now.Add(-time.Minute))
		}, true, true},
		{"a journal left over", func(t *testing.T, mem, state string) {
			writeLock(t, mem, "", now.Add(-time.Hour))
			key, err := journal.MemKey(mem)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(state, "journal", key)
			if err := os.MkdirAll(filepath.Join(dir, "d-interrupted"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, true, false},
		{"disabled", func(t *testing.T, mem, _ string) { writeLock(t, mem, "", now.Add(-time.Hour)) }, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem, state := t.TempDir(), t.TempDir()
			tc.setup(t, mem, state)
			s := settings.Settings{Dream: settings.DreamDefaults()}
			s.StateDir, s.Enabled = state, tc.enable
			detail, closed := early.TimeGateClosed(s, mem, now)
			if closed != tc.want {
				t.Fatalf("early.TimeGateClosed = %v (%q), want %v", closed, detail, tc.want)
			}
			if !closed {
				return
			}
			d, err := dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: s.Dream, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			res, err := d.MaybeRun(context.Background())
			if err != nil || res.Gate != dream.GateTime || res.Detail != detail {
				t.Errorf("MaybeRun = %+v, %v; the shortcut said the time gate is closed: %q", res, err, detail)
			}
		})
	}
}

// TestTimeGateClosedLeavesTheEtcdLockToTheCluster: with the etcd lock the
// last consolidation is the cluster's; a fresh local lock file closes
// nothing, and the early start hands `maybe` and the hook over to the
// full command, which asks the cluster.
func TestTimeGateClosedLeavesTheEtcdLockToTheCluster(t *testing.T) {
	now := time.Now()
	mem, state := t.TempDir(), t.TempDir()
	writeLock(t, mem, "", now.Add(-time.Hour))
	s := settings.Settings{Dream: settings.DreamDefaults()}
	s.StateDir = state
	if _, closed := early.TimeGateClosed(s, mem, now); !closed {
		t.Fatal("file lock consolidated an hour ago: want closed")
	}
	s.Lock = settings.LockEtcd
	if detail, closed := early.TimeGateClosed(s, mem, now); closed {
		t.Fatalf("etcd lock: closed (%q) by the local file", detail)
	}
}

// writeLock writes the consolidation lock with body and dates it.
func writeLock(t *testing.T, mem, body string, mtime time.Time) {
	t.Helper()
	p := filepath.Join(mem, lock.FileName)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}
