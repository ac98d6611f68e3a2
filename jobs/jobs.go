// Package jobs is what a background job is, beside the memory dream: the
// [[job]] tables of the config files, validated, and the built-in jobs.
//
// Every job is run the way the memory dream is (seed 002, §21.7: the
// gate, isolate, execute, observe, recover skeleton does not depend on
// the task): a Dreamer whose Config carries the job's Spec, with its own
// gates, lock, tasks, telemetry, audit history and review. Only three
// things differ from one job to the next, and they are here: when it may
// run (its gates, in its Settings), what it may read and write (its
// scopes), and what it does (a built-in engine it uses, a prompt for the
// model).
//
// The memory dream is the job named "memory", set with the top-level keys.
// health (the seed's code health check) and review (notes over the commits
// since the last run) are built in, off until enabled. A job's gates and
// budgets live in its own copy of the Settings (one home for each of
// them); the Spec holds the rest.
package jobs

import (
	"fmt"
	"path/filepath"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dreamkit/dream/settings"
)

// The built-in jobs.
const (
	// Memory is the memory dream: the job the commands run without --job.
	Memory = "memory"
	// Health is the seed's code health check: a dated report of the
	// dependencies, TODO/FIXME/XXX comments and lint configuration.
	Health = "health"
	// Review is notes over the commits since the last run.
	Review = "review"
)

// The read scopes: what a job's tools may read besides its write dir.
const (
	ReadRepo        = "repo"
	ReadMemory      = "memory"
	ReadTranscripts = "transcripts"
)

// Spec is what a job is beyond its Settings (its gates and budgets, which
// are there). The zero Spec is the memory dream.
type Spec struct {
	// Name is the job's name; "" and Memory are the memory dream.
	Name string `json:"name"`
	// Uses names the built-in engine the job runs (Health, Review), which
	// works with no model; "" runs only the prompt, on a model.
	Uses string `json:"uses,omitempty"`
	// Doing is what the job's task shows while it runs ("doing a code
	// checkup").
	Doing string `json:"doing,omitempty"`
	// Prompt is the job's prompt: a text/template with the variables of
	// the memory prompt and the job's own (see runner.JobRunner). Empty
	// is the built-in engine's own prompt, if any.
	Prompt string `json:"-"`
	// Dir is the write dir: the one directory the job's dreams change,
	// stage, journal and record in their audit history (absolute).
	Dir string `json:"dir"`
	// Files narrows Dir to these slash-separated globs, relative to it; the
	// first is the job's report. Empty is every file of Dir.
	Files []string `json:"files,omitempty"`
	// Read lists what the job's tools may read besides Dir: ReadRepo,
	// ReadMemory (the agent's memory dir, MemoryDir), ReadTranscripts.
	Read []string `json:"read"`
	// MinCommits is the commit gate: commits in the repository since the
	// job last completed; 0 leaves the gate open.
	MinCommits int `json:"min_commits,omitempty"`
	// Watch is the file gate: globs relative to the repository; the gate
	// opens when one matching file changed since the job last completed.
	// Empty leaves the gate open.
	Watch []string `json:"watch,omitempty"`
	// MemoryDir is the agent's memory dir, read-only, when Read names
	// ReadMemory; the front end fills it.
	MemoryDir string `json:"memory_dir,omitempty"`
}

// IsMemory reports whether s is the memory dream.
func (s Spec) IsMemory() bool { return s.Name == "" || s.Name == Memory }

// Reads reports whether the job may read scope.
func (s Spec) Reads(scope string) bool {
	if s.IsMemory() {
		return true
	}
	for _, r := range s.Read {
		if r == scope {
			return true
		}
	}
	return false
}

// Report is the job's report file, relative to Dir: its first Files entry
// when that is a plain path; "" when it has none.
func (s Spec) Report() string {
	if len(s.Files) == 0 || hasMeta(s.Files[0]) {
		return ""
	}
	return s.Files[0]
}

// Job is one job as the front ends run it.
type Job struct {
	Spec
	// Settings are the job's: the user's, with the job's gates and
	// budgets. Enabled is the job's own. A job's Dreamer takes
	// Settings.Dream; the rest (where the memory is, which model) are the
	// user's, as the config keys that a [[job]] table may set all live in
	// Dream, and the key table works on whole Settings.
	Settings settings.Settings
	// Source says where the job was defined: "built in", "user file
	// PATH", and the files that changed it after.
	Source string
}

