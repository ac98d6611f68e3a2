package tools

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// fixture is a dream's world in a temp dir: a repository, the memory
// directory as the model sees it, its staging copy (what is really written),
// a sessions directory, and a directory outside all of them.
type fixture struct {
	base, repo, display, staging, sessions, outside string
	set                                             *Set
}

func newFixture(t testing.TB, limits Limits) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{
		base:     base,
		repo:     filepath.Join(base, "repo"),
		display:  filepath.Join(base, "memory"),
		staging:  filepath.Join(base, "staging"),
		sessions: filepath.Join(base, "sessions"),
		outside:  filepath.Join(base, "outside"),
	}
	for _, d := range []string{f.repo, f.display, f.staging, f.sessions, f.outside, filepath.Join(base, "memory-evil")} {
		mkdir(t, d)
	}
	set, err := NewSet(Env{MemoryDir: f.staging, MemoryDisplayDir: f.display, RepoDir: f.repo, SessionsDir: f.sessions, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	f.set = set
	return f
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tool returns the named tool of the fixture's set.
func (f *fixture) tool(t *testing.T, name string) Tool {
	t.Helper()
	for _, tl := range f.set.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// call validates and executes one call, as the agent loop does, and fails the
// test if Validate and Execute disagree about refusing it.
func (f *fixture) call(t *testing.T, name string, input any) (Result, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	tl := f.tool(t, name)
	verr := tl.Validate(raw)
	res, err := tl.Execute(context.Background(), raw)
	if verr != nil && err == nil {
		t.Fatalf("%s: Validate refused (%v) but Execute accepted", name, verr)
	}
	return res, err
}

// normalize replaces the temp dir in tool output so golden files are stable.
func (f *fixture) normalize(s string) string {
	return strings.ReplaceAll(s, f.base, "$BASE")
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		mkdir(t, filepath.Dir(path))
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s:\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// wantErr checks that err is non-nil and mentions each of the fragments.
func wantErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected an error mentioning %q", fragments)
	}
	for _, fr := range fragments {
		if !strings.Contains(err.Error(), fr) {
			t.Errorf("error %q should mention %q", err, fr)
		}
	}
}
