package jobs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/trust"
	"github.com/dreamkit/dream/settings"
)

// Inputs are what Resolve reads.
type Inputs struct {
	// Settings are the user's effective settings: every job starts from
	// them (budgets, review, provider), the memory dream is them.
	Settings settings.Settings
	// Tables are the config files' [[job]] tables (settings.Loaded.Jobs).
	Tables []settings.JobTable
	// Repo is the repository the jobs run on; relative dirs are in it.
	Repo string
	// Home and Env locate "~/" and the credential dirs.
	Home string
	Env  func(string) (string, bool)
	// Override are top-level keys given on the command line: for this
	// invocation their value wins over every job's own (`dream run --job
	// health --timeout 5m`).
	Override []string
}

// Resolve returns every job: the built-in ones, then those the tables
// define, each table applied in order over the job of its name. A table
// that is wrong anywhere is reported (one warning naming the job, the
// file and each bad key) and skipped as a whole: the job stays as it was
// before it, and the other jobs go on. An untrusted project file's table
// may only tighten a job that exists (settings.Tightens' rules).
func Resolve(in Inputs) ([]Job, []string) {
	all := builtins(in.Settings, in.Repo)
	var warnings []string
	for _, t := range in.Tables {
		name, _ := t.Fields["name"].(string)
		i := slices.IndexFunc(all, func(j Job) bool { return j.Name == name })
		var j Job
		var errs []error
		switch {
		case !t.Trusted:
			if i < 0 {
				warnings = append(warnings, fmt.Sprintf("%s is not trusted: ignoring [[job]] %q (a project may only tighten a job you defined); after reading the file, allow it with: dream trust", t.Source, name))
				continue
			}
			j, errs = tighten(all[i], t)
		case i >= 0:
			j, errs = apply(all[i], t, in)
		default:
			j, errs = apply(newJob(in.Settings, Spec{Name: name, Read: []string{ReadRepo}}), t, in)
		}
		if len(errs) == 0 {
			errs = check(j, all, i, in)
		}
		if len(errs) > 0 {
			warnings = append(warnings, fmt.Sprintf("[[job]] %q in %s skipped: %v", name, t.Source, errors.Join(errs...)))
			continue
		}
		if i >= 0 && all[i].Source != "" {
			j.Source = all[i].Source + " + " + t.Source
		} else {
			j.Source = t.Source
		}
		if i >= 0 {
			all[i] = j
		} else {
			all = append(all, j)
		}
	}
	for i := range all {
		for _, k := range in.Override {
			if slices.Contains(jobSettingKeys, k) {
				settings.CopyKey(&all[i].Settings, &in.Settings, k)
			}
		}
		sharedCeilings(&all[i].Settings, in.Settings)
	}
	return all, warnings
}

// sharedCeilings holds a job's day and month ceilings to the top-level
// ones: they bound every dream's spend in the one ledger, so a job may set
// its own only below them (its max_cost_per_dream is its own). Zero is no
// ceiling.
func sharedCeilings(j *settings.Settings, top settings.Settings) {
	atMost(&j.MaxCostPerDay, top.MaxCostPerDay)
	atMost(&j.MaxCostPerMonth, top.MaxCostPerMonth)
	atMost(&j.MaxTokensPerDay, top.MaxTokensPerDay)
	atMost(&j.MaxTokensPerMonth, top.MaxTokensPerMonth)
}

// atMost lowers a job's ceiling to all's, where all sets one.
func atMost[T int64 | float64](job *T, all T) {
	if all > 0 && (*job <= 0 || *job > all) {
		*job = all
	}
}

// jobSettingKeys are the top-level keys a job may set for itself: its gates
// and budgets, the spending ceilings included (the day's and month's only
// below the top-level ones, see sharedCeilings), validated as the
// top-level ones are.
var jobSettingKeys = []string{"enabled", "min_hours", "min_sessions", "max_turns", "max_tokens", "timeout", "review",
	"max_cost_per_dream", "max_cost_per_day", "max_cost_per_month", "max_tokens_per_day", "max_tokens_per_month"}

// templateFuncs are the functions a prompt template may call, by name:
// those of internal/prompt, which renders it (the root links neither it
// nor its templates, so the names are repeated here; TestPromptFuncs
// keeps them in step).
var templateFuncs = template.FuncMap{"join": strings.Join, "pinned": strings.TrimSpace}

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// CheckName refuses a job name that is not a safe single path element
// (it names the job's part of the state dir) or is too long to read.
func CheckName(name string) error {
	if len(name) > maxNameLen || !validName.MatchString(name) {
		return fmt.Errorf("name %q: lower-case letters, digits, - and _, at most %d, starting with a letter or digit", name, maxNameLen)
	}
	return nil
}

