package demo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/offline"
)

var now = time.Date(2026, 1, 10, 9, 30, 0, 0, time.UTC)

func TestMaterializeTimes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	l, err := Materialize(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.RepoDir, "go.mod")); err != nil {
		t.Errorf("go.mod not restored: %v", err)
	}
	lock, err := os.Stat(filepath.Join(l.MemoryDir, ".consolidate-lock"))
	if err != nil {
		t.Fatal(err)
	}
	if age := now.Sub(lock.ModTime()); age < 24*time.Hour {
		t.Errorf("lock is %v old, time gate would stay closed", age)
	}
	sessions, _ := os.ReadDir(l.SessionsDir)
	if len(sessions) < 5 {
		t.Fatalf("%d transcripts, want at least 5 to open the session gate", len(sessions))
	}
	for _, s := range sessions {
		info, _ := s.Info()
		if !info.ModTime().After(lock.ModTime()) || info.ModTime().After(now) {
			t.Errorf("%s mtime %v not between the lock and now", s.Name(), info.ModTime())
		}
	}
	if _, err := Materialize(dir, now); err == nil {
		t.Error("materializing into a non-empty dir: want error")
	}
}

// TestDemoDefects proves the demo shows what dream is for: the offline
// engine fixes each planted mechanical defect and hands the drift to the
// model as leads.
func TestDemoDefects(t *testing.T) {
	l, err := Materialize(t.TempDir(), now)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr, err := offline.LoadTranscripts(ctx, l.SessionsDir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := offline.Run(ctx, offline.Options{MemoryDir: l.MemoryDir, RepoDir: l.RepoDir, Now: now, Layout: offline.LayoutFor("claude"), Provenance: tr})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, f := range rep.Fixes {
		kinds[f.Kind]++
	}
	// The dangling pointer is a lead since issue 8: a missing file may be
	// renamed, not gone, and only a model (or the user) can tell.
	for _, k := range []string{offline.KindDuplicate, offline.KindRelativeDate, offline.KindUnindexedTopic} {
		if kinds[k] != 1 {
			t.Errorf("%d %s fixes, want 1: %+v", kinds[k], k, rep.Fixes)
		}
	}
	storage, _ := os.ReadFile(filepath.Join(l.MemoryDir, "storage.md"))
	if !strings.Contains(string(storage), "On 2026-01-08 we added an index") {
		t.Errorf("yesterday not resolved against the transcript call that wrote it:\n%s", storage)
	}
	index, _ := os.ReadFile(filepath.Join(l.MemoryDir, "MEMORY.md"))
	if !strings.Contains(string(index), "deploy.md") || !strings.Contains(string(index), "(oncall.md)") {
		t.Errorf("index not repaired (oncall.md indexed, the dangling deploy.md left as a lead):\n%s", index)
	}
	missing, err := offline.MissingPinned([]string{"Releases are tagged vMAJOR.MINOR.PATCH from main."}, l.MemoryDir)
	if err != nil || len(missing) != 0 {
		t.Errorf("pinned fact lost: %v %v", missing, err)
	}

	leads, err := offline.FindLeads(ctx, l.MemoryDir, l.RepoDir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range leads.DriftSuspects {
		got[s.File+" "+s.Mention] = true
	}
	for _, want := range []string{"architecture.md internal/api/router.go", "architecture.md store.SaveLink()"} {
		if !got[want] {
			t.Errorf("drift suspect %q not reported: %+v", want, leads.DriftSuspects)
		}
	}
	if len(leads.DanglingPointers) != 1 || leads.DanglingPointers[0].Text != "deploy.md" {
		t.Errorf("dangling pointer lead: %+v", leads.DanglingPointers)
	}
	if len(leads.DriftSuspects) != 2 {
		t.Errorf("false drift suspects: %+v", leads.DriftSuspects)
	}
}
