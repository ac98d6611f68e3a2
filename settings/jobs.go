package settings

import (
	"fmt"
	"strings"
)

// JobKey is the config files' array of tables that defines jobs: each
// [[job]] is one background job run the way the memory dream is run (see
// package jobs, which validates them).
const JobKey = "job"

// JobTable is one [[job]] table as a config file wrote it.
type JobTable struct {
	// Fields are the table's keys and TOML values.
	Fields map[string]any
	// Source is "user file PATH" or "project file PATH".
	Source string
	// Trusted is set for the user's own file and for a project file the
	// user trusted; an untrusted project's table may only tighten a job
	// the user defined (see Tightens).
	Trusted bool
}

// jobTablesOf returns the [[job]] tables of a decoded document. A "job"
// written as anything but tables becomes one table holding only the
// problem, which the validation reports naming the key.
func jobTablesOf(v any) []map[string]any {
	switch x := v.(type) {
	case []map[string]any:
		return x
	case []any:
		out := make([]map[string]any, 0, len(x))
		for _, it := range x {
			t, ok := it.(map[string]any)
			if !ok {
				t = map[string]any{"": fmt.Sprintf("a job must be a [[job]] table, not %v", it)}
			}
			out = append(out, t)
		}
		return out
	case map[string]any:
		return []map[string]any{x}
	}
	return []map[string]any{{"": fmt.Sprintf("job must be written as [[job]] tables, not %v", v)}}
}

// IsKey reports whether name is a top-level settings key.
func IsKey(name string) bool {
	_, ok := lookup(name)
	return ok && !strings.Contains(name, "-")
}

// ApplyKey sets the top-level key name on s from a job table's TOML value,
// with the key's own parser and bounds: a job's min_hours or timeout is
// checked exactly as the top-level one is. On a bad value s is unchanged.
func ApplyKey(s *Settings, name string, v any, home string) error {
	sp, ok := lookup(name)
	if !ok {
		return fmt.Errorf("unknown key %q", name)
	}
	next := *s
	if err := sp.apply(&next, rawFromTOML(v), home); err != nil {
		return err
	}
	if err := checkRange(name, &next); err != nil {
		return err
	}
	sp.reset(s, &next)
	return nil
}

// Tightens reports whether an untrusted project file may move key from
// inForce to proposed: key is one of the harmless keys (ProjectSafe) and
// the value is no looser than the one in force, by the same rule a
// top-level value of the project file obeys.
func Tightens(key string, inForce, proposed *Settings) bool {
	rule, ok := projectRules[key]
	return ok && rule != nil && rule(inForce, proposed)
}

// Format prints key's value in s as `dream config` does; "" for an
// unknown key.
func Format(key string, s *Settings) string {
	sp, ok := lookup(key)
	if !ok {
		return ""
	}
	return sp.format(s)
}

// CopyKey sets key on dst to its value in src.
func CopyKey(dst, src *Settings, key string) {
	if sp, ok := lookup(key); ok {
		sp.reset(dst, src)
	}
}
