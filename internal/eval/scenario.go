// Package eval is dream's proof of value: scenarios with planted defects and
// probe facts, each run through a dream in a scratch workspace and scored.
// A dream that fixes nothing scores low; a dream that loses a fact, touches
// the repository or leaks a secret into memory is caught.
package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ScenarioFile is the file that describes a scenario inside its directory.
const ScenarioFile = "scenario.toml"

// Scenario is one directory of the corpus: memory/, repo/, sessions/ and a
// scenario.toml.
type Scenario struct {
	Name, Description string
	// Dir is the scenario's directory.
	Dir string
	// Now is the fixed time the dream runs at.
	Now time.Time
	// FilesTime is the modification time given to every memory file, which
	// relative dates resolve against; default a day before Now.
	FilesTime time.Time
	// Mtimes override FilesTime per memory file (relative path): a file
	// copied without -p, or appended to today, has a modification time
	// unrelated to when its lines were written.
	Mtimes map[string]time.Time
	// Host is the agent layout the dream runs with (see offline.LayoutFor);
	// empty is Claude Code's.
	Host    string
	Expects []Expect
	// Probes are facts that must still be in memory after the dream, each
	// in its own file when it names one.
	Probes []Probe
	// Generate, when set, adds generated topic files to the memory at run
	// time, so a large memory need not be committed file by file.
	Generate *Generate
}

// Expect is one property of the memory after a dream.
type Expect struct {
	// Kind is one of the Kind* constants.
	Kind string `toml:"kind"`
	// Pattern is a regular expression (RE2) for absent, present, max_count.
	Pattern string `toml:"pattern"`
	// File restricts a pattern search to one memory file (relative path);
	// empty means every markdown file of the memory.
	File string `toml:"file"`
	// Max is the bound of index_max_lines, index_max_bytes and max_count;
	// zero means the agent's load budget (or, for max_count, once).
	Max int `toml:"max"`
	// Mechanical is true when the offline engine is expected to fix it.
	Mechanical bool `toml:"mechanical"`
	// Guard marks a property that already holds and must keep holding
	// (no_secret, unchanged): breaking it is a regression, not a defect.
	Guard bool `toml:"guard"`
	// Note says what the defect is, for people reading a failure.
	Note string `toml:"note"`
}

// Probe is a fact a dream must keep. With File set the fact must still be
// in that file (a fact moved to another file has left the topic it was
// about); Count is how many times it must be there (default once): a
// procedure that repeats a step must keep both.
type Probe struct {
	File  string `toml:"file"`
	Text  string `toml:"text"`
	Count int    `toml:"count"`
}

// String names the probe for reports.
func (p Probe) String() string {
	s := fmt.Sprintf("%q", p.Text)
	if p.File != "" {
		s += " in " + p.File
	}
	if p.Count > 1 {
		s += fmt.Sprintf(" ×%d", p.Count)
	}
	return s
}

// Expectation kinds.
const (
	KindAbsent   = "absent"
	KindPresent  = "present"
	KindMaxCount = "max_count"
	// KindMinCount holds while the pattern matches at least Max times: a
	// decoy a dream must not merge away.
	KindMinCount           = "min_count"
	KindIndexMaxLines      = "index_max_lines"
	KindIndexMaxBytes      = "index_max_bytes"
	KindNoRelativeDates    = "no_relative_dates"
	KindNoDanglingPointers = "no_dangling_pointers"
	KindAllTopicsIndexed   = "all_topics_indexed"
	KindNoSecret           = "no_secret"
	KindUnchanged          = "unchanged"
)

// Generate describes generated topic files: Topics files named
// topic-NNN.md, each about one service, the last Unindexed of them left out
// of the index, and the first Duplicates of them repeating a fact of the
// next one verbatim.
type Generate struct {
	Topics     int `toml:"topics"`
	Unindexed  int `toml:"unindexed"`
	Duplicates int `toml:"duplicates"`
}

type scenarioFile struct {
	Description string               `toml:"description"`
	Now         time.Time            `toml:"now"`
	FilesTime   time.Time            `toml:"files_time"`
	Probes      []string             `toml:"probes"`
	Probe       []Probe              `toml:"probe"`
	Host        string               `toml:"host"`
	Mtimes      map[string]time.Time `toml:"mtimes"`
	Expect      []Expect             `toml:"expect"`
	Generate    *Generate            `toml:"generate"`
}

// LoadAll reads every scenario directory under dir, sorted by name.
func LoadAll(dir string) ([]Scenario, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("eval corpus: %w", err)
	}
	var out []Scenario
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		s, err := Load(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil, fmt.Errorf("eval corpus %s: no scenarios", dir)
	}
	return out, nil
}

// Load reads one scenario directory and validates it.
func Load(dir string) (Scenario, error) {
	name := filepath.Base(dir)
	var f scenarioFile
	meta, err := toml.DecodeFile(filepath.Join(dir, ScenarioFile), &f)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario %s: %w", name, err)
	}
	if und := meta.Undecoded(); len(und) > 0 {
		return Scenario{}, fmt.Errorf("scenario %s: unknown key %s", name, und[0])
	}
	s := Scenario{Name: name, Description: f.Description, Dir: dir, Now: f.Now, FilesTime: f.FilesTime,
		Expects: f.Expect, Generate: f.Generate, Host: f.Host, Mtimes: f.Mtimes}
	for _, p := range f.Probes {
		s.Probes = append(s.Probes, Probe{Text: p})
	}
	for _, p := range f.Probe {
		if strings.TrimSpace(p.Text) == "" || p.Count < 0 {
			return Scenario{}, fmt.Errorf("scenario %s: bad [[probe]] %+v", name, p)
		}
		s.Probes = append(s.Probes, p)
	}
	if s.Now.IsZero() {
		return Scenario{}, fmt.Errorf("scenario %s: now is required", name)
	}
	if s.FilesTime.IsZero() {
		s.FilesTime = s.Now.Add(-24 * time.Hour)
	}
	if len(s.Expects) == 0 {
		return Scenario{}, fmt.Errorf("scenario %s: no [[expect]]", name)
	}
	for i, e := range s.Expects {
		if err := e.validate(); err != nil {
			return Scenario{}, fmt.Errorf("scenario %s: expect %d: %w", name, i+1, err)
		}
	}
	if g := s.Generate; g != nil && (g.Topics <= 0 || g.Topics > 5000 || g.Unindexed < 0 || g.Unindexed > g.Topics || g.Duplicates < 0 || g.Duplicates >= g.Topics) {
		return Scenario{}, fmt.Errorf("scenario %s: bad [generate] %+v", name, *g)
	}
	if _, err := os.Stat(filepath.Join(dir, "memory")); err != nil && s.Generate == nil {
		return Scenario{}, fmt.Errorf("scenario %s: %w", name, err)
	}
	return s, nil
}
