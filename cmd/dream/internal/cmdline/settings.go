package cmdline

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/trust"
	"github.com/dreamkit/dream/settings"
)

// Home is the user's home directory: $HOME as env gives it, else the
// system's answer.
func Home(env func(string) (string, bool)) string {
	if h, _ := env("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// Loaded is the settings of one command line and where they came from.
type Loaded struct {
	settings.Loaded
	// ProjectFile is the .dream.toml looked for, which may not exist:
	// `dream trust` with no path trusts it.
	ProjectFile string
	// UserFile is the user's config file looked for, which may not exist
	// either ("" when no path could be formed).
	UserFile string
}

// LoadSettings layers the defaults, the user file, the project file of the
// repo (--repo, else DREAM_REPO, else the working directory), DREAM_* and
// flags (as Parse returns them). A bad flag value is an error (a
// *settings.FlagValueError): it was typed now, to be corrected. The
// warnings about the files and the environment are in the result, for the
// caller to print.
func LoadSettings(env func(string) (string, bool), flags map[string]string) (Loaded, error) {
	home := Home(env)
	repo := flags["repo"]
	if repo == "" {
		repo, _ = env("DREAM_REPO")
	}
	if repo == "" {
		repo, _ = os.Getwd()
	}
	project := filepath.Join(repo, ".dream.toml")
	out := Loaded{ProjectFile: project, UserFile: settings.UserFile(env, home)}
	if _, err := os.Stat(project); err != nil {
		project = ""
	}
	l, err := settings.Load(settings.Inputs{
		UserFile:    out.UserFile,
		ProjectFile: project,
		Env:         env,
		Home:        home,
		Flags:       flags,
		// The record of which project files the user allowed lives in
		// the user's own state dir, never where a project file points.
		TrustProject: trust.Open(trust.DefaultPath(settings.StateDir(env, home))).Trusted,
		StrictFlags:  true,
	})
	if err != nil {
		return out, err
	}
	if l.Settings.Repo == "" {
		l.Settings.Repo = repo
	}
	out.Loaded = l
	return out, nil
}

// Layout is the host layout a command's locations come from: the named
// host's (--host, host setting), else, when no memory dir is set either,
// the one detected from the repo; nil when neither applies or nothing is
// detected.
func Layout(name, mem, repo, home string, env func(string) (string, bool)) (*host.Layout, error) {
	var l host.Layout
	var err error
	switch {
	case name != "":
		l, err = host.Resolve(name, repo, home, env)
	case mem == "":
		l, err = host.Choose(repo, home, env)
		if errors.Is(err, host.ErrNoHost) {
			return nil, nil
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &l, nil
}
