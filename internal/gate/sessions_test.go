package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// since is the fixed "last consolidation" time every test tree is dated
// against; the nanoseconds make sure comparisons are not second-rounded.
var since = time.Date(2026, 3, 14, 12, 0, 0, 500_000_000, time.UTC)

// file is one entry of a test tree: a path relative to the tree root and the
// offset of its mtime from since.
type file struct {
	path string
	age  time.Duration
}

func newer(path string) file { return file{path, time.Hour} }
func older(path string) file { return file{path, -time.Hour} }

// buildTree writes files into a fresh temp dir and dates them.
func buildTree(t testing.TB, files []file) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := since.Add(f.age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCountSessionsTouchedSince(t *testing.T) {
	tests := []struct {
		name    string
		files   []file
		links   map[string]string // link path → target, relative to root
		exclude string
		want    int
	}{
		{
			name:  "empty dir",
			files: nil,
			want:  0,
		},
		{
			name:  "newer counted, older not",
			files: []file{newer("a.jsonl"), newer("b.jsonl"), older("c.jsonl")},
			want:  2,
		},
		{
			name:  "exactly since is not counted",
			files: []file{{"a.jsonl", 0}, {"b.jsonl", time.Nanosecond}},
			want:  1,
		},
		{
			name:  "non-jsonl ignored",
			files: []file{newer("a.json"), newer("b.jsonl.bak"), newer("notes.md"), newer("c.JSONL"), newer("d.jsonl")},
			want:  1,
		},
		{
			name:    "current session excluded by bare id",
			files:   []file{newer("abc-123.jsonl"), newer("other.jsonl")},
			exclude: "abc-123",
			want:    1,
		},
		{
			name:    "current session excluded with underscore prefix",
			files:   []file{newer("telegram_abc-123.jsonl"), newer("other.jsonl")},
			exclude: "abc-123",
			want:    1,
		},
		{
			name:    "codex rollout excluded by trailing id",
			files:   []file{newer("2026/03/14/rollout-2026-03-14T10-00-00-abc-123.jsonl"), newer("2026/03/14/rollout-2026-03-14T11-00-00-def-456.jsonl")},
			exclude: "abc-123",
			want:    1,
		},
		{
			name:    "id as a mere suffix of another word is not excluded",
			files:   []file{newer("xabc-123.jsonl"), newer("abc-123x.jsonl")},
			exclude: "abc-123",
			want:    2,
		},
		{
			name:    "empty exclude excludes nothing",
			files:   []file{newer("a.jsonl"), newer("_.jsonl")},
			exclude: "",
			want:    2,
		},
		{
			name:  "nested dirs",
			files: []file{newer("p1/s1.jsonl"), newer("p2/s2.jsonl"), newer("sessions/2026/03/14/r.jsonl"), older("p1/old.jsonl")},
			want:  3,
		},
		{
			name:  "subagents skipped at any depth",
			files: []file{newer("p/s1.jsonl"), newer("p/s1/subagents/agent-a.jsonl"), newer("subagents/agent-b.jsonl"), newer("p/s1/tool-results/x.jsonl")},
			want:  2,
		},
		{
			name:  "directory named like a transcript is entered, not counted",
			files: []file{newer("weird.jsonl/inner.jsonl")},
			want:  1,
		},
		{
			name:  "symlink loop terminates and links are not followed",
			files: []file{newer("p/a.jsonl"), newer("elsewhere/b.jsonl")},
			links: map[string]string{"p/loop": "..", "p/self": ".", "p/b.jsonl": "../elsewhere/b.jsonl", "p/ext": "../elsewhere"},
			want:  2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := buildTree(t, tc.files)
			for link, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
					t.Fatal(err)
				}
			}
			for _, fast := range strategies() {
				for _, workers := range []int{1, scanWorkers} {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					got, err := countSessions(ctx, root, scanner{since: since, exclude: tc.exclude, fast: fast}, workers)
					cancel()
					if err != nil {
						t.Fatalf("fast=%v workers=%d: unexpected error: %v", fast, workers, err)
					}
					if got != tc.want {
						t.Errorf("fast=%v workers=%d: got %d, want %d", fast, workers, got, tc.want)
					}
				}
			}
		})
	}
}

// strategies lists the stat strategies this platform can run, so both are
// held to the same table.
func strategies() []bool {
	if fastStatAvailable {
		return []bool{true, false}
	}
	return []bool{false}
}

