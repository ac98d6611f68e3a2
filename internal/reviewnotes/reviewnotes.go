// Package reviewnotes is the review job's engine (seed 002's third closing
// question, a code-review consolidator): notes over the commits since the
// last run, written to a notes file and never into the code. Offline it
// lists the commits, the files each touched and their churn, and flags the
// risky spots mechanically: large changes, lock, auth and config files
// touched, tests deleted. With a model, the model writes the notes
// themselves over this list (runner.JobRunner).
package reviewnotes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/gate"
)

// Options say what to review.
type Options struct {
	// Repo is the repository's root.
	Repo string
	// Since is the last run: the commits after it are reviewed. Zero (a
	// first review) takes the newest FirstReview commits.
	Since time.Time
	// Now dates the notes.
	Now time.Time
}

// Result is the notes and what they found.
type Result struct {
	Markdown string
	// Found counts by kind: commits, risky (spots flagged), and each flag
	// (large, lock, auth, config, tests_deleted).
	Found map[string]int
}

// Limits: a review reads one git log of at most MaxCommits commits.
const (
	FirstReview = 20
	MaxCommits  = 200
	// LargeCommit and LargeFile are the churn (lines added + deleted)
	// past which a change is flagged as large.
	LargeCommit = 500
	LargeFile   = 300
	// maxFilesListed bounds the files listed under one commit.
	maxFilesListed = 40
)

// commit is one commit of the log.
type commit struct {
	short, author, subject string
	at                     time.Time
	files                  []fileChange
}

type fileChange struct {
	path       string
	add, del   int
	binary     bool
	deleted    bool
	added      bool
	churnKnown bool
}

// Run reads the commits with one `git log` and writes the notes.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Repo == "" {
		return Result{}, errors.New("reviewnotes: no repository")
	}
	args := []string{"-C", o.Repo, "log", "--no-merges", "--no-renames", "--numstat", "--summary", "--format=%x00%h%x1f%an%x1f%ct%x1f%s"}
	if o.Since.IsZero() {
		args = append(args, "-n", strconv.Itoa(FirstReview))
	} else {
		args = append(args, "-n", strconv.Itoa(MaxCommits), "--since="+o.Since.UTC().Format(time.RFC3339))
	}
	cmd := exec.CommandContext(ctx, "git", append(args, "HEAD")...)
	cmd.Env = gate.GitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("reviewnotes: git log in %s: %s", o.Repo, strings.TrimSpace(stderr.String()+" "+err.Error()))
	}
	commits := parseLog(string(out))
	return Result{Markdown: notes(o, commits), Found: found(commits)}, nil
}

