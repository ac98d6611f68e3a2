package main

import (
	"path/filepath"
	"slices"
	"strings"
)

// The commands dream prints for a user to type next ("undo it: dream undo
// ID") must work when pasted exactly as printed. Two things break a pasted
// command: a path with a space or a quote in it, and a flag the first
// command was given that a fresh command would not find on its own. hint
// takes care of both; every such line goes through it.

// hint returns `dream args...` quoted for a POSIX shell, followed by the
// flags that located this invocation's state and that a new shell would not
// find again (see hintFlags).
func (a *app) hint(args ...string) string {
	words := append([]string{"dream"}, args...)
	if a.isJob() && !slices.Contains(args, "--job") {
		words = append(words, "--job", a.job)
	}
	words = append(words, a.hintFlags()...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// hintFlags are the flags a pasted command needs to see what this one saw:
// the state dir, when it came from a flag (one from the config file or the
// environment is found again by the pasted command), or when a command
// chose its own (the demo's). The memory dir is not needed: the id finds
// it. Lock-backend flags (--lock etcd and its endpoints, certificates and
// password) are not repeated: a password has no place in printed output,
// and a shared lock belongs in the config file, where the pasted command
// finds it.
func (a *app) hintFlags() []string {
	dir := a.hintStateDir
	if dir == "" && strings.HasPrefix(a.loaded.Source["state_dir"], "flag") {
		dir = a.loaded.Settings.StateDir
	}
	if dir == "" {
		return nil
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return []string{"--state-dir", dir}
}

// shellQuote returns s as one word for sh: unchanged when it holds only
// characters no shell treats specially, else in single quotes, each single
// quote inside closed, escaped and reopened.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
