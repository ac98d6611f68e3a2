// Package settings resolves dream's configuration from its layers, lowest to
// highest precedence: built-in defaults, the user file
// ($XDG_CONFIG_HOME/dream/config.toml), the project file (.dream.toml in the
// repository), DREAM_* environment variables, and command-line flags.
//
// A bad value never stops a dream from being configured: it is reported as a
// warning that names the key, the value and where it came from, and the
// key's default is used instead, so that one typo in a shell profile cannot
// silently turn the gate into "always open" or "never open". Numbers have
// upper bounds as well as lower ones, and a number too large for TOML itself
// (1e309) is refused for its key alone. Only a file that cannot be parsed at
// all is an error, because then no key in it can be trusted.
//
// The project file comes with the repository, not from the user: unless the
// user trusted its exact content (Inputs.TrustProject, backed by
// internal/trust), it may set only the harmless keys (ProjectSafe), and only
// in the direction that tightens the user's own policy (see projectRules);
// each other key or loosening value it sets is refused with a warning.
package settings

import (
	"path/filepath"
	"time"
)

// Settings is the effective configuration of one dream process: a
// Dreamer's settings and the command line's inputs for its Config (where
// the memory, transcripts and state are, which agent and model), which
// the layers set alike.
type Settings struct {
	// Dream is what the Dreamer takes.
	Dream
	// Provider is anthropic, openai or offline; "" picks from the keys set.
	Provider string
	// Model is the provider's model name; "" uses the provider's default.
	Model string
	// BaseURL points an OpenAI-compatible provider at another server.
	BaseURL string
	// Host names the agent whose layout locates memory and transcripts.
	Host string
	// MemoryDir, SessionsDir and Repo override the host's layout.
	MemoryDir, SessionsDir, Repo string
	// StateDir holds tasks, telemetry, audit history and journals.
	StateDir string
}

// Dream is what a Dreamer takes (dream.Config.Settings): its gates,
// budgets and policies, its lock and sync remote, its spending ceilings.
// Where a dream's memory, transcripts and state are, and which model it
// uses, are the Config's own fields, not settings of it.
type Dream struct {
	// Enabled is the first gate: false means no automatic dream ever starts.
	Enabled bool
	// MinHours is the time gate: hours since the last consolidation.
	MinHours float64
	// MinSessions is the session gate: other sessions touched since then.
	MinSessions int
	// MaxTurns caps the model round trips of one dream.
	MaxTurns int
	// MaxTokens caps the total tokens (input + output) of one dream.
	MaxTokens int64
	// Timeout caps the wall-clock time of one dream.
	Timeout time.Duration
	// Pinned lists memory files a dream must never delete or rewrite.
	Pinned []string
	// Review asks for a dream's changes to be staged for approval instead
	// of committed.
	Review bool
	// MaxLoss is the share of memory units or bytes a model dream may lose
	// without a trace before the loss guard holds it for review.
	MaxLoss float64
	// MaxUntracedDeletions is how many facts a model dream may delete
	// without a trace elsewhere in memory before it is held for review,
	// whatever MaxLoss allows: a precise loss is one fact, not a share.
	MaxUntracedDeletions int
	// CodexExecSessions counts `codex exec` runs as sessions; Codex's own
	// memory pipeline skips them, and so does the session gate by default.
	CodexExecSessions bool
	// CodexMemoryOwner says who consolidates Codex's memories/: CodexOwner,
	// DreamOwner, or "" (not chosen: dream leaves it alone while Codex's
	// memories feature consolidates it).
	CodexMemoryOwner string
	// Distributed holds the lock backend and the sync remote.
	Distributed
	// Ceilings hold what model dreams may spend and the models' prices.
	Ceilings
}

// The values of codex_memory_owner.
const (
	CodexOwner = "codex"
	DreamOwner = "dream"
)

