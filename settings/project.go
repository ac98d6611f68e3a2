package settings

import "fmt"

// tightens reports whether proposed holds a value for one key that is no
// looser than the value inForce holds: it stops dreams, makes them rarer or
// smaller, or makes them more careful.
type tightens func(inForce, proposed *Settings) bool

// projectRules lists the keys an untrusted project file may set, each with
// the rule its value must obey: it may only tighten the value in force from
// the layers below (defaults and the user's own file). A repository can
// make dreams rarer, smaller or more careful, or stop them, but never
// bigger or more frequent than the user asked, because "harmless" only
// holds in that direction: max_tokens = 1e9 from a cloned repository spends
// the user's money. pinned has no rule here: its entries are merged, so an
// untrusted file can add pins and never drop one (mergePins).
//
// Every other key, including any key added later, moves where dream reads,
// writes or sends (memory, sessions, repository and state dirs, host
// layout, provider, base URL, model, lock backend, sync remote, hooks) and
// needs the user's trust: a repository cloned from anywhere must not point
// the model's write tool at ~/.ssh or the API key at its own server.
var projectRules = map[string]tightens{
	"enabled":      func(f, p *Settings) bool { return f.Enabled || !p.Enabled },
	"review":       func(f, p *Settings) bool { return !f.Review || p.Review },
	"min_hours":    func(f, p *Settings) bool { return p.MinHours >= f.MinHours },
	"min_sessions": func(f, p *Settings) bool { return p.MinSessions >= f.MinSessions },
	"max_turns":    func(f, p *Settings) bool { return p.MaxTurns <= f.MaxTurns },
	"max_tokens":   func(f, p *Settings) bool { return p.MaxTokens <= f.MaxTokens },
	"timeout":      func(f, p *Settings) bool { return p.Timeout <= f.Timeout },
	"pinned":       nil,
}

// ProjectSafe reports whether an untrusted project file may set key at all;
// even then only a value that tightens the one in force applies.
func ProjectSafe(key string) bool {
	_, ok := projectRule(key)
	return ok
}

// projectRule is key's rule in projectRules or ceilingRules.
func projectRule(key string) (tightens, bool) {
	if rule, ok := projectRules[key]; ok {
		return rule, ok
	}
	rule, ok := ceilingRules[key]
	return rule, ok
}

// setUntrusted applies one value from an untrusted project file: a key
// that is not project-safe is refused, a value that would loosen the one in
// force is refused, and a bad value keeps the value in force (falling back
// to the default, as trusted layers do, could itself loosen the user's
// setting). Each refusal is one warning line and an entry in Refused.
func (l *Loaded) setUntrusted(s spec, r raw, path, source, home string) {
	rule, safe := projectRule(s.Name)
	if !safe {
		l.refuse(s.Name, refusedWarning(s.Name, path))
		return
	}
	proposed := l.Settings
	err := s.apply(&proposed, r, home)
	if err == nil {
		err = checkRange(s.Name, &proposed)
	}
	if err != nil {
		if r.note != "" {
			err = fmt.Errorf("%s: %w", r.note, err)
		}
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s = %q from %s: %v; keeping %s from %s",
			s.Name, r.String(), source, err, s.format(&l.Settings), l.Source[s.Name]))
		return
	}
	if s.Name == "pinned" {
		l.mergePins(proposed.Pinned, source)
		return
	}
	if !rule(&l.Settings, &proposed) {
		l.refuse(s.Name, looseningWarning(s.Name, s.format(&proposed), s.format(&l.Settings), l.Source[s.Name], path))
		return
	}
	s.reset(&l.Settings, &proposed)
	l.Source[s.Name] = source
}

// mergePins adds the project's pins to the ones in force. An untrusted
// list is read as additions: a pin in force that it leaves out stays
// pinned, because dropping it would let a dream delete a fact the user
// protected. Nothing in the list is refused, so there is no warning (a
// repository that pins its own facts is the ordinary case). The source
// names the project file only when it added a pin.
func (l *Loaded) mergePins(project []string, source string) {
	have := make(map[string]bool, len(l.Settings.Pinned))
	for _, p := range l.Settings.Pinned {
		have[p] = true
	}
	var added []string
	for _, p := range project {
		if !have[p] {
			have[p] = true
			added = append(added, p)
		}
	}
	if len(added) == 0 {
		return
	}
	if len(l.Settings.Pinned) > 0 {
		source = l.Source["pinned"] + " + " + source
	}
	l.Settings.Pinned = append(append([]string(nil), l.Settings.Pinned...), added...)
	l.Source["pinned"] = source
}

func (l *Loaded) refuse(key, warning string) {
	l.Refused = append(l.Refused, key)
	l.Warnings = append(l.Warnings, warning)
}

// refusedWarning is the one-line warning for a key refused from an
// untrusted project file: it names the key and the command that trusts it.
func refusedWarning(key, path string) string {
	return fmt.Sprintf("project file %s is not trusted: ignoring %s (it changes where dream reads, writes or sends); after reading the file, allow it with: dream trust %s", path, key, path)
}

// looseningWarning is the one-line warning for a project-safe key whose
// value an untrusted project file may not apply because it loosens the
// value in force (inForce, from source) instead of tightening it.
func looseningWarning(key, value, inForce, source, path string) string {
	current := "the default " + inForce
	if source != "default" {
		current = "the user's setting " + inForce + " from " + source
	}
	return fmt.Sprintf("project file %s is not trusted: ignoring %s = %s (it would loosen %s); after reading the file, allow it with: dream trust %s",
		path, key, value, current, path)
}