// apply sets each key of t on a copy of j; the errors name each bad key.
func apply(j Job, t settings.JobTable, in Inputs) (Job, []error) {
	if msg, ok := t.Fields[""].(string); ok {
		return j, []error{errors.New(msg)}
	}
	name, err := jobName(t)
	if err != nil {
		return j, []error{err}
	}
	var errs []error
	bad := func(key string, err error) { errs = append(errs, fmt.Errorf("%s: %w", key, err)) }
	var p jobPrompt
	for _, key := range sortedKeys(t.Fields) {
		if err := j.set(key, t.Fields[key], in, &p); err != nil {
			bad(key, err)
		}
	}
	prompt := p.text
	switch {
	case p.text != "" && p.file != "":
		bad("prompt_file", errors.New("set prompt or prompt_file, not both"))
	case p.file != "":
		s, err := readPrompt(p.file)
		if err != nil {
			bad("prompt_file", err)
		}
		prompt = s
	}
	if prompt != "" {
		if _, err := template.New(name).Funcs(templateFuncs).Parse(prompt); err != nil {
			bad("prompt", fmt.Errorf("not a valid template: %w", err))
		}
		j.Prompt = prompt
	}
	return j, errs
}

// jobName is the name of a [[job]] table, checked.
func jobName(t settings.JobTable) (string, error) {
	name, ok := t.Fields["name"].(string)
	switch {
	case !ok:
		return "", errors.New("name: every [[job]] needs a name (a string)")
	case name == Memory:
		return "", errors.New("name: the memory dream is set with the top-level keys (min_hours, max_turns ...), not a [[job]]")
	}
	return name, CheckName(name)
}

// jobPrompt is what a [[job]] table says of its prompt, settled once every
// key is read: the two keys exclude each other.
type jobPrompt struct{ text, file string }

// set applies one key of a [[job]] table to j; the prompt keys go to p.
func (j *Job) set(key string, v any, in Inputs, p *jobPrompt) error {
	if slices.Contains(jobSettingKeys, key) {
		return settings.ApplyKey(&j.Settings, key, v, in.Home)
	}
	switch key {
	case "name":
		return nil
	case "uses":
		s, err := text(v)
		switch {
		case err != nil:
			return err
		case (j.Name == Health || j.Name == Review) && s != j.Uses:
			return fmt.Errorf("%q is a built-in job: it uses %q", j.Name, j.Uses)
		case s != Health && s != Review:
			return fmt.Errorf("%q: the built-in engines are %q and %q", s, Health, Review)
		}
		j.Uses = s
		return nil
	case "doing":
		s, err := text(v)
		if err == nil && (len(s) > maxDoingLen || strings.ContainsAny(s, "\r\n")) {
			err = fmt.Errorf("one line of at most %d bytes", maxDoingLen)
		}
		j.Doing = s
		return err
	case "prompt":
		s, err := text(v)
		p.text = s
		return err
	case "prompt_file":
		s, err := text(v)
		p.file = fsutil.ExpandHome(s, in.Home)
		return err
	case "dir":
		s, err := text(v)
		if err == nil {
			s, err = dirOf(s, in)
		}
		j.Dir = s
		return err
	case "files":
		l, err := globs(v)
		j.Files = l
		return err
	case "watch":
		l, err := globs(v)
		j.Watch = l
		return err
	case "read":
		l, err := readScopes(v)
		j.Read = l
		return err
	case "min_commits":
		n, err := count(v)
		j.MinCommits = n
		return err
	}
	if settings.IsKey(key) {
		return fmt.Errorf("not a job key: a job sets only %s and its own keys; the rest are the user's", strings.Join(jobSettingKeys, ", "))
	}
	return errors.New("unknown job key (name, uses, doing, prompt, prompt_file, dir, files, read, min_commits, watch, and " + strings.Join(jobSettingKeys, ", ") + ")")
}

// tighten applies an untrusted project's table to j: only a key that
// makes j rarer, smaller, more careful or off, by the top-level rules;
// each other key or loosening value is refused, and the table with it.
func tighten(j Job, t settings.JobTable) (Job, []error) {
	var errs []error
	for _, key := range sortedKeys(t.Fields) {
		v := t.Fields[key]
		switch {
		case key == "name":
		case key == "min_commits":
			n, err := count(v)
			if err == nil && n < j.MinCommits {
				err = fmt.Errorf("%d would loosen %d", n, j.MinCommits)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", key, err))
				continue
			}
			j.MinCommits = n
		case slices.Contains(jobSettingKeys, key):
			proposed := j.Settings
			if err := settings.ApplyKey(&proposed, key, v, ""); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", key, err))
				continue
			}
			if !settings.Tightens(key, &j.Settings, &proposed) {
				errs = append(errs, fmt.Errorf("%s = %s would loosen %s", key, settings.Format(key, &proposed), settings.Format(key, &j.Settings)))
				continue
			}
			j.Settings = proposed
		default:
			errs = append(errs, fmt.Errorf("%s: a project that is not trusted may only tighten a job (enabled = false, min_hours, min_sessions, min_commits up; max_turns, max_tokens, timeout down; review = true); after reading the file, allow it with: dream trust", key))
		}
	}
	return j, errs
}

