package settings

import "fmt"

// projectSafe lists the keys an untrusted project file may set: gate
// thresholds, budgets, pinned facts and review mode. Each can only make a
// dream rarer, smaller or more careful, or stop it. Every other key,
// including any key added later, moves where dream reads, writes or sends
// (memory, sessions, repository and state dirs, host layout, provider, base
// URL, model, lock backend, sync remote, hooks) and needs the user's trust:
// a repository cloned from anywhere must not point the model's write tool at
// ~/.ssh or the API key at its own server.
var projectSafe = map[string]bool{
	"enabled":      true,
	"min_hours":    true,
	"min_sessions": true,
	"max_turns":    true,
	"max_tokens":   true,
	"timeout":      true,
	"pinned":       true,
	"review":       true,
}

// ProjectSafe reports whether an untrusted project file may set key.
func ProjectSafe(key string) bool { return projectSafe[key] }

// refusedWarning is the one-line warning for a key refused from an
// untrusted project file: it names the key and the command that trusts it.
func refusedWarning(key, path string) string {
	return fmt.Sprintf("project file %s is not trusted: ignoring %s (it changes where dream reads, writes or sends); after reading the file, allow it with: dream trust %s", path, key, path)
}