// parseLog reads `git log --numstat --summary` with the format above.
func parseLog(out string) []commit {
	var cs []commit
	for _, rec := range strings.Split(out, "\x00") {
		head, body, _ := strings.Cut(rec, "\n")
		parts := strings.SplitN(head, "\x1f", 4)
		if len(parts) != 4 {
			continue
		}
		sec, _ := strconv.ParseInt(parts[2], 10, 64)
		c := commit{short: parts[0], author: parts[1], at: time.Unix(sec, 0).UTC(), subject: parts[3]}
		byPath := map[string]int{}
		for _, l := range strings.Split(body, "\n") {
			if f := strings.SplitN(l, "\t", 3); len(f) == 3 {
				fc := fileChange{path: f[2], churnKnown: true}
				if f[0] == "-" {
					fc.binary, fc.churnKnown = true, false
				} else {
					fc.add, _ = strconv.Atoi(f[0])
					fc.del, _ = strconv.Atoi(f[1])
				}
				byPath[fc.path] = len(c.files)
				c.files = append(c.files, fc)
				continue
			}
			l = strings.TrimSpace(l)
			for prefix, set := range map[string]func(*fileChange){"delete mode ": func(f *fileChange) { f.deleted = true }, "create mode ": func(f *fileChange) { f.added = true }} {
				if rest, ok := strings.CutPrefix(l, prefix); ok {
					if _, p, ok := strings.Cut(rest, " "); ok {
						if i, ok := byPath[p]; ok {
							set(&c.files[i])
						}
					}
				}
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// flags are the mechanical reasons a change is risky, in report order.
var flags = []struct {
	key, what string
	match     func(c commit, f fileChange) bool
}{
	{"large", "large change", func(_ commit, f fileChange) bool { return f.add+f.del > LargeFile }},
	{"tests_deleted", "deletes a test", func(_ commit, f fileChange) bool { return f.deleted && isTest(f.path) }},
	{"lock", "touches a lock file", func(_ commit, f fileChange) bool { return isLock(f.path) }},
	{"auth", "touches auth code", func(_ commit, f fileChange) bool { return isAuth(f.path) }},
	{"config", "touches configuration", func(_ commit, f fileChange) bool { return isConfig(f.path) }},
}

// spot is one flagged file of one commit.
type spot struct {
	c    commit
	what string
	file string
}

func spots(cs []commit) []spot {
	var out []spot
	for _, c := range cs {
		churn := 0
		for _, f := range c.files {
			churn += f.add + f.del
		}
		if churn > LargeCommit {
			out = append(out, spot{c: c, what: fmt.Sprintf("large commit (+%d -%d lines in %d files)", sumAdd(c), sumDel(c), len(c.files))})
		}
		for _, fl := range flags {
			for _, f := range c.files {
				if fl.match(c, f) {
					out = append(out, spot{c: c, what: fl.what, file: f.path})
				}
			}
		}
	}
	return out
}

func found(cs []commit) map[string]int {
	m := map[string]int{"commits": len(cs)}
	for _, s := range spots(cs) {
		m["risky"]++
		for _, fl := range flags {
			if s.what == fl.what {
				m[fl.key]++
			}
		}
		if strings.HasPrefix(s.what, "large commit") {
			m["large"]++
		}
	}
	return m
}

func notes(o Options, cs []commit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Review notes: %s, %s\n\n", filepath.Base(o.Repo), o.Now.UTC().Format(time.DateOnly))
	span := fmt.Sprintf("the newest %d commits (first review)", FirstReview)
	if !o.Since.IsZero() {
		span = "the commits since the last review, " + o.Since.UTC().Format("2006-01-02 15:04 UTC")
		if len(cs) == MaxCommits {
			span += fmt.Sprintf(" (the newest %d of them)", MaxCommits)
		}
	}
	authors := map[string]bool{}
	nfiles := map[string]bool{}
	add, del := 0, 0
	for _, c := range cs {
		authors[c.author] = true
		for _, f := range c.files {
			nfiles[f.path] = true
		}
		add, del = add+sumAdd(c), del+sumDel(c)
	}
	fmt.Fprintf(&b, "Written by `dream run --job review` at %s over %s: %d commit(s) by %d author(s), %d file(s), +%d -%d lines.\n",
		o.Now.UTC().Format("2006-01-02 15:04 UTC"), span, len(cs), len(authors), len(nfiles), add, del)
	b.WriteString("\n## Notes\n\nNo model wrote notes on this run: below are the commits and the spots a mechanical scan flags (with a model, it writes the notes here).\n")
	b.WriteString("\n## Risky spots\n\n")
	fmt.Fprintf(&b, "Flagged mechanically: a commit over %d changed lines or a file over %d, a deleted test, a touched lock, auth or configuration file.\n\n", LargeCommit, LargeFile)
	sp := spots(cs)
	if len(sp) == 0 {
		b.WriteString("- none\n")
	}
	for _, s := range sp {
		if s.file != "" {
			fmt.Fprintf(&b, "- %s %s: %s `%s`\n", s.c.short, quote(s.c.subject), s.what, s.file)
		} else {
			fmt.Fprintf(&b, "- %s %s: %s\n", s.c.short, quote(s.c.subject), s.what)
		}
	}
	b.WriteString("\n## Commits\n")
	if len(cs) == 0 {
		b.WriteString("\nNone.\n")
	}
	for _, c := range cs {
		fmt.Fprintf(&b, "\n### %s %s %s: %s\n\n", c.short, c.at.Format(time.DateOnly), c.author, c.subject)
		for i, f := range c.files {
			if i == maxFilesListed {
				fmt.Fprintf(&b, "- … and %d more file(s)\n", len(c.files)-maxFilesListed)
				break
			}
			kind := "M"
			switch {
			case f.added:
				kind = "A"
			case f.deleted:
				kind = "D"
			}
			churn := fmt.Sprintf("+%d -%d", f.add, f.del)
			if f.binary {
				churn = "binary"
			}
			fmt.Fprintf(&b, "- %s `%s` (%s)\n", kind, f.path, churn)
		}
	}
	return b.String()
}

func sumAdd(c commit) (n int) {
	for _, f := range c.files {
		n += f.add
	}
	return n
}

func sumDel(c commit) (n int) {
	for _, f := range c.files {
		n += f.del
	}
	return n
}

func quote(s string) string {
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:80], "") + "…"
	}
	return strconv.Quote(s)
}

func isTest(p string) bool {
	b := path.Base(p)
	return strings.HasSuffix(b, "_test.go") || strings.HasPrefix(b, "test_") && strings.HasSuffix(b, ".py") || strings.HasSuffix(b, "_test.py") ||
		strings.Contains(b, ".test.") || strings.Contains(b, ".spec.") || hasSegment(p, "tests", "__tests__", "test", "spec")
}

func isLock(p string) bool {
	switch path.Base(p) {
	case "go.sum", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "poetry.lock", "Gemfile.lock", "composer.lock", "uv.lock", "Pipfile.lock", "flake.lock":
		return true
	}
	return false
}

func isAuth(p string) bool {
	l := strings.ToLower(p)
	for _, w := range []string{"auth", "login", "password", "passwd", "secret", "token", "credential", "permission", "oauth", "acl"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func isConfig(p string) bool {
	b := path.Base(p)
	switch path.Ext(b) {
	case ".toml", ".yaml", ".yml", ".ini", ".conf", ".cfg", ".env":
		return true
	}
	return strings.HasPrefix(b, ".env") || b == "Dockerfile" || strings.HasPrefix(p, ".github/workflows/") || b == "go.mod" || b == "package.json"
}

func hasSegment(p string, segs ...string) bool {
	for _, s := range strings.Split(path.Dir(p), "/") {
		for _, want := range segs {
			if s == want {
				return true
			}
		}
	}
	return false
}
