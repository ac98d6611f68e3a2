package main

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/dreamkit/dream/cmd/dream/internal/cmdline"
	"github.com/dreamkit/dream/settings"
)

// didYouMean returns the candidates closest to typed, best first: those
// within a small edit distance (a swap of two neighbours counts as one
// edit, as in "stauts"), or that typed is a prefix of. Nothing when none
// is close, so that a wild guess gets no misleading answer.
func didYouMean(typed string, candidates []string) []string {
	typed = strings.ToLower(typed)
	limit := 1
	if len(typed) > 4 {
		limit = 2
	}
	type scored struct {
		name string
		d    int
	}
	var close []scored
	for _, c := range candidates {
		d := editDistance(typed, strings.ToLower(c))
		switch {
		case d <= limit:
			close = append(close, scored{c, d})
		case len(typed) >= 3 && strings.HasPrefix(c, typed):
			close = append(close, scored{c, limit + 1})
		}
	}
	sort.SliceStable(close, func(i, j int) bool { return close[i].d < close[j].d })
	var out []string
	for _, s := range close {
		if len(out) == 3 || (len(out) > 0 && s.d > close[0].d) {
			break
		}
		out = append(out, s.name)
	}
	return out
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of adjacent characters.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// unknownCommand is the usage error for a command that does not exist.
func unknownCommand(name string) error {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if s := didYouMean(name, names); len(s) > 0 {
		return usagef("unknown command %q; did you mean %s? (dream help lists every command)", name, orList(quoteEach("dream ", s)))
	}
	return usagef("unknown command %q (dream help lists every command)", name)
}

func quoteEach(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// flagError rewrites an error of the flag package as a usage error a user
// can act on: flags with two dashes, the flag's expected value, and for a
// flag that does not exist the command's flags it is closest to.
func flagError(fs *flag.FlagSet, cmd string, err error) error {
	msg := err.Error()
	see := fmt.Sprintf("(dream help %s lists its flags)", cmd)
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag provided but not defined: "), "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := didYouMean(name, names); len(s) > 0 {
			return usagef("dream %s has no flag --%s; did you mean %s? %s", cmd, name, orList(quoteEach("--", s)), see)
		}
		return usagef("dream %s has no flag --%s %s", cmd, name, see)
	case strings.HasPrefix(msg, "flag needs an argument: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag needs an argument: "), "-")
		return usagef("--%s needs a value: --%s %s %s", name, name, placeholder(fs.Lookup(name)), see)
	case strings.HasPrefix(msg, "invalid value "), strings.HasPrefix(msg, "invalid boolean value "):
		// invalid value "abc" for flag -since: parse error
		var value, name string
		if i := strings.Index(msg, " for flag -"); i >= 0 {
			value = strings.TrimPrefix(strings.TrimPrefix(msg[:i], "invalid value "), "invalid boolean value ")
			name = strings.SplitN(msg[i+len(" for flag -"):], ":", 2)[0]
		} else if i := strings.Index(msg, " for -"); i >= 0 {
			value = strings.TrimPrefix(msg[:i], "invalid boolean value ")
			name = strings.SplitN(msg[i+len(" for -"):], ":", 2)[0]
		}
		if name != "" {
			return usagef("--%s %s: %s %s", name, value, wants(fs.Lookup(name)), see)
		}
	case strings.HasPrefix(msg, "bad flag syntax: "):
		return usagef("bad flag syntax %q: write flags as --name or --name VALUE %s", strings.TrimPrefix(msg, "bad flag syntax: "), see)
	}
	return usagef("%s %s", strings.ReplaceAll(msg, " -", " --"), see)
}

// settingsError is the usage error for a settings flag with a bad value,
// or a settings file that cannot be read.
func settingsError(cmd string, err error) error {
	var fe *settings.FlagValueError
	if errors.As(err, &fe) {
		return usagef("--%s %q: %v (dream help %s lists its flags)", fe.Flag, fe.Value, fe.Err, cmd)
	}
	return usagef("%v", err)
}

// missingValue finds a flag that takes a value but is followed by another
// flag ("--memory-dir --state-dir S"), which the flag package would take as
// the value. A value that begins with one dash ("-2") is still a value.
func missingValue(fs *flag.FlagSet, cmd string, args []string) error {
	if f, next := cmdline.MissingValue(fs, args); f != nil {
		return usagef("--%s needs a value: --%s %s (got the flag %s next) (dream help %s lists its flags)", f.Name, f.Name, placeholder(f), next, cmd)
	}
	return nil
}

// wants says what a flag's value must be.
func wants(f *flag.Flag) string {
	if f == nil {
		return "not a valid value"
	}
	switch placeholder(f) {
	case "DURATION":
		return "want a duration such as 90s, 10m or 168h"
	case "N":
		return "want a whole number"
	case "NUMBER":
		return "want a number"
	}
	if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
		return "want true or false (or leave the value out)"
	}
	return "not a valid value"
}

// unknownWord is the usage error for a subcommand or argument not among
// valid: the nearest valid ones, then the whole list.
func unknownWord(what, typed string, valid []string, usage string) error {
	if near := didYouMean(typed, valid); len(near) > 0 {
		return usagef("unknown %s %q; did you mean %s? (%s)", what, typed, orList(near), usage)
	}
	return usagef("unknown %s %q: %s", what, typed, usage)
}