// StateDir is where a job keeps its journal, audit history, scan
// throttle and lock, inside dream's state dir: each job its own, so that
// two jobs never recover, sweep or record each other's work. The memory
// dream keeps them in the state dir itself, as it always has. Tasks and
// telemetry are shared by every job (`dream tasks`, `dream stats`).
func StateDir(stateDir, name string) string {
	if name == "" || name == Memory {
		return stateDir
	}
	return filepath.Join(stateDir, "jobs", name)
}

// Defaults of a job a user defines.
const (
	DefaultMinHours = 24
	// healthMinHours and healthMinCommits are the seed's example: a code
	// checkup at most weekly, once 20 commits have landed.
	healthMinHours   = 7 * 24
	healthMinCommits = 20
	// The review's notes are worth writing once a day's work has landed.
	reviewMinCommits = 20
)

// builtins returns the built-in jobs for repo, from the user's settings
// base: the memory dream as the settings say, health and review off.
func builtins(base settings.Settings, repo string) []Job {
	memory := Job{Spec: Spec{Name: Memory, Doing: "consolidating memory"}, Settings: base, Source: "built in"}
	health := newJob(base, Spec{Name: Health, Uses: Health, Doing: "doing a code checkup",
		Dir: filepath.Join(repo, ".dream", Health), Files: []string{"health.md"}, Read: []string{ReadRepo}, MinCommits: healthMinCommits})
	health.Settings.MinHours = healthMinHours
	review := newJob(base, Spec{Name: Review, Uses: Review, Doing: "reviewing recent commits",
		Dir: filepath.Join(repo, ".dream", Review), Files: []string{"review.md"}, Read: []string{ReadRepo}, MinCommits: reviewMinCommits})
	health.Settings.Enabled, review.Settings.Enabled = false, false
	health.Source, review.Source = "built in", "built in"
	return []Job{memory, health, review}
}

// newJob is a job defined from base: enabled, its own time gate (a day),
// no session gate, the user's budgets and review policy.
func newJob(base settings.Settings, spec Spec) Job {
	s := base
	s.Enabled = true
	s.MinHours = DefaultMinHours
	s.MinSessions = 0
	s.Pinned = nil
	return Job{Spec: spec, Settings: s}
}

// Find returns the job named name.
func Find(jobs []Job, name string) (Job, bool) {
	if name == "" {
		name = Memory
	}
	for _, j := range jobs {
		if j.Name == name {
			return j, true
		}
	}
	return Job{}, false
}

// Names lists the jobs' names, in order.
func Names(jobs []Job) []string {
	out := make([]string, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

// MaxPromptBytes bounds a prompt, inline or from its file.
const MaxPromptBytes = 64 << 10

// Bounds of the job keys that are not settings keys.
const (
	maxMinCommits = 1_000_000
	maxNameLen    = 40
	maxDoingLen   = 80
	maxGlobs      = 64
)

// CheckScope refuses a write dir that would reach the repository's source
// or its .git: the repository itself or a dir holding it (a dream stages
// and sweeps its whole write dir), its .git, or a dir inside the
// repository whose files are not listed path by path.
func CheckScope(s Spec, dir, repo string) error {
	if repo == "" || dir == "" {
		return nil
	}
	repo, dir = filepath.Clean(repo), filepath.Clean(dir)
	git := filepath.Join(repo, ".git")
	switch {
	case repo == dir:
		return fmt.Errorf("dir %s is the repository itself: give the job a dir of its own (such as .dream/NAME)", dir)
	case inside(repo, dir):
		return fmt.Errorf("dir %s contains the repository %s", dir, repo)
	case inside(dir, git) || inside(git, dir):
		return fmt.Errorf("dir %s: never the repository's .git", dir)
	case !inside(dir, repo):
		return nil
	case len(s.Files) == 0:
		return fmt.Errorf("dir %s is in the repository: list the files the job writes there, path by path (files = [\"notes.md\"])", dir)
	}
	for _, f := range s.Files {
		if hasMeta(f) {
			return fmt.Errorf("files: %q is a pattern, but dir %s is in the repository: list the files path by path", f, dir)
		}
	}
	return nil
}

// WriteScope returns the test of a path (slash-separated, relative to the
// write dir) against files: every path when files is empty.
func WriteScope(files []string) func(rel string) bool {
	return func(rel string) bool {
		if len(files) == 0 {
			return true
		}
		rel = filepath.ToSlash(rel)
		for _, f := range files {
			if ok, _ := doublestar.Match(f, rel); ok {
				return true
			}
		}
		return false
	}
}

// LockDir is the dir of a job's lock file (.consolidate-lock) in the job's
// part of the state dir (StateDir): one per job and write dir, memKey
// naming the write dir as the journal does.
func LockDir(jobState, memKey string) string {
	return filepath.Join(jobState, "lock", memKey)
}
