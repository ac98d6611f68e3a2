package audit

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// The change parsers read git's "-z --raw --numstat -p" output, which
// interleaves NUL-terminated records (raw: ":modes shas STATUS\0path\0",
// numstat: "added\tremoved\tpath\0") with the patch as plain text after an
// empty record. They walk it record by record rather than splitting it, so
// any name git can store — a newline, a tab, bytes that look like a record —
// is read as the name it is.

// parseChange reads one change (`git diff --cached -z --raw --numstat -p`):
// its files, sorted, and its patch.
func parseChange(out []byte) ([]FileStat, string, error) {
	files, rest, err := parseRecords(out)
	if err != nil {
		return nil, "", err
	}
	return files, string(rest), nil
}

// parseRecords reads raw and numstat records up to the empty record that
// precedes the patch (or the end), and returns the files and what follows.
func parseRecords(out []byte) ([]FileStat, []byte, error) {
	var recs bytes.Buffer
	for len(out) > 0 {
		if out[0] == 0 { // the empty record: the patch follows
			out = out[1:]
			break
		}
		tok, rest, ok := bytes.Cut(out, []byte{0})
		if !ok {
			return nil, nil, fmt.Errorf("parse git diff: unterminated record %.80q", out)
		}
		recs.Write(tok)
		recs.WriteByte(0)
		out = rest
		if tok[0] == ':' { // a raw record: its path is the next token
			path, rest, ok := bytes.Cut(out, []byte{0})
			if !ok {
				return nil, nil, fmt.Errorf("parse git raw diff: record %.80q has no path", tok)
			}
			recs.Write(path)
			recs.WriteByte(0)
			out = rest
		}
	}
	files, err := parseRawNumstat(recs.Bytes())
	return files, out, err
}

// logMarker starts every commit of logFullFormat; the header it opens ends
// with "\x1e\x00", which no commit message can contain (git refuses NUL).
const logMarker = "\x00\x1eCOMMIT"

// logFullFormat prints a commit's sha, time and message ahead of its raw,
// numstat and patch output.
const logFullFormat = "--format=%x00%x1eCOMMIT%H%x1f%ct%x1f%B%x1e"

// loggedCommit is one commit of a full log: its info, files and patch.
type loggedCommit struct {
	info  commitInfo
	files []FileStat
	patch string
}

// parseLogFull reads `git log -z --raw --numstat -p logFullFormat`.
// Patches hold no NUL (git shows NUL-bearing content as binary), so a NUL in
// the patch text can only start the next commit.
func parseLogFull(out []byte) ([]loggedCommit, error) {
	var res []loggedCommit
	for len(out) > 0 {
		if !bytes.HasPrefix(out, []byte(logMarker)) {
			return nil, fmt.Errorf("parse git log: expected a commit at %.40q", out)
		}
		out = out[len(logMarker):]
		header, rest, ok := bytes.Cut(out, []byte("\x1e\x00"))
		if !ok {
			return nil, fmt.Errorf("parse git log: unterminated commit header")
		}
		out = bytes.TrimPrefix(rest, []byte("\n"))
		parts := bytes.SplitN(header, []byte{0x1f}, 3)
		if len(parts) != 3 || len(parts[0]) < 40 {
			return nil, fmt.Errorf("parse git log: bad header %.80q", header)
		}
		sec, err := strconv.ParseInt(string(parts[1]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse git log: bad time %q", parts[1])
		}
		c := loggedCommit{info: commitInfo{sha: string(parts[0]), time: time.Unix(sec, 0).UTC(), trailers: parseTrailers(string(parts[2])), units: parseUnits(string(parts[2]))}}
		if len(out) > 0 && out[0] == ':' {
			if c.files, out, err = parseRecords(out); err != nil {
				return nil, err
			}
			end := bytes.IndexByte(out, 0)
			if end < 0 {
				end = len(out)
			}
			c.patch, out = string(out[:end]), out[end:]
		}
		res = append(res, c)
	}
	return res, nil
}
