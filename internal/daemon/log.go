package daemon

import (
	"io"
	"log/slog"
	"os"
)

// NewLogger returns the daemon's logger: text for a person at a terminal,
// JSON (one object a line) for a supervisor's journal or a log shipper.
func NewLogger(w io.Writer, terminal bool, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if terminal {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func pid() int { return os.Getpid() }
