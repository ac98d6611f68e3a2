package checkup

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// gitRepo is a repository whose commits have fixed dates, authors and so
// ids, so that a report on it is the same on every run.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	r := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "app")}
	r.git("", "init", "-q", "-b", "main", r.dir)
	return r
}

func (r *gitRepo) git(date string, args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	if args[0] != "init" {
		cmd.Dir = r.dir
	}
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_EMAIL=ann@example.org", "GIT_COMMITTER_NAME=Ann",
		"GIT_COMMITTER_EMAIL=ann@example.org", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (r *gitRepo) write(files map[string]string) {
	r.t.Helper()
	for name, body := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// commit writes files and commits everything at date (RFC 3339).
func (r *gitRepo) commit(date, msg string, files map[string]string) {
	r.t.Helper()
	r.write(files)
	r.git(date, "add", "-A")
	r.git(date, "commit", "-q", "-m", msg)
}

const goMod = `module example.com/app

go 1.26

require (
	example.com/a v1.2.0
	example.com/c v1.0.0
	example.com/d v1.1.0
)

require example.com/b v0.3.1 // indirect

require example.com/e v2.0.0+incompatible // indirect

replace example.com/d => ../d
`

const goSumFile = `example.com/a v1.2.0 h1:aaa=
example.com/a v1.2.0/go.mod h1:aab=
example.com/a v1.4.1/go.mod h1:aac=
example.com/b v0.3.1 h1:bbb=
example.com/b v0.3.1/go.mod h1:bbc=
example.com/b v0.4.0-rc.1/go.mod h1:bbd=
example.com/e v2.0.0+incompatible h1:eee=
`

const packageJSON = `{
  "name": "app",
  "dependencies": {"left-pad": "^1.2.0", "chalk": "~2.0.0", "missing": "^3.0.0", "local": "file:../local"},
  "devDependencies": {"mocha": ">=9 <11"}
}`

const packageLock = `{
  "name": "app", "lockfileVersion": 3,
  "packages": {
    "": {"name": "app"},
    "node_modules/left-pad": {"version": "1.3.0"},
    "node_modules/chalk": {"version": "2.1.0"},
    "node_modules/mocha": {"version": "10.2.0"},
    "node_modules/local": {"version": "0.0.1"}
  }
}`

// checkedRepo is a repository with a finding of every kind.
func checkedRepo(t *testing.T) (*gitRepo, Options) {
	r := newRepo(t)
	r.commit("2026-01-01T10:00:00Z", "start", map[string]string{
		"go.mod": goMod, "go.sum": goSumFile, "package.json": packageJSON, "package-lock.json": packageLock,
		"a.go":                  "package app\n\n// TODO: split this file\nfunc A() {}\n",
		"vendor/x/x.go":         "package x // TODO: vendored, not ours\n",
		".dream/health/old.md":  "- TODO counts quoted by an old report\n",
		"notes.txt":             "TODOS and XXXL are not markers; FIXME_LATER neither\n",
		"testdata/fix/go.mod":   "module fixture\n",
		"node_modules/a/a.js":   "// FIXME installed, not ours\n",
		".golangci.yml":         "linters:\n  enable: [errcheck]\n",
		"internal/deep/deep.go": "package deep\n",
	})
	r.commit("2026-02-01T10:00:00Z", "b", map[string]string{"b.go": "package app\n\n// FIXME: races\n// XXX and TODO on one line\n"})
	r.commit("2026-02-20T10:00:00Z", "lint: enable govet", map[string]string{".golangci.yml": "linters:\n  enable: [errcheck, govet]\n"})
	r.commit("2026-03-02T10:00:00Z", "ruff", map[string]string{"py/pyproject.toml": "[project]\nname = \"x\"\n\n[tool.ruff]\nline-length = 100\n"})
	r.commit("2026-03-03T10:00:00Z", "unrelated pyproject", map[string]string{"other/pyproject.toml": "[project]\nname = \"y\"\n"})
	// What is installed, untracked as node_modules is.
	r.write(map[string]string{"node_modules/left-pad/package.json": `{"version": "1.2.9"}`, "node_modules/chalk/package.json": `{"version": "2.1.0"}`})
	cache := t.TempDir()
	for _, f := range []string{"example.com/b/@v/v0.5.0.info", "example.com/b/@v/v0.3.1.info", "example.com/a/@v/list"} {
		p := filepath.Join(cache, "cache", "download", filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		body := "{}"
		if strings.HasSuffix(f, "list") {
			body = "v1.2.0\nv1.3.0\nv1.5.0-beta.1\n"
		}
		os.WriteFile(p, []byte(body), 0o644)
	}
	return r, Options{Repo: r.dir, Since: time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC), Now: time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC),
		Exclude: ".dream/health", ModCache: cache}
}

// TestReport pins the whole report on a repository with a finding of
// every kind (testdata/report.golden; -update rewrites it).
func TestReport(t *testing.T) {
	_, o := checkedRepo(t)
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"go_behind": 2, "go_sum_missing": 1, "npm_out_of_range": 1, "npm_not_locked": 1, "npm_installed_differs": 1,
		"todo": 2, "fixme": 1, "xxx": 1, "lint_changes": 2}
	for k, n := range want {
		if res.Found[k] != n {
			t.Errorf("found[%s] = %d, want %d (all: %v)", k, res.Found[k], n, res.Found)
		}
	}
	if len(res.Found) != len(want) {
		t.Errorf("found = %v, want exactly %v", res.Found, want)
	}
	golden := filepath.Join("testdata", "report.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(res.Markdown), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if res.Markdown != string(b) {
		t.Errorf("the report differs from %s (go test -run TestReport -update rewrites it):\n%s", golden, res.Markdown)
	}
}

