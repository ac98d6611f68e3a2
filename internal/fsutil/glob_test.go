package fsutil

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A dir whose own name is a glob pattern is a dir, not a pattern.
func TestGlobTakesTheDirAsItIs(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "st[1]*")
	decoy := filepath.Join(base, "st1x")
	for _, d := range []string{dir, decoy} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"pack-b.idx", "pack-a.idx", "pack-a.pack", "x.idx"} {
			if err := os.WriteFile(filepath.Join(d, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := Glob(dir, "pack-*.idx")
	want := []string{filepath.Join(dir, "pack-a.idx"), filepath.Join(dir, "pack-b.idx")}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Glob = %q, %v; want %q", got, err, want)
	}
	if got, err := Glob(filepath.Join(base, "none"), "*"); err != nil || got != nil {
		t.Fatalf("Glob of a missing dir = %q, %v", got, err)
	}
	if _, err := Glob(dir, "[bad"); err == nil {
		t.Fatal("a bad pattern was accepted")
	}
}
