package compact

import (
	"context"

	"github.com/dreamkit/dream/internal/history"
)

// Archive is where compaction writes: nanobot's history.jsonl. Append must
// be durable when it returns, because the session's cursor moves past the
// archived messages right after.
type Archive interface {
	Append(ctx context.Context, text string, maxChars int, sessionKey string) (cursor int64, err error)
}

// WorkspaceHistory is the history.jsonl of a nanobot memory dir
// (WORKSPACE/memory), appended under its cross-process lock.
func WorkspaceHistory(memoryDir string) Archive {
	return workspaceHistory{history.Open(memoryDir, history.Options{})}
}

type workspaceHistory struct{ log *history.Log }

func (w workspaceHistory) Append(ctx context.Context, text string, maxChars int, sessionKey string) (int64, error) {
	e, err := w.log.Append(ctx, text, history.AppendOptions{MaxChars: maxChars, SessionKey: sessionKey})
	return e.Cursor, err
}

// Caps, from the history package (nanobot's values).
const (
	RawArchiveMaxChars = history.RawArchiveMaxChars
	SummaryMaxChars    = history.SummaryMaxChars
)
