package settings

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// The rules a value can break, worded for the warning the user reads.
var (
	errFloat    = errors.New("must be a finite number > 0")
	errInt      = errors.New("must be a whole number > 0")
	errDuration = errors.New("must be a duration > 0 such as 90s or 10m, or a number of seconds")
	errBool     = errors.New("must be true or false")
	errText     = errors.New("must be a single string")
	errList     = errors.New("must be a list of strings")
)

// parseFloat accepts a finite number greater than zero. NaN and infinities
// are refused explicitly: strconv accepts them, and a NaN min_hours would
// make every comparison false and the time gate never open.
func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return 0, errFloat
	}
	return f, nil
}

// parseInt accepts a whole number greater than zero that fits in an int64.
// It goes through ParseFloat so that "1e3" is accepted and "1.5" is refused
// with the same message as "-1".
func parseInt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 {
			return 0, errInt
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f != math.Trunc(f) || f >= math.MaxInt64 {
		return 0, errInt
	}
	return int64(f), nil
}

// parseDuration accepts Go duration syntax ("90s", "1h30m") or a plain
// number of seconds ("600", "1.5"); the result must be greater than zero.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return 0, errDuration
		}
		return d, nil
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(secs) || secs <= 0 || secs*float64(time.Second) >= math.MaxInt64 {
		return 0, errDuration
	}
	d := time.Duration(secs * float64(time.Second))
	if d <= 0 {
		// A positive number of seconds below one nanosecond.
		return 0, errDuration
	}
	return d, nil
}

// parseBool accepts what strconv.ParseBool does plus yes/no and on/off,
// which people write in environment variables.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "yes", "y", "on":
		return true, nil
	case "0", "f", "false", "no", "n", "off":
		return false, nil
	}
	return false, errBool
}

// parseList splits a list written on one line or in one variable: items are
// separated by newlines or semicolons, trimmed, and empty items dropped.
func parseList(s string) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ';' })
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// formatFloat prints a float the shortest way that parses back exactly.
func formatFloat(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
