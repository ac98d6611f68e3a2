// Package checkup is the health job's engine (seed 002 §21.7's code health
// check): a dated Markdown report of a repository's dependencies and how
// far behind what is known locally they are, its TODO/FIXME/XXX comments
// with the newest, and the changes to its lint configuration since the
// last report. It is offline: it reads the repository, asks git (a handful
// of calls, never one per line or per file), and the module cache already
// on this machine, and never the network, so "behind" is measured against
// what this machine knows; the report says exactly what it compared.
package checkup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/gate"
)

// Options say what to check.
type Options struct {
	// Repo is the repository's root.
	Repo string
	// Since is when the last report was made; zero when there was none.
	Since time.Time
	// Now dates the report.
	Now time.Time
	// Exclude is a dir (slash-separated, relative to Repo) that is not
	// scanned: the job's own, whose reports quote what they count.
	Exclude string
	// ModCache is the Go module cache (GOMODCACHE); "" reads none.
	ModCache string
}

// Result is the report and what it found.
type Result struct {
	Markdown string
	// Found counts the findings by kind: go_behind, go_sum_missing,
	// npm_out_of_range, npm_not_locked, npm_installed_differs, todo,
	// fixme, xxx, lint_changes.
	Found map[string]int
}

// skipDirs are never the project's own code: vendored and installed
// dependencies.
var skipDirs = []string{"vendor", "node_modules", "third_party"}

// Run checks o.Repo and writes the report.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Repo == "" {
		return Result{}, errors.New("checkup: no repository")
	}
	c := &check{o: o, found: map[string]int{}}
	files, err := c.git(ctx, "ls-files", "-z")
	if err != nil {
		return Result{}, fmt.Errorf("checkup: %s is not a git repository (the check reads its tracked files): %w", o.Repo, err)
	}
	for _, f := range strings.Split(strings.TrimRight(files, "\x00"), "\x00") {
		if f != "" && !c.excluded(f) {
			c.files = append(c.files, f)
		}
	}
	head, _ := c.git(ctx, "rev-parse", "--short", "HEAD")
	var b strings.Builder
	fmt.Fprintf(&b, "# Code health: %s, %s\n\n", filepath.Base(o.Repo), o.Now.UTC().Format(time.DateOnly))
	last := "first report"
	if !o.Since.IsZero() {
		last = "last report " + o.Since.UTC().Format("2006-01-02 15:04 UTC")
	}
	fmt.Fprintf(&b, "Measured offline by `dream run --job health` at %s on commit %s (%s), from %d tracked files. No network: \"behind\" compares with what this machine knows, as each section says.\n",
		o.Now.UTC().Format("2006-01-02 15:04 UTC"), orDash(strings.TrimSpace(head)), last, len(c.files))
	deps := c.goModules() + c.npmPackages()
	todos, err := c.todos(ctx)
	if err != nil {
		return Result{}, err
	}
	lint, err := c.lint(ctx)
	if err != nil {
		return Result{}, err
	}
	f := c.found
	fmt.Fprintf(&b, "\n## Summary\n\n")
	fmt.Fprintf(&b, "- Go: %d requirement(s) behind the newest version known locally, %d missing from go.sum\n", f["go_behind"], f["go_sum_missing"])
	fmt.Fprintf(&b, "- npm: %d locked outside their package.json range, %d not in the lock, %d installed at another version than locked\n", f["npm_out_of_range"], f["npm_not_locked"], f["npm_installed_differs"])
	fmt.Fprintf(&b, "- %d TODO, %d FIXME, %d XXX\n", f["todo"], f["fixme"], f["xxx"])
	fmt.Fprintf(&b, "- %d lint configuration change(s) since the last report\n", f["lint_changes"])
	b.WriteString("\n## Dependencies\n")
	if deps == "" {
		deps = "\nNo go.mod or package.json is tracked.\n"
	}
	b.WriteString(deps)
	b.WriteString(todos)
	b.WriteString(lint)
	return Result{Markdown: b.String(), Found: c.found}, nil
}

