package settings

import (
	"fmt"
	"time"
)

// Upper bounds of the numeric keys. A value past them is a typo or an
// attack, not a preference, and some would overflow: min_hours is turned
// into a time.Duration, which ends at about 2.56 million hours, and a
// wrapped duration opens the time gate on every call. The bounds are far
// beyond any real use and still far inside every type's range.
const (
	MaxMinHours    = 24 * 365 * 10 // ten years
	MaxMinSessions = 1_000_000
	MaxMaxTurns    = 10_000
	MaxMaxTokens   = 1_000_000_000
	MaxTimeout     = 7 * 24 * time.Hour
	// MaxMaxUntracedDeletions is past any single dream's deletions.
	MaxMaxUntracedDeletions = 1_000_000
)

// rangeChecks holds the upper bound of each numeric key, applied after the
// key's parser accepted the value (which already requires > 0).
var rangeChecks = map[string]func(s *Settings) error{
	"min_hours": func(s *Settings) error {
		return atMost(s.MinHours <= MaxMinHours, fmt.Sprintf("%d (ten years)", MaxMinHours))
	},
	"min_sessions": func(s *Settings) error {
		return atMost(s.MinSessions <= MaxMinSessions, fmt.Sprint(MaxMinSessions))
	},
	"max_turns": func(s *Settings) error {
		return atMost(s.MaxTurns <= MaxMaxTurns, fmt.Sprint(MaxMaxTurns))
	},
	"max_tokens": func(s *Settings) error {
		return atMost(s.MaxTokens <= MaxMaxTokens, fmt.Sprint(MaxMaxTokens))
	},
	"max_untraced_deletions": func(s *Settings) error {
		return atMost(s.MaxUntracedDeletions <= MaxMaxUntracedDeletions, fmt.Sprint(MaxMaxUntracedDeletions))
	},
	"timeout": func(s *Settings) error {
		return atMost(s.Timeout <= MaxTimeout, "168h (seven days)")
	},
}

// checkRange applies key's upper bound, if it has one, to s.
func checkRange(key string, s *Settings) error {
	if check, ok := rangeChecks[key]; ok {
		return check(s)
	}
	if check, ok := ceilingRanges[key]; ok {
		return check(s)
	}
	return nil
}

func atMost(ok bool, limit string) error {
	if ok {
		return nil
	}
	return fmt.Errorf("must be at most %s", limit)
}
