package daemon

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoggerTextOnTerminalJSONOtherwise(t *testing.T) {
	var text, js bytes.Buffer
	NewLogger(&text, true, slog.LevelInfo).Info("dream finished", "memory_dir", "/home/u/笔记", "status", "completed")
	NewLogger(&js, false, slog.LevelInfo).Info("dream finished", "memory_dir", "/home/u/笔记", "status", "completed")
	if !strings.Contains(text.String(), `msg="dream finished"`) || strings.HasPrefix(text.String(), "{") {
		t.Errorf("terminal log is not text: %q", text.String())
	}
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil || m["msg"] != "dream finished" || m["memory_dir"] != "/home/u/笔记" {
		t.Errorf("non-terminal log is not JSON: %q %v", js.String(), err)
	}
	var quiet bytes.Buffer
	NewLogger(&quiet, false, slog.LevelWarn).Info("hidden")
	if quiet.Len() != 0 {
		t.Errorf("level not honoured: %q", quiet.String())
	}
}

// Two transcript dirs feeding one memory dir (a Claude Code worktree and
// its main checkout) are one target: activity in both is one dream.
func TestSharedMemoryDirIsOneTarget(t *testing.T) {
	root := t.TempDir()
	main := newProject(t, root, "app")
	wt := project{mem: main.mem, sessions: filepath.Join(root, "app-feature", "sessions")}
	writeFile(t, filepath.Join(wt.sessions, ".keep"), "")
	rec := newRecorder(200 * time.Millisecond)
	h := startDaemon(t, root, rec, 2, 300*time.Millisecond, []project{main, wt}, nil)
	st := h.d.Status()
	if len(st.Projects) != 1 || len(st.Projects[0].SessionsDirs) != 2 {
		t.Fatalf("status %+v, want one memory dir fed by two sessions dirs", st.Projects)
	}
	touchSessions(t, main, 3)
	touchSessions(t, wt, 3)
	waitUntil(t, 60*time.Second, "the walk", func() bool { return h.walksDone(1) })
	count, maxPer, _ := rec.snapshot()
	if count[main.mem] != 1 || maxPer[main.mem] != 1 {
		t.Errorf("%d dreams (%d at once), want 1", count[main.mem], maxPer[main.mem])
	}
}
