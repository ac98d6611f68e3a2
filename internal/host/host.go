// Package host knows where each supported agent keeps its memory directory
// and its session transcripts, so that `dream --host claude` needs no paths.
//
// Every layout here is a reading of the agent's own on-disk conventions, not
// an API they promise; where an agent has no convention (or none that could
// be confirmed) the default chosen is written into Layout.Notes so the user
// sees the assumption and can override it with --memory-dir or
// --sessions-dir.
package host

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dreamkit/dream/internal/fsutil"
)

// resolver derives a Layout; each host has one.
type resolver func(repoDir, home string, env func(string) (string, bool)) (Layout, error)

// hosts is the registry, in the order Names lists them.
var hosts = []struct {
	name string
	// needsRepo is true for hosts that key their storage by project.
	needsRepo bool
	resolve   resolver
	// command is the agent's program, which answers --version.
	command string
	// verified is the agent version the layout was checked against, by
	// running that version (the conformance suite); "" when none was.
	verified string
	// index is how the agent loads and limits its index (IndexLimitOf);
	// nil for an agent that keeps none.
	index func() IndexLimit
	// discover is how Discover finds its projects.
	discover discovery
}{
	{"claude", true, resolveClaude, "claude", "2.1.197", claudeIndexLimit, perCWD},
	{"codex", false, resolveCodex, "codex", "0.171.0", nil, global},
	{"gemini", true, resolveGemini, "gemini", "0.61.0", nil, byMarker},
	{"nanobot", false, resolveNanobot, "nanobot", "", nil, global},
	{"codebot", true, resolveCodebot, "codebot", "", codebotIndexLimit, perCWD},
	{"dir", true, resolveDir, "", "", nil, notFound},
}

// Agent returns host's program (which answers --version) and the agent
// version its layout was verified against ("" when none was).
func Agent(host string) (command, verified string) {
	for _, h := range hosts {
		if h.name == host {
			return h.command, h.verified
		}
	}
	return "", ""
}

// Names returns the valid host names.
func Names() []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h.name
	}
	return out
}

// Resolve returns where host keeps memory and transcripts for the repository
// at repoDir. home is the user's home directory and env looks up environment
// variables (os.LookupEnv in production); both are parameters so that tests
// run against a fake home. A relative repoDir is made absolute against the
// working directory, because the agents key their storage by absolute path.
func Resolve(host, repoDir, home string, env func(string) (string, bool)) (Layout, error) {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	for _, h := range hosts {
		if h.name != host {
			continue
		}
		if h.needsRepo {
			if repoDir == "" {
				return Layout{}, fmt.Errorf("host %s: a repository directory is needed to locate its memory", host)
			}
			abs, err := filepath.Abs(repoDir)
			if err != nil {
				return Layout{}, fmt.Errorf("host %s: repository directory %s: %w", host, repoDir, err)
			}
			repoDir = abs
		}
		l, err := h.resolve(repoDir, home, env)
		if err != nil {
			return Layout{}, fmt.Errorf("host %s: %w", host, err)
		}
		l.Host = host
		return l, nil
	}
	if host == "" {
		return Layout{}, fmt.Errorf("no host given; valid hosts: %s", strings.Join(Names(), ", "))
	}
	return Layout{}, fmt.Errorf("unknown host %q; valid hosts: %s", host, strings.Join(Names(), ", "))
}

// agentHomeFrom returns the directory named by variable if it is set to an
// absolute path, else home joined with dflt, and says which it was (for
// Layout.Sources). It fails only when neither is available, so that a
// layout never silently lands in the working directory.
func agentHomeFrom(env func(string) (string, bool), variable, home, dflt string) (dir, from string, err error) {
	if v, ok := env(variable); ok && v != "" {
		v = fsutil.ExpandHome(v, home)
		if filepath.IsAbs(v) {
			return filepath.Clean(v), "variable " + variable, nil
		}
	}
	if home == "" {
		return "", "", fmt.Errorf("home directory unknown and %s not set", variable)
	}
	return filepath.Join(home, dflt), "default ~/" + dflt, nil
}

// matchPattern is the one pattern syntax of Layout.Files: doublestar.
func matchPattern(pattern, rel string) (bool, error) { return doublestar.Match(pattern, rel) }
