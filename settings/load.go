package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
)

// Inputs is everything Load reads, passed in so that tests need no real
// files, environment or command line.
type Inputs struct {
	// UserFile and ProjectFile are TOML files; "" skips the layer, and a
	// file that does not exist is skipped silently.
	UserFile, ProjectFile string
	// Env looks up an environment variable (os.LookupEnv in production).
	// nil means an empty environment.
	Env func(string) (string, bool)
	// Home is the user's home directory, for defaults and "~/" in paths.
	Home string
	// Flags maps a key (underscores or dashes) to its raw value as typed on
	// the command line; only keys the user set.
	Flags map[string]string
	// TrustProject reports whether the user trusted the project file at
	// path with exactly this content (see internal/trust). nil trusts
	// nothing. An untrusted project file may set only the harmless keys
	// (ProjectSafe), and those only to tighten the value in force from the
	// defaults and the user file (add pins, stop or shrink dreams, never
	// the reverse); everything else it sets is refused with a warning.
	TrustProject func(path string, content []byte) bool
	// StrictFlags makes a bad value in Flags an error (a *FlagValueError)
	// instead of a warning and the default: a value typed on the command
	// line is the user's input now, to be corrected, not a file to survive.
	StrictFlags bool
}

// Loaded is the outcome of Load.
type Loaded struct {
	Settings Settings
	// Source maps each key to where its effective value came from:
	// "default", "user file <path>", "project file <path>", "env DREAM_X"
	// or "flag --x"; pins an untrusted project file added to the user's
	// read "user file <path> + project file <path>".
	Source map[string]string
	// Warnings lists bad values and unknown keys, in layer order.
	Warnings []string
	// ProjectTrusted says the project file was read and trusted.
	ProjectTrusted bool
	// Refused lists the keys an untrusted project file tried to set and
	// was refused: keys that need trust and values that would loosen.
	Refused []string
	// Jobs are the [[job]] tables of the user file, then the project
	// file's, in file order, not yet validated (see package jobs).
	Jobs []JobTable
}

// Load resolves the settings layer by layer, lowest precedence first. It
// fails only when a config file exists but cannot be read or parsed, or when
// Flags names a key that does not exist (a bug in the caller, since the CLI
// only defines flags for real keys).
func Load(in Inputs) (Loaded, error) {
	env := in.Env
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	def := Defaults(env, in.Home)
	l := Loaded{Settings: def, Source: make(map[string]string, len(specs))}
	l.Settings.Pinned = append([]string(nil), def.Pinned...)
	for _, s := range specs {
		l.Source[s.Name] = "default"
	}

	for _, f := range []struct{ label, path string }{
		{"user file", in.UserFile},
		{"project file", in.ProjectFile},
	} {
		if f.path == "" {
			continue
		}
		values, unknown, jobs, data, err := readFile(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Loaded{}, err
		}
		source := f.label + " " + f.path
		project := f.label == "project file"
		trusted := !project || (in.TrustProject != nil && in.TrustProject(f.path, data))
		if project {
			l.ProjectTrusted = trusted
		}
		for _, name := range unknown {
			l.Warnings = append(l.Warnings, fmt.Sprintf("unknown key %q in %s (ignored)", name, source))
		}
		for _, j := range jobs {
			l.Jobs = append(l.Jobs, JobTable{Fields: j, Source: source, Trusted: trusted})
		}
		for _, s := range specs {
			r, ok := values[s.Name]
			if !ok {
				continue
			}
			if !trusted {
				l.setUntrusted(s, r, f.path, source, in.Home)
				continue
			}
			l.set(s, r, source, &def, in.Home)
		}
	}

	for _, s := range specs {
		// An empty variable counts as unset: `DREAM_MIN_HOURS= dream maybe`
		// is how shells clear a value for one command.
		if v, ok := env(EnvVar(s.Name)); ok && v != "" {
			l.set(s, raw{text: v}, "env "+EnvVar(s.Name), &def, in.Home)
		}
	}

	names := make([]string, 0, len(in.Flags))
	for name := range in.Flags {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s, ok := lookup(name)
		if !ok {
			return Loaded{}, fmt.Errorf("unknown setting flag --%s", FlagName(name))
		}
		if in.StrictFlags {
			if err := strictValue(s, in.Flags[name], in.Home); err != nil {
				return Loaded{}, err
			}
		}
		l.set(s, raw{text: in.Flags[name]}, "flag --"+FlagName(s.Name), &def, in.Home)
	}
	return l, nil
}

// set applies one layer's value for key s. A bad value is reported and the
// key falls back to its default, so the warning's promise holds whatever a
// lower layer said.
func (l *Loaded) set(s spec, r raw, source string, def *Settings, home string) {
	err := s.apply(&l.Settings, r, home)
	if err == nil {
		err = checkRange(s.Name, &l.Settings)
	}
	if err != nil {
		if r.note != "" {
			err = fmt.Errorf("%s: %w", r.note, err)
		}
		s.reset(&l.Settings, def)
		l.Source[s.Name] = "default"
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s = %q from %s: %v; using default %s",
			s.Name, r.String(), source, err, s.format(def)))
		return
	}
	l.Source[s.Name] = source
}

// Value returns the effective value of key as text, "" for an unknown key.
func (l Loaded) Value(key string) string {
	s, ok := lookup(key)
	if !ok {
		return ""
	}
	return s.format(&l.Settings)
}

// ProjectFile returns the project file path for a repository directory, or
// "" when repoDir is "".
func ProjectFile(repoDir string) string {
	if repoDir == "" {
		return ""
	}
	return filepath.Join(repoDir, ProjectFileName)
}
