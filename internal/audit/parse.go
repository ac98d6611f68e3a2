package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// parseRawNumstat reads the output of `git diff --raw --numstat -z
// --no-renames`: raw records (":modes shas STATUS\0path\0") then numstat
// records ("added\tremoved\tpath\0", "-" for binary). It returns one
// FileStat per path, sorted.
func parseRawNumstat(out []byte) ([]FileStat, error) {
	byPath := map[string]*FileStat{}
	get := func(p string) *FileStat {
		fs := byPath[p]
		if fs == nil {
			fs = &FileStat{Path: p}
			byPath[p] = fs
		}
		return fs
	}
	toks := bytes.Split(out, []byte{0})
	for i := 0; i < len(toks); i++ {
		tok := string(toks[i])
		if tok == "" {
			continue
		}
		if strings.HasPrefix(tok, ":") {
			f := strings.Fields(tok)
			if len(f) < 5 || i+1 >= len(toks) || len(toks[i+1]) == 0 {
				return nil, fmt.Errorf("parse git raw diff: bad record %q", tok)
			}
			i++
			status, err := statusWord(f[4])
			if err != nil {
				return nil, err
			}
			get(string(toks[i])).Status = status
			continue
		}
		a, rest, ok1 := strings.Cut(tok, "\t")
		r, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 || path == "" {
			return nil, fmt.Errorf("parse git numstat: bad record %q", tok)
		}
		fs := get(path)
		var err error
		if fs.Added, err = count(a); err != nil {
			return nil, err
		}
		if fs.Removed, err = count(r); err != nil {
			return nil, err
		}
	}
	out2 := make([]FileStat, 0, len(byPath))
	for _, fs := range byPath {
		if fs.Status == "" {
			return nil, fmt.Errorf("parse git diff: %s has counts but no status", fs.Path)
		}
		out2 = append(out2, *fs)
	}
	sort.Slice(out2, func(i, j int) bool { return out2[i].Path < out2[j].Path })
	return out2, nil
}

func count(s string) (int, error) {
	if s == "-" { // binary
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("parse git numstat: bad count %q", s)
	}
	return n, nil
}

// statusWord turns git's status letter into the words the journal uses.
func statusWord(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("parse git raw diff: empty status")
	}
	switch s[0] {
	case 'A':
		return "added", nil
	case 'D':
		return "deleted", nil
	case 'M', 'T':
		return "modified", nil
	}
	return "", fmt.Errorf("parse git raw diff: unexpected status %q", s)
}

// commitInfo is one commit as listed by `git log -z --format=logFormat`.
type commitInfo struct {
	sha      string
	time     time.Time
	trailers map[string]string
	units    []json.RawMessage
}

const logFormat = "--format=%H%x1f%ct%x1f%B"

// parseLog reads NUL-separated commits in logFormat.
func parseLog(out []byte) ([]commitInfo, error) {
	var res []commitInfo
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(bytes.TrimSpace(rec)) == 0 {
			continue
		}
		parts := strings.SplitN(strings.TrimLeft(string(rec), "\n"), "\x1f", 3)
		if len(parts) != 3 || len(parts[0]) < 40 {
			return nil, fmt.Errorf("parse git log: bad record %.80q", rec)
		}
		sec, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse git log: bad time %q", parts[1])
		}
		res = append(res, commitInfo{sha: parts[0], time: time.Unix(sec, 0).UTC(), trailers: parseTrailers(parts[2]), units: parseUnits(parts[2])})
	}
	return res, nil
}

// unitsHeading opens the message's block of units (see Meta.Units): one
// JSON object a line after it, up to a blank line. It comes before the
// quoted diff, whose lines all start with a diff's own prefixes, so that
// the diff cannot forge it.
const unitsHeading = "Units removed or rewritten (one JSON object each):\n"

// parseUnits reads the units block of a message; nil when it has none.
func parseUnits(msg string) []json.RawMessage {
	i := strings.Index(msg, "\n\n"+unitsHeading)
	if i < 0 {
		return nil
	}
	var out []json.RawMessage
	for _, line := range strings.Split(msg[i+2+len(unitsHeading):], "\n") {
		if line == "" {
			break
		}
		if !json.Valid([]byte(line)) {
			return nil
		}
		out = append(out, json.RawMessage(line))
	}
	return out
}

// parseTrailers reads "Key: value" lines of the message's last paragraph,
// the only place dream writes them (a diff quoted in the body cannot forge
// them because the trailer paragraph always comes last).
func parseTrailers(msg string) map[string]string {
	msg = strings.TrimRight(msg, "\n")
	if i := strings.LastIndex(msg, "\n\n"); i >= 0 {
		msg = msg[i+2:]
	} else {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(msg, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || !strings.HasPrefix(k, "Dream-") || strings.ContainsAny(k, " \t") {
			return nil // not a trailer block
		}
		out[k] = v
	}
	return out
}

// parseBatch reads `git cat-file --batch` output for n requests in order:
// "<oid> <type> <size>\n<content>\n" or "<request> missing\n". A missing
// object is reported as absent.
func parseBatch(out []byte, n int) ([]version, error) {
	res := make([]version, 0, n)
	for i := 0; i < n; i++ {
		nl := bytes.IndexByte(out, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("parse git cat-file: truncated header for object %d", i)
		}
		header := string(out[:nl])
		out = out[nl+1:]
		if strings.HasSuffix(header, " missing") || strings.HasSuffix(header, " ambiguous") {
			res = append(res, version{absent: true})
			continue
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			return nil, fmt.Errorf("parse git cat-file: bad header %q", header)
		}
		if f[1] != "blob" {
			return nil, fmt.Errorf("parse git cat-file: object %d is a %s, not a file", i, f[1])
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 || size+1 > len(out) || out[size] != '\n' {
			return nil, fmt.Errorf("parse git cat-file: bad size %q", f[2])
		}
		res = append(res, version{data: append([]byte(nil), out[:size]...)})
		out = out[size+1:]
	}
	if len(out) != 0 {
		return nil, fmt.Errorf("parse git cat-file: %d unexpected trailing bytes", len(out))
	}
	return res, nil
}
