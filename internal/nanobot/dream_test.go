package nanobot

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dreamkit/dream/internal/agent"
	"github.com/dreamkit/dream/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// workspace lays out a nanobot workspace with n history entries.
func workspace(t *testing.T, n int) string {
	t.Helper()
	ws := t.TempDir()
	files := map[string]string{
		"SOUL.md":          "# Soul\n\n1. Answer first.\n2. Ask before anything destructive.\n",
		"USER.md":          "# User\n\n- 林小雨, Hangzhou\n- Replies in Chinese, short\n",
		"memory/MEMORY.md": "# Project\n\n## Goals\n\n- Ship the plaza lighting controller\n\n```yaml\nbroker: mqtt.internal:1883\n```\n",
	}
	for rel, body := range files {
		p := filepath.Join(ws, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	var b strings.Builder
	for i := 1; i <= n; i++ {
		content := fmt.Sprintf("- [durable] fact %d: lamps group %d switch on at 19:00", i, i)
		if i == 3 {
			content = strings.Repeat("长", 1500) // cut to 1,000 characters in the prompt
		}
		line, _ := json.Marshal(map[string]any{"cursor": i, "timestamp": fmt.Sprintf("2026-05-%02d 09:00", 1+i%28), "content": content})
		b.Write(line)
		b.WriteByte('\n')
	}
	os.WriteFile(filepath.Join(ws, "memory", LogName), []byte(b.String()), 0o644)
	return ws
}

func TestBuildPromptGolden(t *testing.T) {
	ws := workspace(t, 4)
	os.WriteFile(filepath.Join(ws, "SOUL.md"), []byte(strings.Repeat("rule. ", 2000)), 0o644) // over the 8,000 cap
	os.Remove(filepath.Join(ws, "USER.md"))                                                   // "(empty)"
	res, err := OpenLog(filepath.Join(ws, "memory"), LogOptions{ReadOnly: true}).After(context.Background(), 0, Query{})
	if err != nil {
		t.Fatal(err)
	}
	got := BuildDreamPrompt(DefaultDreamTemplate(), ws, res.Entries)
	golden := filepath.Join("testdata", "prompt.golden")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Fatalf("prompt differs from %s (run with -update after checking):\n%s", golden, got)
	}
	if !strings.Contains(got, "### USER.md\n(empty)") || !strings.Contains(got, "\n...[truncated]") || !strings.Contains(got, strings.Repeat("长", 1000)+TruncatedSuffix) {
		t.Fatal("caps or empty marker missing")
	}
}

// scripted is an in-process provider: each answer is a list of tool calls
// (name, input) or, when empty, a final text.
type scripted struct {
	mu    sync.Mutex
	turns [][]call
	reqs  []*llm.Request
	err   error
}

type call struct {
	name  string
	input map[string]any
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if len(s.turns) == 0 {
		if s.err != nil {
			return nil, s.err
		}
		return nil, errors.New("script exhausted")
	}
	t := s.turns[0]
	s.turns = s.turns[1:]
	r := &llm.Response{StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}
	if len(t) == 0 {
		r.Content = []llm.Block{{Type: llm.BlockText, Text: "done"}}
		return r, nil
	}
	r.StopReason = llm.StopToolUse
	for i, c := range t {
		in, _ := json.Marshal(c.input)
		r.Content = append(r.Content, llm.Block{Type: llm.BlockToolUse, ID: fmt.Sprintf("c%d-%d", len(s.reqs), i), Name: c.name, Input: in})
	}
	return r, nil
}

func TestRunDrainsBatchesAndRefusesHistoryWrites(t *testing.T) {
	ws := workspace(t, 45)
	p := &scripted{turns: [][]call{
		{{"read", map[string]any{"file_path": "USER.md"}}, {"edit", map[string]any{"file_path": "USER.md", "old_string": "short\n", "new_string": "short, no emoji\n"}}},
		{},
		{{"write", map[string]any{"file_path": "memory/history.jsonl", "content": "{}\n"}}, {"edit", map[string]any{"file_path": "memory/.dream_cursor", "old_string": "20", "new_string": "45"}}, {"write", map[string]any{"file_path": "AGENTS.md", "content": "x"}}},
		{},
		{},
	}}
	var refused []string
	res, err := RunDream(context.Background(), DreamConfig{Workspace: ws, Provider: p, OnEvent: func(e agent.Event) {
		if e.Kind == agent.EventToolCall && e.IsError {
			refused = append(refused, e.Error)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Batches != 3 || res.Consumed != 45 || res.Cursor != 45 || res.StartCursor != 0 {
		t.Fatalf("%+v", res)
	}
	if c, _ := os.ReadFile(filepath.Join(ws, "memory", ".dream_cursor")); string(c) != "45" {
		t.Fatalf("cursor file %q", c)
	}
	if len(refused) != 3 {
		t.Fatalf("refusals: %q", refused)
	}
	for _, r := range refused {
		if !strings.Contains(r, "not writable by a dream") && !strings.Contains(r, "may be written") {
			t.Errorf("refusal without a correctable message: %q", r)
		}
	}
	h, _ := os.ReadFile(filepath.Join(ws, "memory", LogName))
	if strings.Count(string(h), "\n") != 45 {
		t.Fatal("history changed")
	}
	if _, err := os.Stat(filepath.Join(ws, "AGENTS.md")); err == nil {
		t.Fatal("a file outside the writable set was written")
	}
	// The batches were 20, 20 and 5 entries, each cut to 1,000 characters.
	third := p.reqs[len(p.reqs)-1].Messages[0].Content[0].Text
	if !strings.Contains(third, "fact 41:") || strings.Contains(third, "fact 40:") {
		t.Fatal("third batch does not start after the second")
	}
}

func TestRunSharesOneBudgetAcrossBatches(t *testing.T) {
	ws := workspace(t, 60)
	p := &scripted{turns: [][]call{{}, {}, {}}}
	_, err := RunDream(context.Background(), DreamConfig{Workspace: ws, Provider: p, MaxTurns: 2})
	if !errors.Is(err, agent.ErrBudget) {
		t.Fatalf("a run that cannot finish the backlog within its turns must fail: %v", err)
	}
	if len(p.reqs) != 2 {
		t.Fatalf("%d requests for a 2-turn budget", len(p.reqs))
	}
}

func TestRunWithNoEntriesSendsNothing(t *testing.T) {
	ws := workspace(t, 5)
	os.WriteFile(filepath.Join(ws, "memory", DreamCursorName), []byte("5"), 0o644)
	p := &scripted{}
	res, err := RunDream(context.Background(), DreamConfig{Workspace: ws, Provider: p})
	if err != nil || res.Batches != 0 || len(p.reqs) != 0 {
		t.Fatalf("%+v %v, %d requests", res, err, len(p.reqs))
	}
}

func TestRunFailureLeavesCursorFile(t *testing.T) {
	ws := workspace(t, 30)
	p := &scripted{turns: [][]call{{}}, err: errors.New("503")}
	res, err := RunDream(context.Background(), DreamConfig{Workspace: ws, Provider: p})
	if err == nil {
		t.Fatal("provider failure must fail the run")
	}
	// The first batch completed in the copy; the caller discards the copy.
	if res.Batches != 1 || res.Cursor != 20 {
		t.Fatalf("%+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunDream(ctx, DreamConfig{Workspace: workspace(t, 3), Provider: &scripted{}}); err == nil {
		t.Fatal("a cancelled run must fail")
	}
}
