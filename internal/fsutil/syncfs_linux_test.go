package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestKernelAtLeast(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    bool
	}{
		{"5.8.0", true},
		{"5.7.19", false},
		{"5.10.0-28-amd64", true},
		{"6.1.0-18-cloud-amd64", true},
		{"4.19.0", false},
		{"5.8-rc1", true},
		{"5.08", true},
		{"10.0", true},
		{"5", false},
		{"", false},
		{"x.y", false},
		{"5.x", false},
	} {
		if got := kernelAtLeast(tc.release, 5, 8); got != tc.want {
			t.Errorf("kernelAtLeast(%q, 5, 8) = %v, want %v", tc.release, got, tc.want)
		}
	}
}

func TestSyncFSAndSameFS(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "topics")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok, err := SyncFS(dir)
	if err != nil {
		t.Fatalf("SyncFS = %v", err)
	}
	if want := syncfsReportsErrors() && LocalKernelFS(dir); ok != want {
		t.Errorf("SyncFS ok = %v, want %v (syncfs reports errors: %v, local file system: %v)", ok, want, syncfsReportsErrors(), LocalKernelFS(dir))
	}
	// proc is no disk file system: SyncFS declines it and does nothing.
	if ok, err := SyncFS("/proc/self"); ok || err != nil {
		t.Errorf("SyncFS(/proc/self) = %v, %v; want it declined", ok, err)
	}
	// A missing dir is declined (the caller's fsyncs then report it), or
	// an error; never flushed.
	if ok, err := SyncFS(filepath.Join(dir, "missing")); ok && err == nil {
		t.Error("SyncFS of a missing dir reported it flushed")
	}
	if !SameFS(dir, []string{dir, sub}) {
		t.Error("SameFS: a subdirectory is not on its parent's file system")
	}
	if SameFS(dir, []string{filepath.Join(dir, "missing")}) {
		t.Error("SameFS: a missing directory counted as on the file system")
	}
	// /proc is its own file system wherever Linux runs.
	if SameFS(dir, []string{"/proc/self"}) {
		t.Error("SameFS: /proc counted as on a temporary dir's file system")
	}
}
