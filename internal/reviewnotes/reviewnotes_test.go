package reviewnotes

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	r := &repo{t: t, dir: filepath.Join(t.TempDir(), "svc")}
	r.git("", "init", "-q", "-b", "main", r.dir)
	return r
}

func (r *repo) git(date string, args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	if args[0] != "init" {
		cmd.Dir = r.dir
	}
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Bo", "GIT_AUTHOR_EMAIL=bo@example.org", "GIT_COMMITTER_NAME=Bo",
		"GIT_COMMITTER_EMAIL=bo@example.org", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// commit writes files ("" deletes one) and commits at date.
func (r *repo) commit(date, msg string, files map[string]string) {
	r.t.Helper()
	for name, body := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if body == "" {
			os.Remove(p)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	r.git(date, "add", "-A")
	r.git(date, "commit", "-q", "-m", msg)
}

func TestNotes(t *testing.T) {
	r := newRepo(t)
	r.commit("2026-05-01T09:00:00Z", "start", map[string]string{"main.go": "package main\n", "main_test.go": "package main\n", "go.sum": "x v1 h1:=\n"})
	r.commit("2026-05-02T09:00:00Z", "before the last review", map[string]string{"README.md": "hi\n"})
	big := strings.Repeat("line\n", 600)
	r.commit("2026-05-03T09:00:00Z", "vendor the parser", map[string]string{"parser/gen.go": big})
	r.commit("2026-05-04T09:00:00Z", "drop the flaky test", map[string]string{"main_test.go": ""})
	r.commit("2026-05-05T09:00:00Z", "rotate tokens", map[string]string{"internal/auth/token.go": "package auth\n", "config/app.yaml": "a: 1\n", "go.sum": "x v2 h1:=\n"})
	res, err := Run(context.Background(), Options{Repo: r.dir, Since: time.Date(2026, 5, 2, 12, 0, 0, 0, time.UTC), Now: time.Date(2026, 5, 6, 8, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"commits": 3, "risky": 6, "large": 2, "tests_deleted": 1, "lock": 1, "auth": 1, "config": 1}
	if fmt.Sprint(res.Found) != fmt.Sprint(want) {
		t.Errorf("found = %v, want %v", res.Found, want)
	}
	for _, s := range []string{
		"# Review notes: svc, 2026-05-06",
		"the commits since the last review, 2026-05-02 12:00 UTC: 3 commit(s) by 1 author(s), 5 file(s), +603 -2 lines.",
		`"vendor the parser": large commit (+600 -0 lines in 1 files)`,
		`"vendor the parser": large change ` + "`parser/gen.go`",
		`"drop the flaky test": deletes a test ` + "`main_test.go`",
		`"rotate tokens": touches a lock file ` + "`go.sum`",
		`"rotate tokens": touches auth code ` + "`internal/auth/token.go`",
		`"rotate tokens": touches configuration ` + "`config/app.yaml`",
		"- D `main_test.go` (+0 -1)",
		"- A `internal/auth/token.go` (+1 -0)",
		"- M `go.sum` (+1 -1)",
	} {
		if !strings.Contains(res.Markdown, s) {
			t.Errorf("the notes lack %q:\n%s", s, res.Markdown)
		}
	}
	if strings.Contains(res.Markdown, "before the last review") {
		t.Errorf("a commit the last review saw is listed again:\n%s", res.Markdown)
	}
}

func TestFirstReview(t *testing.T) {
	r := newRepo(t)
	for i := range FirstReview + 5 {
		r.commit(fmt.Sprintf("2026-06-01T10:%02d:00Z", i), fmt.Sprintf("c%d", i), map[string]string{"f.txt": fmt.Sprint(i)})
	}
	res, err := Run(context.Background(), Options{Repo: r.dir, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Found["commits"] != FirstReview || !strings.Contains(res.Markdown, "(first review)") || strings.Contains(res.Markdown, ": c4\n") {
		t.Errorf("first review found %v:\n%s", res.Found, res.Markdown)
	}
}
