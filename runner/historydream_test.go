package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/internal/task"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

// blockingProvider ends its first turn with text and then blocks every
// later call until cancelled, so that a test can kill a dream mid-run.
type blockingProvider struct {
	mu      sync.Mutex
	calls   int
	started chan struct{}
}

func (p *blockingProvider) Name() string { return "blocking" }

func (p *blockingProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	p.mu.Lock()
	p.calls++
	n := p.calls
	p.mu.Unlock()
	if n == 1 {
		return &llm.Response{StopReason: llm.StopEndTurn, Content: []llm.Block{{Type: llm.BlockText, Text: "nothing to keep"}}}, nil
	}
	close(p.started)
	<-ctx.Done()
	return nil, context.Cause(ctx)
}

type textProvider struct{ calls int }

func (p *textProvider) Name() string { return "text" }
func (p *textProvider) Complete(context.Context, *llm.Request) (*llm.Response, error) {
	p.calls++
	return &llm.Response{StopReason: llm.StopEndTurn, Content: []llm.Block{{Type: llm.BlockText, Text: "nothing worth keeping"}}}, nil
}

func nanobotWorkspace(t *testing.T, entries int, dreamCursor int) string {
	t.Helper()
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "memory"), 0o755)
	os.WriteFile(filepath.Join(ws, "SOUL.md"), []byte("# Soul\n\n1. Answer first.\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "USER.md"), []byte("# User\n\n- 喜欢简短回答\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "memory", "MEMORY.md"), []byte("# Memory\n\n## Goals\n\n- ship\n"), 0o644)
	var b strings.Builder
	for i := 1; i <= entries; i++ {
		line, _ := json.Marshal(map[string]any{"cursor": i, "timestamp": "2026-05-28 09:00", "content": fmt.Sprintf("- [ephemeral] step %d", i)})
		b.Write(line)
		b.WriteByte('\n')
	}
	os.WriteFile(filepath.Join(ws, "memory", nanobot.LogName), []byte(b.String()), 0o644)
	if dreamCursor > 0 {
		os.WriteFile(filepath.Join(ws, "memory", nanobot.DreamCursorName), []byte(fmt.Sprint(dreamCursor)), 0o644)
	}
	return ws
}

// A Go agent embedding the nanobot flow: a killed dream leaves the cursor
// where it was; a completed one that changed nothing moves it, and the
// history is compacted to 1,000 entries without losing unconsumed ones.
func TestNanobotFlowAsLibrary(t *testing.T) {
	t.Run("killed", func(t *testing.T) {
		ws := nanobotWorkspace(t, 30, 0)
		state := t.TempDir()
		p := &blockingProvider{started: make(chan struct{})}
		d, err := dream.New(dream.Config{MemoryDir: ws, StateDir: state, Settings: settings.DreamDefaults(), Runner: &runner.HistoryDream{Provider: p, Model: "claude-haiku-4-5"}})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		go func() {
			<-p.started
			reg, _ := task.Open(state)
			for {
				es, _ := reg.List()
				for _, e := range es {
					if e.Status == task.StatusRunning {
						if _, err := reg.Kill(e.ID); err == nil {
							return
						}
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		rep, err := nanobot.Run(context.Background(), d, dream.RunOptions{}, nanobot.CommitManual)
		if err == nil || rep.Status != dream.StatusKilled {
			t.Fatalf("status %s, err %v", rep.Status, err)
		}
		if _, err := os.Stat(filepath.Join(ws, "memory", nanobot.DreamCursorName)); err == nil || rep.DreamCursor != 0 || rep.HistoryEntriesConsumed != 0 {
			t.Fatalf("a killed dream moved the cursor: %+v", rep)
		}
	})
	t.Run("completed no-op and compaction", func(t *testing.T) {
		ws := nanobotWorkspace(t, 1100, 1080)
		p := &textProvider{}
		d, err := dream.New(dream.Config{MemoryDir: ws, StateDir: t.TempDir(), Settings: settings.DreamDefaults(), Runner: &runner.HistoryDream{Provider: p, Model: "claude-haiku-4-5"}})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		rep, err := nanobot.Run(context.Background(), d, dream.RunOptions{}, nanobot.CommitManual)
		if err != nil || rep.Status != dream.StatusCompleted {
			t.Fatalf("%v %+v", err, rep)
		}
		if rep.DreamCursor != 1100 || rep.HistoryEntriesConsumed != 20 || p.calls != 1 || rep.HistoryCompacted != 100 {
			t.Fatalf("cursor %d, consumed %d, calls %d, compacted %d", rep.DreamCursor, rep.HistoryEntriesConsumed, p.calls, rep.HistoryCompacted)
		}
		res, _ := nanobot.OpenLog(filepath.Join(ws, "memory"), nanobot.LogOptions{}).After(context.Background(), 0, nanobot.Query{})
		if len(res.Entries) != 1000 || res.Entries[0].Cursor != 101 {
			t.Fatalf("after compaction: %d entries from %d", len(res.Entries), res.Entries[0].Cursor)
		}
	})
}
