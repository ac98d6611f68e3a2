package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/llm/llmtest"
)

type historyJSON struct {
	Entries []struct {
		Cursor     int64  `json:"cursor"`
		Content    string `json:"content"`
		SessionKey string `json:"session_key"`
	} `json:"entries"`
	Problems     []struct{ Reason string } `json:"problems"`
	DreamCursor  int64                     `json:"dream_cursor"`
	LatestCursor int64                     `json:"latest_cursor"`
}

// Several dream processes append at once: every cursor once, no gap.
func TestHistoryAppendFromManyProcessesThenShowAndTail(t *testing.T) {
	t.Parallel()
	nw := newNanobotWorld(t, 0)
	os.Remove(filepath.Join(nw.ws, "memory", "history.jsonl"))
	os.Remove(filepath.Join(nw.ws, "memory", ".cursor"))
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for p := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				args := append(append([]string{"history", "append"}, nw.flags()...), "--session", fmt.Sprintf("telegram:%d", p), "--", fmt.Sprintf("- [durable] proc %d fact %d：用户喜欢简短回答", p, i))
				r := nw.dream(nil, args...)
				if r.code != 0 {
					errs <- r.String()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	r := nw.dream(nil, append([]string{"history", "show", "--json"}, nw.flags()...)...)
	v := decodeJSON[historyJSON](t, r)
	if len(v.Entries) != 24 || v.LatestCursor != 24 || len(v.Problems) != 0 {
		t.Fatalf("show: %d entries, latest %d, problems %v", len(v.Entries), v.LatestCursor, v.Problems)
	}
	for i, e := range v.Entries {
		if e.Cursor != int64(i+1) {
			t.Fatalf("entry %d has cursor %d", i, e.Cursor)
		}
	}
	os.WriteFile(filepath.Join(nw.ws, "memory", ".dream_cursor"), []byte("20"), 0o644)
	u := decodeJSON[historyJSON](t, nw.dream(nil, append([]string{"history", "show", "--unprocessed", "--json"}, nw.flags()...)...))
	if len(u.Entries) != 4 || u.DreamCursor != 20 {
		t.Fatalf("unprocessed: %d entries, dream cursor %d", len(u.Entries), u.DreamCursor)
	}
	tl := decodeJSON[historyJSON](t, nw.dream(nil, append([]string{"history", "tail", "-n", "2", "--session", "telegram:1", "--json"}, nw.flags()...)...))
	if len(tl.Entries) != 2 || tl.Entries[0].SessionKey != "telegram:1" || !strings.Contains(tl.Entries[1].Content, "proc 1 fact 7") {
		t.Fatalf("tail: %+v", tl.Entries)
	}
	if r := nw.dream(nil, append([]string{"history", "rewrite"}, nw.flags()...)...); r.code != exitUsage {
		t.Fatalf("unknown subcommand: %s", r)
	}
}

func writeSession(t *testing.T, dir, key string, updated time.Time, turns int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"_type": "metadata", "key": %q, "created_at": "2026-05-28T08:00:00", "updated_at": %q, "metadata": {"title": "灯光"}, "last_consolidated": 0}`+"\n", key, updated.Format("2006-01-02T15:04:05"))
	for i := range turns {
		fmt.Fprintf(&b, `{"role": "user", "content": "把第 %d 组灯改成 19:00 开", "timestamp": "2026-05-28T09:%02d:00"}`+"\n", i, i)
		fmt.Fprintf(&b, `{"role": "assistant", "content": "好的，第 %d 组已改为 19:00。", "tools_used": ["edit_file"], "timestamp": "2026-05-28T09:%02d:05"}`+"\n", i, i)
	}
	p := filepath.Join(dir, nanobot.StorageName(key))
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompactIdleSessionRefusesActiveAndLocked(t *testing.T) {
	t.Parallel()
	nw := newNanobotWorld(t, 0)
	sessions := filepath.Join(nw.root, "home", ".nanobot", "sessions")
	idle := writeSession(t, sessions, "telegram:8812", time.Now().Add(-time.Hour), 6)
	writeSession(t, sessions, "cli:direct", time.Now().Add(-time.Minute), 2)
	srv := llmtest.NewServer(llmtest.Turn{Text: "- [permanent] 用户希望所有灯 19:00 开启\n- [skip] 寒暄"})
	defer srv.Close()
	flags := append(nw.flags(), "--sessions-dir", sessions)

	r := nw.dream(modelEnv("openai", srv.URL, false), append([]string{"compact", "cli:direct", "--json"}, flags...)...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "active") {
		t.Fatalf("an active session must be refused:\n%s", r)
	}
	lock, _ := os.OpenFile(filepath.Join(sessions, nanobot.SessionsLockName), os.O_RDWR|os.O_CREATE, 0o644)
	syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
	r = nw.dream(modelEnv("openai", srv.URL, false), append([]string{"compact", "telegram:8812", "--json"}, flags...)...)
	lock.Close()
	if r.code != exitHeld || !strings.Contains(r.stderr, "locked") {
		t.Fatalf("a locked session must be refused:\n%s", r)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a refused compaction called the model")
	}

	r = nw.dream(modelEnv("openai", srv.URL, false), append([]string{"compact", "telegram:8812", "--json"}, flags...)...)
	if r.code != 0 {
		t.Fatalf("compact:\n%s", r)
	}
	v := decodeJSON[compactView](t, r)
	if v.Session != "telegram:8812" || v.LastConsolidated != 12 || v.Summaries != 1 || v.Archived != 12 {
		t.Fatalf("report: %+v", v)
	}
	h := decodeJSON[historyJSON](t, nw.dream(nil, append([]string{"history", "show", "--session", "telegram:8812", "--json"}, nw.flags()...)...))
	if len(h.Entries) != 1 || !strings.Contains(h.Entries[0].Content, "19:00 开启") {
		t.Fatalf("history after compaction: %+v", h.Entries)
	}
	data, _ := os.ReadFile(idle)
	if !strings.Contains(string(data), `"last_consolidated": 12`) || !strings.Contains(string(data), `"_last_summary": {"text": "- [permanent] 用户希望所有灯 19:00 开启`) {
		t.Fatalf("session file after compaction:\n%s", data)
	}
	// Nothing left to archive: a second run sends nothing.
	r = nw.dream(modelEnv("openai", srv.URL, false), append([]string{"compact", idle, "--json"}, flags...)...)
	if r.code != 0 || len(srv.Requests()) != 1 {
		t.Fatalf("second compaction: %d requests\n%s", len(srv.Requests()), r)
	}
}
