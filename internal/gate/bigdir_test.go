package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCountSessionsBigFlatDir holds the parallel stat of one big directory
// (statPool splits it across the cores while it is listed) to the same
// count as a serial scan would give, with every kind of entry the scan must
// skip mixed in, and with a Rule whose Keep and Alias run on the stat
// goroutines.
func TestCountSessionsBigFlatDir(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // split even on one core
	const n = 6 * statChunk
	var files []file
	want, wantKept := 0, 0
	for i := range n {
		name := fmt.Sprintf("%08x-aaaa-4bbb-8ccc-%012d.jsonl", i, i)
		switch {
		case i%7 == 0:
			files = append(files, older(name))
		case i == 4242:
			files = append(files, newer(name)) // the current session
		default:
			files = append(files, newer(name))
			want++
			if i%2 == 0 {
				wantKept++
			}
		}
	}
	files = append(files, newer("notes.md"), newer("index.json"), newer("subagents/agent-1.jsonl"), newer("nested/deeper.jsonl"))
	want++ // nested/deeper.jsonl
	root := buildTree(t, files)
	if err := os.Symlink(filepath.Join(root, "notes.md"), filepath.Join(root, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	current := fmt.Sprintf("%08x-aaaa-4bbb-8ccc-%012d", 4242, 4242)
	for _, fast := range strategies() {
		for _, workers := range []int{1, scanWorkers} {
			got, err := countSessions(context.Background(), root, scanner{since: since, exclude: current, fast: fast}, workers)
			if err != nil || got != want {
				t.Errorf("fast=%v workers=%d: got %d, %v; want %d, nil", fast, workers, got, err, want)
			}
		}
	}

	// Keep sees only even-numbered files (their first line says so), and
	// Alias hides the file an ".old" twin would have superseded: none here,
	// so only Keep changes the count.
	for i := range n {
		if i%2 == 0 {
			p := filepath.Join(root, fmt.Sprintf("%08x-aaaa-4bbb-8ccc-%012d.jsonl", i, i))
			mt := since.Add(time.Hour)
			if i%7 == 0 {
				mt = since.Add(-time.Hour)
			}
			if err := os.WriteFile(p, []byte(`{"keep":true}`+"\n{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mt, mt); err != nil {
				t.Fatal(err)
			}
		}
	}
	rule := &Rule{
		Match:   func(depth int, name string) (string, bool) { return strings.CutSuffix(name, ".jsonl") },
		Descend: func(depth int, name string) bool { return false },
		Keep:    func(line []byte) bool { return string(line) == `{"keep":true}` },
		Alias:   func(name string) string { return name + ".old" },
	}
	got, err := CountSessions(context.Background(), root, since, rule, current)
	if err != nil || got != wantKept {
		t.Errorf("with Keep: got %d, %v; want %d, nil", got, err, wantKept)
	}
}

// TestListDirMatchesReadDir checks the scan's own directory listing against
// os.ReadDir on names that stress the dirent parsing: the longest name a
// filesystem allows, multi-byte UTF-8, dots, and enough entries to need
// several reads.
func TestListDirMatchesReadDir(t *testing.T) {
	dir := t.TempDir()
	names := []string{strings.Repeat("x", 249) + ".jsonl", "记忆-会话.jsonl", ".hidden.jsonl", "...", "a b.jsonl", "-"}
	for i := range 3000 {
		names = append(names, fmt.Sprintf("rollout-%d.jsonl", i))
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"sub", "subagents"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		want = append(want, fmt.Sprintf("%s %d", e.Name(), typeOfMode(e.Type())))
	}
	d, err := openDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var got []string
	if err := listDir(d, func(name string, typ entryType) {
		if typ == typeUnknown {
			typ = lstatType(d, name)
		}
		got = append(got, fmt.Sprintf("%s %d", name, typ))
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("listDir and os.ReadDir disagree: %d against %d entries", len(got), len(want))
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("first difference at %d: %q against %q", i, got[i], want[i])
			}
		}
	}
}
