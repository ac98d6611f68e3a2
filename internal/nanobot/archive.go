package nanobot

import "context"

// Archive is where compaction writes: nanobot's history.jsonl. Append must
// be durable when it returns, because the session's cursor moves past the
// archived messages right after.
type Archive interface {
	Append(ctx context.Context, text string, maxChars int, sessionKey string) (cursor int64, err error)
}

// WorkspaceHistory is the history.jsonl of a nanobot memory dir
// (WORKSPACE/memory), appended under its cross-process lock.
func WorkspaceHistory(memoryDir string) Archive {
	return workspaceHistory{OpenLog(memoryDir, LogOptions{})}
}

type workspaceHistory struct{ log *Log }

func (w workspaceHistory) Append(ctx context.Context, text string, maxChars int, sessionKey string) (int64, error) {
	e, err := w.log.Append(ctx, text, AppendOptions{MaxChars: maxChars, SessionKey: sessionKey})
	return e.Cursor, err
}
