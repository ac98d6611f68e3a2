package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// maxLine bounds one line. The writer keeps every event under it (a few
// hundred bytes usually, a capped list at most); the reader accepts the
// same bound, and counts anything longer as malformed without buffering it.
// It is generous because older writers listed every touched file (a
// 30,000-file dream wrote a 456 KB line).
const maxLine = 1 << 20

// ParseLine decodes one log line. It rejects a line that is not a JSON
// object, has no event name, or has no time, so that Read can count it as
// malformed.
func ParseLine(line []byte) (Event, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Event{}, errors.New("empty line")
	}
	if len(line) > maxLine {
		return Event{}, fmt.Errorf("line of %d bytes is too long", len(line))
	}
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, fmt.Errorf("decoding event: %w", err)
	}
	if e.Name == "" {
		return Event{}, errors.New("event without a name")
	}
	if e.Time.IsZero() {
		return Event{}, fmt.Errorf("%s event without a time", e.Name)
	}
	return e, nil
}

// Read returns the events at or after since (all when since is zero),
// oldest first. Malformed lines are skipped; a missing log is no events.
func (l *Log) Read(since time.Time) ([]Event, error) {
	events, _, err := l.ReadCounting(since)
	return events, err
}

// ReadCounting is Read that also reports how many malformed lines it skipped.
func (l *Log) ReadCounting(since time.Time) (events []Event, malformed int, err error) {
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading telemetry: %w", err)
	}
	defer f.Close()
	events, malformed, err = readEvents(f, since)
	if err != nil {
		return nil, 0, fmt.Errorf("reading telemetry %s: %w", l.path, err)
	}
	return events, malformed, nil
}

// readEvents scans r line by line. An over-long line is consumed and counted
// without being held in memory, so a damaged log cannot exhaust it. Blank
// lines are not events and not malformed.
func readEvents(r io.Reader, since time.Time) (events []Event, malformed int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, isPrefix, rerr := br.ReadLine()
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return events, malformed, rerr
		}
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > maxLine {
				tooLong, line = true, line[:0]
			}
		}
		if isPrefix {
			continue
		}
		switch {
		case tooLong:
			malformed++
		case len(bytes.TrimSpace(line)) == 0:
		default:
			e, perr := ParseLine(line)
			if perr != nil {
				malformed++
			} else if since.IsZero() || !e.Time.Before(since) {
				events = append(events, e)
			}
		}
		line, tooLong = line[:0], false
	}
	return events, malformed, nil
}

// Stats summarises the log since a time, counting malformed lines.
func (l *Log) Stats(since time.Time) (Stats, error) {
	events, malformed, err := l.ReadCounting(since)
	if err != nil {
		return Stats{}, err
	}
	s := Summarize(events, since)
	s.Malformed = malformed
	return s, nil
}
