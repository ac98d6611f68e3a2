package nanobot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

// fakeProvider answers from a script; a nil response with an error is a
// provider failure.
type fakeProvider struct {
	mu      sync.Mutex
	answers []fakeAnswer
	reqs    []*llm.Request
	during  func() // called inside Complete, e.g. to simulate a turn
}

type fakeAnswer struct {
	text string
	stop llm.StopReason
	tool bool
	err  error
}

func (f *fakeProvider) Name() string { return "fake" }

func (f *fakeProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	if f.during != nil {
		f.during()
	}
	if len(f.answers) == 0 {
		return nil, errors.New("script exhausted")
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	if a.err != nil {
		return nil, a.err
	}
	r := &llm.Response{StopReason: a.stop}
	if r.StopReason == "" {
		r.StopReason = llm.StopEndTurn
	}
	if a.text != "" {
		r.Content = append(r.Content, llm.Block{Type: llm.BlockText, Text: a.text})
	}
	if a.tool {
		r.Content = append(r.Content, llm.Block{Type: llm.BlockToolUse, ID: "t1", Name: "read", Input: []byte(`{}`)})
		r.StopReason = llm.StopToolUse
	}
	return r, nil
}

const sessionFile = "testdata/dGVsZWdyYW06ODgxMg.jsonl"

func TestSessionRoundTripIsByteIdentical(t *testing.T) {
	orig, err := os.ReadFile(sessionFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadSession(sessionFile)
	if err != nil {
		t.Fatal(err)
	}
	if s.Key != "telegram:8812" || len(s.Messages) != 10 || s.LastConsolidated != 0 || s.providerState == nil {
		t.Fatalf("loaded %q, %d messages, cursor %d", s.Key, len(s.Messages), s.LastConsolidated)
	}
	if got := s.encode(); !bytes.Equal(got, orig) {
		t.Fatalf("re-encoded session differs from nanobot's bytes:\n%s\nwant:\n%s", got, orig)
	}
	if StorageName("telegram:8812") != filepath.Base(sessionFile) {
		t.Fatalf("storage name %s", StorageName("telegram:8812"))
	}
	if k, ok := KeyFromName(sessionFile); !ok || k != "telegram:8812" {
		t.Fatalf("KeyFromName: %q %v", k, ok)
	}
}

func TestSessionToleratesCorruptLines(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, StorageName("cli:direct"))
	os.WriteFile(p, []byte(`{"_type": "metadata", "key": "cli:direct", "created_at": "2026-05-28T09:00:00", "updated_at": "2026-05-28T09:00:00", "metadata": {}, "last_consolidated": 99}`+"\n"+`{"role": "user", "content": "hi"}`+"\n{torn"), 0o644)
	s, err := LoadSession(p)
	if err != nil || s.Skipped != 1 || len(s.Messages) != 1 || s.LastConsolidated != 0 {
		t.Fatalf("%v skipped=%d msgs=%d cursor=%d (an out-of-range cursor resets)", err, s.Skipped, len(s.Messages), s.LastConsolidated)
	}
}

// longSession is a conversation of n turns (user, assistant with a tool
// call, tool result, assistant), each about `words` words.
func longSession(t *testing.T, dir string, n, words int, updated time.Time) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"_type": "metadata", "key": "telegram:8812", "created_at": "2026-05-01T08:00:00", "updated_at": %q, "metadata": {"title": "灯光"}, "last_consolidated": 0}`+"\n", isoformat(updated))
	filler := strings.Repeat("the plaza lamps follow the 照明灯 policy and ", words/8)
	for i := range n {
		fmt.Fprintf(&b, `{"role": "user", "content": "turn %d: please adjust schedule %d. %s", "timestamp": "2026-05-28T09:%02d:00"}`+"\n", i, i, filler, i%60)
		fmt.Fprintf(&b, `{"role": "assistant", "content": "", "tool_calls": [{"id": "c%d", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}], "timestamp": "2026-05-28T09:%02d:01"}`+"\n", i, i%60)
		fmt.Fprintf(&b, `{"role": "tool", "tool_call_id": "c%d", "name": "read_file", "content": "on: 19:00 %s", "timestamp": "2026-05-28T09:%02d:02"}`+"\n", i, filler, i%60)
		fmt.Fprintf(&b, `{"role": "assistant", "content": "done %d. %s", "tools_used": ["read_file"], "timestamp": "2026-05-28T09:%02d:03"}`+"\n", i, filler, i%60)
	}
	p := filepath.Join(dir, StorageName("telegram:8812"))
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func workspaceMemory(t *testing.T) (string, *Log) {
	mem := filepath.Join(t.TempDir(), "memory")
	return mem, OpenLog(mem, LogOptions{})
}

func TestConsolidateCutsAtUserTurnsWithinFiveRounds(t *testing.T) {
	dir := t.TempDir()
	p := longSession(t, dir, 30, 120, time.Now())
	s, _ := LoadSession(p)
	mem, log := workspaceMemory(t)
	prov := &fakeProvider{}
	for i := range MaxRounds {
		prov.answers = append(prov.answers, fakeAnswer{text: fmt.Sprintf("- [durable] plaza lamps switch on at 19:00 (chunk %d)", i)})
	}
	c := &Consolidator{Provider: prov, Model: "m", ContextWindow: 16_000, MaxOutput: 1000, Archive: WorkspaceHistory(mem)}
	if c.Budget() != 16_000-1000-1024 {
		t.Fatalf("budget %d", c.Budget())
	}
	var saves []int
	rep, err := c.Consolidate(context.Background(), s, func(s *Session) error {
		saves = append(saves, s.LastConsolidated)
		if s.LastConsolidated < len(s.Messages) && s.Messages[s.LastConsolidated].Role != "user" {
			t.Errorf("cut at message %d, a %s message, not a user turn", s.LastConsolidated, s.Messages[s.LastConsolidated].Role)
		}
		return s.Save(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TokensBefore < rep.Budget || rep.Rounds < 1 || rep.Rounds > MaxRounds {
		t.Fatalf("report %+v", rep)
	}
	if rep.Stopped == "reached target" && rep.TokensAfter > rep.Target {
		t.Fatalf("claims the target but %d > %d", rep.TokensAfter, rep.Target)
	}
	entries, _ := log.After(context.Background(), 0, Query{Session: "telegram:8812"})
	if len(entries.Entries) != rep.Summaries || rep.Summaries != rep.Rounds {
		t.Fatalf("%d history entries for %d summaries in %d rounds", len(entries.Entries), rep.Summaries, rep.Rounds)
	}
	reloaded, _ := LoadSession(p)
	if reloaded.LastConsolidated != rep.LastConsolidated || reloaded.providerState != nil {
		t.Fatalf("saved cursor %d, report %d", reloaded.LastConsolidated, rep.LastConsolidated)
	}
	if sum, ok := reloaded.LastSummary(); !ok || !strings.Contains(sum.Text, "19:00") {
		t.Fatal("the last summary is not kept for the next prompt")
	}
	if !strings.Contains(prov.reqs[0].System, "(nothing)") || !strings.Contains(prov.reqs[0].Messages[0].Content[0].Text, "USER: turn 0") {
		t.Fatal("the archive request lacks the template or the formatted chunk")
	}
	t.Logf("rounds %d, tokens %d -> %d (budget %d, target %d), saves at %v", rep.Rounds, rep.TokensBefore, rep.TokensAfter, rep.Budget, rep.Target, saves)
}

func TestConsolidateDegradesToRawArchiveAndStops(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    fakeAnswer
	}{
		{"provider error", fakeAnswer{err: errors.New("503 overloaded")}},
		{"truncated", fakeAnswer{text: "- [durable] half", stop: llm.StopMaxTokens}},
		{"tool call", fakeAnswer{tool: true}},
		{"empty", fakeAnswer{text: "   "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := longSession(t, dir, 30, 120, time.Now())
			s, _ := LoadSession(p)
			mem, log := workspaceMemory(t)
			prov := &fakeProvider{answers: []fakeAnswer{tc.a, {text: "never asked"}}}
			c := &Consolidator{Provider: prov, ContextWindow: 16_000, MaxOutput: 1000, Archive: WorkspaceHistory(mem)}
			rep, err := c.Consolidate(context.Background(), s, func(s *Session) error { return s.Save(p) })
			if err != nil {
				t.Fatal(err)
			}
			if rep.Rounds != 1 || rep.RawArchives != 1 || len(prov.reqs) != 1 || s.LastConsolidated == 0 {
				t.Fatalf("%+v, %d requests", rep, len(prov.reqs))
			}
			e, _ := log.After(context.Background(), 0, Query{})
			if len(e.Entries) != 1 || !strings.HasPrefix(e.Entries[0].Content, fmt.Sprintf("[RAW] %d messages\n[2026-05-28T09:00] USER: turn 0", s.LastConsolidated)) {
				t.Fatalf("raw archive: %+v", e.Entries)
			}
			if n := len([]rune(e.Entries[0].Content)); n > RawArchiveMaxChars+100 {
				t.Fatalf("raw archive of %d characters", n)
			}
		})
	}
}

func TestNothingAnswerArchivesNothingButMovesOn(t *testing.T) {
	dir := t.TempDir()
	p := longSession(t, dir, 4, 16, time.Now().Add(-time.Hour))
	s, _ := LoadSession(p)
	mem, log := workspaceMemory(t)
	c := &Consolidator{Provider: &fakeProvider{answers: []fakeAnswer{{text: "(nothing)"}}}, Archive: WorkspaceHistory(mem)}
	rep, err := c.CompactIdle(context.Background(), s, func(s *Session) error { return s.Save(p) })
	if err != nil || rep.NothingAnswers != 1 || s.LastConsolidated != 16 {
		t.Fatalf("%+v %v", rep, err)
	}
	if e, _ := log.After(context.Background(), 0, Query{}); len(e.Entries) != 0 {
		t.Fatal("(nothing) appended an entry")
	}
	if _, ok := s.LastSummary(); ok {
		t.Fatal("(nothing) became the session summary")
	}
}

type failingArchive struct{}

func (failingArchive) Append(context.Context, string, int, string) (int64, error) {
	return 0, errors.New("disk full")
}

func TestCursorStaysWhenTheArchiveIsNotDurable(t *testing.T) {
	dir := t.TempDir()
	p := longSession(t, dir, 30, 120, time.Now())
	s, _ := LoadSession(p)
	saved := false
	c := &Consolidator{Provider: &fakeProvider{answers: []fakeAnswer{{text: "- [durable] x"}}}, ContextWindow: 16_000, MaxOutput: 1000, Archive: failingArchive{}}
	if _, err := c.Consolidate(context.Background(), s, func(*Session) error { saved = true; return nil }); err == nil {
		t.Fatal("a failed archive must be an error")
	}
	if saved || s.LastConsolidated != 0 {
		t.Fatalf("cursor moved to %d (saved %v) without a durable archive", s.LastConsolidated, saved)
	}
}

func TestRatioBounds(t *testing.T) {
	mem, _ := workspaceMemory(t)
	for _, r := range []float64{0.05, 0.96, -1} {
		c := &Consolidator{Ratio: r, Archive: WorkspaceHistory(mem)}
		if _, err := c.Consolidate(context.Background(), &Session{}, nil); !errors.Is(err, ErrCompactConfig) {
			t.Errorf("ratio %g accepted", r)
		}
	}
	for _, r := range []float64{0.1, 0.95, 0.5} {
		c := &Consolidator{Ratio: r, Archive: WorkspaceHistory(mem)}
		if _, err := c.Consolidate(context.Background(), &Session{}, nil); err != nil {
			t.Errorf("ratio %g refused: %v", r, err)
		}
	}
}

func TestCompactFileRefusesActiveAndLockedKeepsConcurrentTurn(t *testing.T) {
	dir := t.TempDir()
	mem, log := workspaceMemory(t)
	prov := &fakeProvider{answers: []fakeAnswer{{text: "- [permanent] 用户偏好 24 小时制"}}}
	c := &Consolidator{Provider: prov, Archive: WorkspaceHistory(mem)}

	p := longSession(t, dir, 5, 16, time.Now().Add(-2*time.Minute))
	if _, err := CompactFile(context.Background(), c, p, CompactFileOptions{}); !errors.Is(err, ErrSessionActive) {
		t.Fatalf("active session: %v", err)
	}

	p = longSession(t, dir, 5, 16, time.Now().Add(-20*time.Minute))
	f, _ := os.OpenFile(filepath.Join(dir, SessionsLockName), os.O_RDWR|os.O_CREATE, 0o644)
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	if _, err := CompactFile(context.Background(), c, p, CompactFileOptions{}); !errors.Is(err, ErrSessionsLocked) {
		t.Fatalf("locked session files: %v", err)
	}
	f.Close()

	// A turn lands while the model summarises: it is kept, unarchived.
	prov.during = func() {
		fh, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		fh.WriteString(`{"role": "user", "content": "new turn during compaction"}` + "\n")
		fh.Close()
	}
	rep, err := CompactFile(context.Background(), c, p, CompactFileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := LoadSession(p)
	if len(s.Messages) != 21 || s.LastConsolidated != 20 || rep.LastConsolidated != 20 {
		t.Fatalf("after compaction: %d messages, cursor %d", len(s.Messages), s.LastConsolidated)
	}
	sum, ok := s.LastSummary()
	if !ok || !strings.Contains(sum.Text, "24 小时制") {
		t.Fatal("summary not stored")
	}
	prompt := PromptSummary(sum)
	if !strings.HasPrefix(prompt, "[Archived Context Summary]\n\nPrevious conversation summary (last active 2026-") {
		t.Fatalf("prompt summary: %q", prompt)
	}
	replay := ReplayMessages(s)
	if len(replay) < ReplayWindow-3 || replay[0].Role != "user" || replay[len(replay)-1].Text() != "new turn during compaction" {
		t.Fatalf("replay window: %d messages from %s", len(replay), replay[0].Role)
	}
	if e, _ := log.After(context.Background(), 0, Query{Session: "telegram:8812"}); len(e.Entries) != 1 {
		t.Fatalf("history: %+v", e.Entries)
	}
}

func TestReplayWindowExtendsBackToUserTurn(t *testing.T) {
	var msgs []Message
	msgs = append(msgs, NewMessage(map[string]any{"role": "user", "content": "q1"}))
	msgs = append(msgs, NewMessage(map[string]any{"role": "assistant", "content": "a1"}))
	msgs = append(msgs, NewMessage(map[string]any{"role": "user", "content": "q2"}))
	for range 10 {
		msgs = append(msgs, NewMessage(map[string]any{"role": "tool", "content": "r"}))
	}
	s := &Session{Messages: msgs, LastConsolidated: 13}
	if got := ReplayStart(s); got != 2 {
		t.Fatalf("replay start %d, want 2 (the user turn that began the last 8 messages' turn)", got)
	}
	s.LastConsolidated = 0
	if got := ReplayStart(s); got != 0 {
		t.Fatalf("unconsolidated: replay start %d", got)
	}
}

func TestIdleCompactorSkipsActiveInternalAndThrottles(t *testing.T) {
	dir := t.TempDir()
	mem, _ := workspaceMemory(t)
	now := time.Date(2026, 5, 28, 12, 0, 0, 0, time.Local)
	write := func(key string, updated time.Time) {
		body := fmt.Sprintf(`{"_type": "metadata", "key": %q, "created_at": "2026-05-28T08:00:00", "updated_at": %q, "metadata": {}, "last_consolidated": 0}`+"\n"+`{"role": "user", "content": "hello from %s"}`+"\n"+`{"role": "assistant", "content": "hi"}`+"\n", key, isoformat(updated), key)
		os.WriteFile(filepath.Join(dir, StorageName(key)), []byte(body), 0o644)
	}
	write("telegram:1", now.Add(-20*time.Minute))       // idle: archived
	write("telegram:2", now.Add(-5*time.Minute))        // recent
	write("telegram:3", now.Add(-time.Hour))            // idle but a turn is in flight
	write("dream:20260528-100000", now.Add(-time.Hour)) // internal
	write("cron:daily", now.Add(-time.Hour))            // internal
	prov := &fakeProvider{answers: []fakeAnswer{{text: "- [ephemeral] greeted"}}}
	var mu sync.Mutex
	var done []string
	ic := &IdleCompactor{
		Dir:          dir,
		Consolidator: &Consolidator{Provider: prov, Archive: WorkspaceHistory(mem), Now: func() time.Time { return now }},
		Active:       func() []string { return []string{"telegram:3"} },
		Now:          func() time.Time { return now },
		OnDone: func(key string, r SessionReport, err error) {
			mu.Lock()
			done = append(done, fmt.Sprintf("%s:%v", key, err))
			mu.Unlock()
		},
	}
	started := ic.Check(context.Background())
	ic.Wait()
	if fmt.Sprint(started) != "[telegram:1]" || fmt.Sprint(done) != "[telegram:1:<nil>]" {
		t.Fatalf("started %v, done %v", started, done)
	}
	now = now.Add(30 * time.Second)
	write("telegram:4", now.Add(-time.Hour))
	if s := ic.Check(context.Background()); s != nil {
		t.Fatalf("scanned again within 60 s: %v", s)
	}
	now = now.Add(31 * time.Second)
	prov.answers = append(prov.answers, fakeAnswer{text: "(nothing)"})
	started = ic.Check(context.Background())
	ic.Wait()
	if fmt.Sprint(started) != "[telegram:4]" {
		t.Fatalf("second scan started %v (telegram:1 has nothing left to archive)", started)
	}
}

func FuzzLoadSession(f *testing.F) {
	seed, _ := os.ReadFile(sessionFile)
	f.Add(seed)
	f.Add([]byte(`{"_type": "metadata", "last_consolidated": true}` + "\n[1]\n{\"role\": 3}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(p, data, 0o644)
		s, err := LoadSession(p)
		if err != nil {
			return
		}
		if s.LastConsolidated < 0 || s.LastConsolidated > len(s.Messages) {
			t.Fatalf("cursor %d outside %d messages", s.LastConsolidated, len(s.Messages))
		}
		ReplayMessages(s)
		FormatMessages(s.Messages)
		if err := s.Save(p); err != nil {
			t.Fatal(err)
		}
		again, err := LoadSession(p)
		if err != nil || len(again.Messages) != len(s.Messages) || again.LastConsolidated != s.LastConsolidated {
			t.Fatalf("save/load changed the session: %v", err)
		}
	})
}