// check is one run's state.
type check struct {
	o     Options
	files []string // tracked, not excluded
	found map[string]int
}

// excluded reports whether a tracked file is outside what the check reads.
func (c *check) excluded(f string) bool {
	if c.o.Exclude != "" && (f == c.o.Exclude || strings.HasPrefix(f, c.o.Exclude+"/")) {
		return true
	}
	for _, d := range skipDirs {
		if strings.HasPrefix(f, d+"/") || strings.Contains(f, "/"+d+"/") {
			return true
		}
	}
	return false
}

// named lists the tracked files whose base name is one of names, outside
// testdata (fixtures, not the project's own manifests).
func (c *check) named(names ...string) []string {
	var out []string
	for _, f := range c.files {
		if strings.HasPrefix(f, "testdata/") || strings.Contains(f, "/testdata/") {
			continue
		}
		for _, n := range names {
			if ok, _ := path.Match(n, path.Base(f)); ok {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// git runs git in the repository and returns its output.
func (c *check) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", c.o.Repo}, args...)...)
	cmd.Env = gate.GitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return string(out), fmt.Errorf("git %s: %s (%w)", args[0], msg, err)
		}
		return string(out), fmt.Errorf("git %s: %w", args[0], err)
	}
	return string(out), nil
}

// fileDates maps each file changed in the newest maxLogCommits commits to
// the time of the newest commit that touched it: one git call.
func (c *check) fileDates(ctx context.Context) map[string]time.Time {
	out, err := c.git(ctx, "log", "-n", strconv.Itoa(maxLogCommits), "--format=%x00%ct", "--name-only", "--no-renames")
	dates := map[string]time.Time{}
	if err != nil {
		return dates
	}
	var at time.Time
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "\x00"); ok {
			if sec, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64); err == nil {
				at = time.Unix(sec, 0).UTC()
			}
			continue
		}
		if line = strings.TrimSpace(line); line != "" {
			if _, seen := dates[line]; !seen {
				dates[line] = at
			}
		}
	}
	return dates
}

// maxLogCommits bounds the history the TODO dates are read from.
const maxLogCommits = 2000

// mark is one TODO/FIXME/XXX line.
type mark struct {
	file string
	line int
	text string
	at   time.Time
}

// todos counts the markers in the tracked files with one `git grep`, and
// dates each by the newest commit that touched its file (one `git log`).
func (c *check) todos(ctx context.Context) (string, error) {
	args := []string{"grep", "-n", "-I", "-w", "-E", "TODO|FIXME|XXX", "--", "."}
	if c.o.Exclude != "" {
		args = append(args, ":(exclude)"+c.o.Exclude)
	}
	for _, d := range skipDirs {
		args = append(args, ":(exclude,glob)**/"+d+"/**")
	}
	out, err := c.git(ctx, args...)
	if err != nil && out == "" && !isExit1(err) {
		return "", fmt.Errorf("checkup: %w", err)
	}
	var marks []mark
	for _, l := range strings.Split(out, "\n") {
		file, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		num, text, ok := strings.Cut(rest, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		text = strings.TrimSpace(text)
		for _, m := range []string{"TODO", "FIXME", "XXX"} {
			if containsWord(text, m) {
				c.found[strings.ToLower(m)]++
			}
		}
		marks = append(marks, mark{file: file, line: n, text: text})
	}
	var b strings.Builder
	b.WriteString("\n## TODO, FIXME, XXX\n\n")
	outside := skipDirs
	if c.o.Exclude != "" { // the job's own dir, when it is in the repository
		outside = append([]string{c.o.Exclude}, skipDirs...)
	}
	fmt.Fprintf(&b, "Lines of the tracked files (outside %s) holding the word: %d TODO, %d FIXME, %d XXX, in %d line(s).\n",
		strings.Join(outside, ", "), c.found["todo"], c.found["fixme"], c.found["xxx"], len(marks))
	if len(marks) == 0 {
		return b.String(), nil
	}
	dates := c.fileDates(ctx)
	for i := range marks {
		marks[i].at = dates[marks[i].file]
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].at.After(marks[j].at) })
	fmt.Fprintf(&b, "\nThe newest, by the last commit that touched the file (of the newest %d commits):\n\n", maxLogCommits)
	for _, m := range marks[:min(len(marks), newestShown)] {
		when := "older"
		if !m.at.IsZero() {
			when = m.at.Format(time.DateOnly)
		}
		fmt.Fprintf(&b, "- `%s:%d` (%s): %s\n", m.file, m.line, when, clip(m.text, 120))
	}
	return b.String(), nil
}

