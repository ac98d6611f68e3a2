package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/offline"
)

// fixtureExpect is testdata/hosts/<host>/expect.json: what the agent itself
// would find in the fixture home.
type fixtureExpect struct {
	MemoryDir     string   `json:"memory_dir"`
	SessionsDir   string   `json:"sessions_dir"`
	Current       string   `json:"current"`
	AgentSessions []string `json:"agent_sessions"`
	Old           []string `json:"old"`
	GenericCount  int      `json:"generic_count"`
	DriftRepos    []string `json:"drift_repos"`
}

// fixtureSince is the last consolidation every fixture is dated against.
var fixtureSince = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// world is a fixture home copied into a temp dir, with a git repository
// for the project the agent worked in.
type fixtureWorld struct {
	root, home, repo string
	expect           fixtureExpect
}

// loadFixture copies testdata/hosts/<host>/home into a temp dir: the
// directory named PROJECT becomes the agent's project id for the temp
// repository, @REPO@ and @HOME@ in file contents become its paths, session
// files are dated after fixtureSince except the ones expect.json calls old.
func loadFixture(t *testing.T, hostName string) fixtureWorld {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "hosts", hostName)
	var w fixtureWorld
	data, err := os.ReadFile(filepath.Join(src, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &w.expect); err != nil {
		t.Fatal(err)
	}
	w.root = t.TempDir()
	w.home = filepath.Join(w.root, "home")
	w.repo = filepath.Join(w.root, "src", "shop-api")
	if err := os.MkdirAll(filepath.Join(w.repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	project := map[string]string{"claude": host.SanitizeProjectName(w.repo), "codebot": host.CodebotProjectID(w.repo)}[hostName]
	rename := func(rel string) string {
		return strings.ReplaceAll(rel, "PROJECT", project)
	}
	w.expect.MemoryDir = rename(w.expect.MemoryDir)
	w.expect.SessionsDir = rename(w.expect.SessionsDir)
	err = filepath.WalkDir(filepath.Join(src, "home"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(src, "home"), path)
		dst := filepath.Join(w.home, rename(rel))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte("@REPO@"), []byte(w.repo))
		b = bytes.ReplaceAll(b, []byte("@HOME@"), []byte(w.home))
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(w.root, filepath.FromSlash(w.expect.SessionsDir))
	old := map[string]bool{}
	for _, o := range w.expect.Old {
		old[filepath.FromSlash(o)] = true
	}
	err = filepath.WalkDir(w.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		mt := fixtureSince.Add(time.Hour)
		if rel, err := filepath.Rel(sessions, path); err == nil && old[rel] {
			mt = fixtureSince.Add(-30 * 24 * time.Hour)
		}
		return os.Chtimes(path, mt, mt)
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w fixtureWorld) env() func(string) (string, bool) {
	return func(string) (string, bool) { return "", false }
}

// TestFixtureHosts: on a home laid out as each agent writes it, the layout
// finds the memory dir, counts the sessions the agent itself counts, leaves
// the current session out by the id the agent gives its hooks, and after an
// offline dream every file the agent loads still parses in its format and
// every file the agent owns is byte for byte unchanged.
func TestFixtureHosts(t *testing.T) {
	for _, name := range []string{"claude", "codex", "gemini", "nanobot", "codebot"} {
		t.Run(name, func(t *testing.T) {
			w := loadFixture(t, name)
			l, err := host.Resolve(name, w.repo, w.home, w.env())
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(w.root, filepath.FromSlash(w.expect.MemoryDir)); l.MemoryDir != want {
				t.Fatalf("MemoryDir = %s\nwant        %s", l.MemoryDir, want)
			}
			if want := filepath.Join(w.root, filepath.FromSlash(w.expect.SessionsDir)); l.SessionsDir != want {
				t.Fatalf("SessionsDir = %s\nwant          %s", l.SessionsDir, want)
			}
			ctx := context.Background()
			got, err := gate.CountSessions(ctx, l.SessionsDir, fixtureSince, l.Sessions, w.expect.Current)
			if err != nil {
				t.Fatal(err)
			}
			generic, err := gate.CountSessionsTouchedSince(ctx, l.SessionsDir, fixtureSince, w.expect.Current)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: the agent counts %d sessions, dream counts %d (the generic *.jsonl rule would count %d)", name, len(w.expect.AgentSessions), got, generic)
			if got != len(w.expect.AgentSessions) {
				t.Errorf("dream counts %d sessions, the agent counts %d: %v", got, len(w.expect.AgentSessions), w.expect.AgentSessions)
			}
			if generic != w.expect.GenericCount {
				t.Errorf("generic rule counts %d, expect.json says %d", generic, w.expect.GenericCount)
			}
			withCurrent, err := gate.CountSessions(ctx, l.SessionsDir, fixtureSince, l.Sessions, "")
			if err != nil {
				t.Fatal(err)
			}
			if withCurrent != got+1 {
				t.Errorf("the current session %q is not what was left out: %d with it, %d without", w.expect.Current, withCurrent, got)
			}
			if w.expect.DriftRepos != nil && strings.Join(l.DriftRepos, ",") != strings.Join(w.expect.DriftRepos, ",") {
				t.Errorf("DriftRepos = %v, want %v", l.DriftRepos, w.expect.DriftRepos)
			}
			for _, p := range l.Writable() {
				if strings.Contains(p, "oauth") || strings.HasSuffix(filepath.Dir(p), ".gemini") && !strings.HasSuffix(p, "GEMINI.md") {
					t.Errorf("writable set holds %s", p)
				}
			}
			if errs := host.CheckFormats(l); len(errs) > 0 {
				t.Fatalf("fixture does not load before the dream: %v", errs)
			}
			before := snapshot(t, w.home)
			if _, err := offline.Run(ctx, offline.Options{MemoryDir: l.MemoryDir, RepoDir: w.repo, Now: fixtureSince.Add(2 * time.Hour), Layout: offline.LayoutFromHost(l)}); err != nil {
				t.Fatal(err)
			}
			after := snapshot(t, w.home)
			// What a commit does with the layout: every changed file passes
			// CheckEdit or is put back as it was.
			var landed, refused []string
			for _, p := range changedPaths(before, after) {
				rel, err := filepath.Rel(l.MemoryDir, p)
				if err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("the offline dream changed %s, outside the memory dir", p)
					continue
				}
				if err := l.CheckEdit(filepath.ToSlash(rel), before[p], after[p]); err != nil {
					refused = append(refused, err.Error())
					restore(t, p, before[p])
					continue
				}
				landed = append(landed, filepath.ToSlash(rel))
			}
			t.Logf("%s: the offline dream changed %v; refused by the layout: %v", name, landed, refused)
			for _, e := range host.CheckFormats(l) {
				t.Errorf("after an offline dream: %v", e)
			}
			if len(landed)+len(refused) == 0 {
				t.Errorf("the fixture's planted duplicates gave the offline dream nothing to do")
			}
		})
	}
}

// snapshot reads every file under root.
func snapshot(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func changedPaths(before, after map[string][]byte) []string {
	var out []string
	for p, b := range after {
		if a, ok := before[p]; !ok || !bytes.Equal(a, b) {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func restore(t *testing.T, path string, data []byte) {
	t.Helper()
	if data == nil {
		os.Remove(path)
		return
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