func TestCountSessionsBadRoot(t *testing.T) {
	tmp := t.TempDir()
	plain := filepath.Join(tmp, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		wantErr string // substring; "" means nil error
	}{
		{"missing dir counts zero", filepath.Join(tmp, "nope"), ""},
		{"missing parent counts zero", filepath.Join(tmp, "nope", "deeper"), ""},
		{"empty path counts zero", "", ""},
		{"a file is an error", plain, "not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CountSessionsTouchedSince(context.Background(), tc.dir, since, "")
			if got != 0 {
				t.Errorf("count = %d, want 0", got)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.dir):
				t.Errorf("error %q does not name the dir", err)
			}
		})
	}
}

func TestCountSessionsSymlinkedRootIsFollowed(t *testing.T) {
	real := buildTree(t, []file{newer("a.jsonl"), newer("b/c.jsonl")})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	got, err := CountSessionsTouchedSince(context.Background(), link, since, "")
	if err != nil || got != 2 {
		t.Fatalf("got %d, %v; want 2, nil", got, err)
	}
}

// canBypassPermissions reports whether this process ignores directory
// permissions (root, or CAP_DAC_OVERRIDE), by trying to list a 000 dir.
func canBypassPermissions(t *testing.T) bool {
	d := t.TempDir()
	probe := filepath.Join(d, "probe")
	if err := os.Mkdir(probe, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(probe, 0o755)
	_, err := os.ReadDir(probe)
	return err == nil
}

func TestCountSessionsUnreadable(t *testing.T) {
	if canBypassPermissions(t) {
		t.Skip("running with permission bypass (root): chmod 000 does not deny reads")
	}
	root := buildTree(t, []file{newer("ok/a.jsonl"), newer("locked/b.jsonl")})
	locked := filepath.Join(root, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })

	t.Run("unreadable subdir skipped", func(t *testing.T) {
		got, err := CountSessionsTouchedSince(context.Background(), root, since, "")
		if err != nil || got != 1 {
			t.Fatalf("got %d, %v; want 1, nil", got, err)
		}
	})
	t.Run("unreadable root is an error", func(t *testing.T) {
		got, err := CountSessionsTouchedSince(context.Background(), locked, since, "")
		if got != 0 || err == nil || !strings.Contains(err.Error(), locked) {
			t.Fatalf("got %d, %v; want 0 and an error naming %s", got, err, locked)
		}
	})
}

func TestCountSessionsHonoursContext(t *testing.T) {
	root := buildTree(t, []file{newer("a/x.jsonl"), newer("b/y.jsonl")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := CountSessionsTouchedSince(ctx, root, since, "")
	if got != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %d, %v; want 0, context.Canceled", got, err)
	}
}

// cancelAfter is a context that reports itself cancelled after its Err has
// been asked a given number of times, to cancel a walk midway
// deterministically.
type cancelAfter struct {
	context.Context
	mu   sync.Mutex
	left int
}

func (c *cancelAfter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left <= 0 {
		return context.Canceled
	}
	c.left--
	return nil
}

func TestWalkStopsWhenCancelledMidway(t *testing.T) {
	var files []file
	for i := 0; i < 40; i++ {
		files = append(files, newer(fmt.Sprintf("d%02d/e/s.jsonl", i)))
	}
	root := buildTree(t, files)
	for _, workers := range []int{1, scanWorkers} {
		ctx := &cancelAfter{Context: context.Background(), left: 5}
		s := scanner{since: since, fast: fastStatAvailable}
		n, err := countSessions(ctx, root, s, workers)
		if n != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("workers=%d: got %d, %v; want 0, context.Canceled", workers, n, err)
		}
		if ctx.left != 0 {
			t.Errorf("workers=%d: walk finished before the cancellation", workers)
		}
	}
}

func TestIsTranscript(t *testing.T) {
	tests := []struct {
		name, exclude string
		want          bool
	}{
		{"s.jsonl", "", true},
		{".jsonl", "", true},
		{"s.json", "", false},
		{"s", "s", false},
		{"s.jsonl", "s", false},
		{"a_s.jsonl", "s", false},
		{"a-s.jsonl", "s", false},
		{"as.jsonl", "s", true},
		{"s.jsonl", "t", true},
		{"a_s.jsonl.jsonl", "s", true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%s", tc.name, tc.exclude), func(t *testing.T) {
			if got := isTranscript(tc.name, tc.exclude); got != tc.want {
				t.Errorf("isTranscript(%q, %q) = %v, want %v", tc.name, tc.exclude, got, tc.want)
			}
		})
	}
}