// TestFirstReport: with no last report, lint changes are the last ten and
// none of them counts as a change since.
func TestFirstReport(t *testing.T) {
	_, o := checkedRepo(t)
	o.Since = time.Time{}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Found["lint_changes"] != 0 || !strings.Contains(res.Markdown, "First report: the last changes to them") ||
		!strings.Contains(res.Markdown, "lint: enable govet") || !strings.Contains(res.Markdown, "(first report)") {
		t.Errorf("first report:\n%s", res.Markdown)
	}
}

func TestNotAGitRepository(t *testing.T) {
	if _, err := Run(context.Background(), Options{Repo: t.TempDir(), Now: time.Now()}); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Fatalf("err = %v", err)
	}
}

func TestSatisfies(t *testing.T) {
	for _, tc := range []struct {
		rng, v    string
		ok, known bool
	}{
		{"^1.2.0", "1.3.0", true, true},
		{"^1.2.0", "2.0.0", false, true},
		{"^1.2.0", "1.1.9", false, true},
		{"^0.2.3", "0.2.9", true, true},
		{"^0.2.3", "0.3.0", false, true},
		{"^0.0.3", "0.0.4", false, true},
		{"~1.2.3", "1.2.9", true, true},
		{"~1.2.3", "1.3.0", false, true},
		{"~1", "1.9.0", true, true},
		{"1.2.x", "1.2.7", true, true},
		{"1.x", "2.0.0", false, true},
		{"1.2.3", "1.2.3", true, true},
		{"=1.2.3", "1.2.4", false, true},
		{">=9 <11", "10.2.0", true, true},
		{">=9 <11", "11.0.0", false, true},
		{">1.2", "1.2.9", false, true},
		{">1.2", "1.3.0", true, true},
		{"<=1.2", "1.2.9", true, true},
		{"1.0.0 - 2.0.0", "2.0.0", true, true},
		{"1.0.0 - 2.0.0", "2.0.1", false, true},
		{"^1.0.0 || ^2.0.0", "2.5.0", true, true},
		{"^1.2.0", "1.3.0-beta.1", false, true},
		{"^1.3.0-beta.0", "1.3.0-beta.1", true, true},
		{"*", "9.9.9", true, true},
		{"", "0.0.1", true, true},
		{"latest", "1.0.0", true, true},
		{"file:../local", "0.0.1", false, false},
		{"github:me/x", "1.0.0", false, false},
		{"^1.2.0", "not-a-version", false, false},
	} {
		if ok, known := satisfies(tc.rng, tc.v); ok != tc.ok || known != tc.known {
			t.Errorf("satisfies(%q, %q) = %v, %v; want %v, %v", tc.rng, tc.v, ok, known, tc.ok, tc.known)
		}
	}
}

// FuzzSatisfies: any range and version from a hostile package.json or lock
// file is judged or declared unknown, never a panic.
func FuzzSatisfies(f *testing.F) {
	for _, s := range []string{"^1.2.3", "~0", ">=1 <2 || 3.x", "1.0.0 - 2", "^", ">=", "1.2.3-", "x.x.x", "^999999999999.0.0"} {
		f.Add(s, "1.2.3")
	}
	f.Fuzz(func(t *testing.T, rng, v string) {
		if ok, known := satisfies(rng, v); ok && !known {
			t.Fatalf("satisfies(%q, %q) is true but not known", rng, v)
		}
	})
}

func TestYarnLock(t *testing.T) {
	got := yarnLock([]byte(`# yarn lockfile v1

"chalk@^2.0.0", chalk@^2.1.0:
  version "2.4.2"
  resolved "https://example.org/chalk-2.4.2.tgz"

left-pad@~1.2.0:
  version "1.2.9"
`))
	for spec, v := range map[string]string{"chalk@^2.0.0": "2.4.2", "chalk@^2.1.0": "2.4.2", "left-pad@~1.2.0": "1.2.9"} {
		if got[spec] != v {
			t.Errorf("%s = %q, want %q (all: %v)", spec, got[spec], v, got)
		}
	}
}