// The default budgets of one dream. They live here alone: the agent falls
// back to them for a zero budget, and the key table's text defaults are
// tested against Defaults.
const (
	DefaultMaxTurns  = 25
	DefaultMaxTokens = 400_000
	DefaultTimeout   = 10 * time.Minute
)

// Defaults returns the built-in configuration. env looks up an environment
// variable (os.LookupEnv in production) and home is the user's home
// directory; both are parameters so that tests need no real environment.
func Defaults(env func(string) (string, bool), home string) Settings {
	return Settings{Dream: DreamDefaults(), StateDir: StateDir(env, home)}
}

// DreamDefaults returns the built-in settings of a Dreamer: the gates and
// budgets of DESIGN, the file lock, no sync remote, the default ceilings.
func DreamDefaults() Dream {
	return Dream{
		Enabled:              true,
		MinHours:             24,
		MinSessions:          5,
		MaxTurns:             DefaultMaxTurns,
		MaxTokens:            DefaultMaxTokens,
		Timeout:              DefaultTimeout,
		MaxLoss:              0.2,
		MaxUntracedDeletions: 3,
		Distributed:          DefaultDistributed(),
		Ceilings:             DefaultCeilings(),
	}
}

// FillZeros gives what a host filling a Dream by hand left zero its
// default: a zero timeout must not mean a dream that may run forever, nor
// zero spending ceilings a model dream that may spend anything. A job's
// zero MinSessions stays (its session gate is open), so memory says whether
// this is the memory dream.
func (d *Dream) FillZeros(memory bool) {
	def := DreamDefaults()
	if !(d.MinHours > 0) { // NaN included
		d.MinHours = def.MinHours
	}
	if d.MinSessions <= 0 && memory {
		d.MinSessions = def.MinSessions
	}
	if d.Timeout <= 0 {
		d.Timeout = def.Timeout
	}
	for _, c := range []struct{ v, def *float64 }{{&d.MaxCostPerDream, &def.MaxCostPerDream}, {&d.MaxCostPerDay, &def.MaxCostPerDay}, {&d.MaxCostPerMonth, &def.MaxCostPerMonth}} {
		if !(*c.v > 0) {
			*c.v = *c.def
		}
	}
	if d.MaxRequestTokens <= 0 {
		d.MaxRequestTokens = def.MaxRequestTokens
	}
}

// UserFile returns the path of the user's config file:
// $XDG_CONFIG_HOME/dream/config.toml, falling back to
// ~/.config/dream/config.toml. It returns "" when neither can be formed,
// which Load treats as "no user file".
func UserFile(env func(string) (string, bool), home string) string {
	dir := ConfigHome(env, home)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "dream", "config.toml")
}

// StateDir is dream's default state dir: $XDG_STATE_HOME/dream, falling
// back to ~/.local/state/dream; "" when neither can be formed. It is the
// state_dir setting's default and the home of the trust store, which must
// not move with that setting.
func StateDir(env func(string) (string, bool), home string) string {
	dir := xdgDir(env, "XDG_STATE_HOME", home, filepath.Join(".local", "state"))
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "dream")
}

// ConfigHome is the user's XDG config directory: $XDG_CONFIG_HOME, falling
// back to ~/.config; "" when neither can be formed. dream's user file and
// the systemd user unit live below it.
func ConfigHome(env func(string) (string, bool), home string) string {
	return xdgDir(env, "XDG_CONFIG_HOME", home, ".config")
}

// ProjectFileName is the project file Load reads from the repository root.
const ProjectFileName = ".dream.toml"

// xdgDir resolves an XDG base directory: the variable, else fallback under
// home. The XDG spec says a relative value must be ignored, so it is, rather
// than silently landing in whatever the working directory happens to be.
// Every XDG lookup of dream goes through here.
func xdgDir(env func(string) (string, bool), variable, home, fallback string) string {
	if env != nil {
		if v, ok := env(variable); ok && v != "" && filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, fallback)
}