// check validates a job as a whole once its keys are set: it has work to
// do, it writes where a job may, and no other job writes there.
func check(j Job, all []Job, self int, in Inputs) []error {
	var errs []error
	if j.Uses == "" && j.Prompt == "" {
		errs = append(errs, errors.New("nothing to run: set uses (health or review) or prompt"))
	}
	if j.Dir == "" {
		return append(errs, errors.New("dir: a job needs its write dir (relative to the repository, or absolute)"))
	}
	if err := trust.CheckWritableDir("job "+j.Name+"'s dir", j.Dir, in.Env, in.Home); err != nil {
		errs = append(errs, fmt.Errorf("dir: %w", err))
	}
	if err := CheckScope(j.Spec, j.Dir, in.Repo); err != nil {
		errs = append(errs, err)
	}
	if m := in.Settings.MemoryDir; m != "" && filepath.Clean(m) == j.Dir {
		errs = append(errs, fmt.Errorf("dir %s is the memory dir: the memory dream writes it", j.Dir))
	}
	for i, o := range all {
		if i != self && o.Name != j.Name && !o.IsMemory() && o.Dir == j.Dir {
			errs = append(errs, fmt.Errorf("dir %s is job %q's: each job writes its own dir (set dir)", j.Dir, o.Name))
		}
	}
	return errs
}

// dirOf resolves a job's dir: "~/", absolute, or relative to the repo.
func dirOf(s string, in Inputs) (string, error) {
	s = fsutil.ExpandHome(strings.TrimSpace(s), in.Home)
	if s == "" {
		return "", errors.New("empty")
	}
	if !filepath.IsAbs(s) {
		if in.Repo == "" {
			return "", fmt.Errorf("%q is relative and there is no repository to put it in", s)
		}
		s = filepath.Join(in.Repo, s)
	}
	return filepath.Clean(s), nil
}

// globs reads a list of slash-separated patterns relative to a dir: no
// absolute path, no "..", each a valid doublestar pattern.
func globs(v any) ([]string, error) {
	list, err := strList(v)
	if err != nil {
		return nil, err
	}
	if len(list) > maxGlobs {
		return nil, fmt.Errorf("at most %d entries", maxGlobs)
	}
	for _, g := range list {
		switch {
		case g == "" || strings.HasPrefix(g, "/") || filepath.IsAbs(g):
			return nil, fmt.Errorf("%q: a path relative to its dir", g)
		case slices.Contains(strings.Split(g, "/"), ".."):
			return nil, fmt.Errorf("%q: never a \"..\" element", g)
		case !doublestar.ValidatePattern(g):
			return nil, fmt.Errorf("%q: not a valid pattern", g)
		}
	}
	return list, nil
}

func readScopes(v any) ([]string, error) {
	list, err := strList(v)
	if err != nil {
		return nil, err
	}
	for _, r := range list {
		if r != ReadRepo && r != ReadMemory && r != ReadTranscripts {
			return nil, fmt.Errorf("%q: the read scopes are %q, %q and %q", r, ReadRepo, ReadMemory, ReadTranscripts)
		}
	}
	return list, nil
}

func count(v any) (int, error) {
	n, ok := v.(int64)
	if !ok || n <= 0 || n > maxMinCommits {
		return 0, fmt.Errorf("must be a whole number from 1 to %d", maxMinCommits)
	}
	return int(n), nil
}

func text(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errors.New("must be a string")
	}
	return s, nil
}

func strList(v any) ([]string, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, errors.New("must be a list of strings")
	}
	out := make([]string, 0, len(l))
	for _, it := range l {
		s, ok := it.(string)
		if !ok {
			return nil, errors.New("must be a list of strings")
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out, nil
}

// readPrompt reads a prompt file: a regular file of at most
// MaxPromptBytes of UTF-8.
func readPrompt(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%q: an absolute path or one under ~/", path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxPromptBytes {
		return "", fmt.Errorf("%s: a regular file of at most %d bytes", path, MaxPromptBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if !isText(b) {
		return "", fmt.Errorf("%s is not UTF-8 text", path)
	}
	return string(b), nil
}

func isText(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// inside reports whether path is dir or below it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[]{}\`) }