// newestShown is how many marker lines the report names.
const newestShown = 10

// lintNames are the lint configuration files by base name; pyproject.toml,
// setup.cfg and tox.ini count only when they hold a linter's section.
var lintNames = []string{".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json", "staticcheck.conf",
	".eslintrc", ".eslintrc.*", "eslint.config.*", "ruff.toml", ".ruff.toml", ".flake8", ".pylintrc", "pylintrc",
	"mypy.ini", ".mypy.ini", "biome.json", "biome.jsonc", ".stylelintrc*", ".rubocop.yml", "clippy.toml", ".clippy.toml"}

var lintSections = map[string][]string{
	"pyproject.toml": {"[tool.ruff", "[tool.pylint", "[tool.flake8", "[tool.mypy"},
	"setup.cfg":      {"[flake8", "[pylint", "[mypy"},
	"tox.ini":        {"[flake8", "[pylint", "[mypy"},
}

// lint lists the lint configuration files and the commits that changed
// them since the last report (the last ten, for a first report): one
// `git log`.
func (c *check) lint(ctx context.Context) (string, error) {
	files := c.named(lintNames...)
	for _, f := range c.named("pyproject.toml", "setup.cfg", "tox.ini") {
		if holdsAny(filepath.Join(c.o.Repo, filepath.FromSlash(f)), lintSections[path.Base(f)]) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	var b strings.Builder
	b.WriteString("\n## Lint configuration\n\n")
	if len(files) == 0 {
		b.WriteString("No lint configuration file is tracked (" + strings.Join(lintNames[:5], ", ") + ", eslint, ruff, pylint, mypy ...).\n")
		return b.String(), nil
	}
	b.WriteString("Files: `" + strings.Join(files, "`, `") + "`.\n\n")
	args := []string{"log", "--format=%x00%h%x1f%ct%x1f%s", "--name-only", "--no-renames"}
	if c.o.Since.IsZero() {
		args = append(args, "-n", "10")
	} else {
		args = append(args, "--since="+c.o.Since.UTC().Format(time.RFC3339))
	}
	out, err := c.git(ctx, append(append(args, "--"), files...)...)
	if err != nil {
		return "", fmt.Errorf("checkup: %w", err)
	}
	var lines []string
	for _, rec := range strings.Split(out, "\x00") {
		head, names, _ := strings.Cut(rec, "\n")
		parts := strings.SplitN(head, "\x1f", 3)
		if len(parts) != 3 {
			continue
		}
		sec, _ := strconv.ParseInt(parts[1], 10, 64)
		changed := strings.Fields(names)
		lines = append(lines, fmt.Sprintf("- %s %s %s: `%s`", time.Unix(sec, 0).UTC().Format(time.DateOnly), parts[0], clip(parts[2], 100), strings.Join(changed, "`, `")))
	}
	if c.o.Since.IsZero() {
		b.WriteString("First report: the last changes to them:\n\n")
	} else {
		c.found["lint_changes"] = len(lines)
		fmt.Fprintf(&b, "Changes since the last report (%s):\n\n", c.o.Since.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if len(lines) == 0 {
		b.WriteString("- none\n")
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String(), nil
}

func isExit1(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 1
}

// containsWord reports whether w occurs in s as a whole word, as git grep
// -w matched it.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isWordByte(s[j-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "`", "'")
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
