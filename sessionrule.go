package dream

import "github.com/dreamkit/dream/internal/gate"

// SessionRule says which transcripts a host agent itself counts as
// sessions and how it names the current one (see Config.SessionRule). The
// command line fills it from the agent's layout; an embedding host may
// build its own. Every field may be nil.
type SessionRule struct {
	// Match reports whether the regular file name, depth directories below
	// the sessions root (0: directly in it), is a session, and returns the
	// session id it carries in the form Same compares. Nil means any
	// *.jsonl, with the whole stem as id.
	Match func(depth int, name string) (id string, ok bool)
	// Descend reports whether the directory name, depth directories below
	// the root, is entered. Nil means every directory but "subagents".
	Descend func(depth int, name string) bool
	// Keep, when set, is asked about a file that Match accepted and that
	// was modified since the last consolidation: it gets the file's first
	// line (a few KiB at most) and decides from the agent's own metadata.
	Keep func(firstLine []byte) bool
	// Alias, when set, names the file that supersedes name in the same
	// directory: a file whose alias exists is not counted.
	Alias func(name string) string
	// Same reports whether the session with id is the current one, given
	// the id the agent hands its hooks. Nil means the generic suffix match.
	Same func(id, current string) bool
}

// sessionRuleOf converts a layout's rule into the public one.
func sessionRuleOf(r *gate.Rule) *SessionRule {
	if r == nil {
		return nil
	}
	return &SessionRule{Match: r.Match, Descend: r.Descend, Keep: r.Keep, Alias: r.Alias, Same: r.Same}
}

// gateRule converts the rule for the session scan; nil stays nil.
func (r *SessionRule) gateRule() *gate.Rule {
	if r == nil {
		return nil
	}
	return &gate.Rule{Match: r.Match, Descend: r.Descend, Keep: r.Keep, Alias: r.Alias, Same: r.Same}
}
