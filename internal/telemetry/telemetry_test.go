package telemetry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

var t0 = time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)

func at(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

func usage(in, out, read, created int64) *llm.Usage {
	return &llm.Usage{InputTokens: in, OutputTokens: out, CacheReadInputTokens: read, CacheCreationInputTokens: created}
}

func TestSummarize(t *testing.T) {
	events := []Event{
		{Time: at(0), Name: EventFired},
		{Time: at(1), Name: EventCompleted, Usage: usage(10, 5, 60, 30)},
		{Time: at(2), Name: EventFired},
		{Time: at(3), Name: EventFailed, Reason: "timeout"},
		{Time: at(4), Name: EventFired},
		{Time: at(5), Name: EventCompleted, Usage: usage(0, 1, 40, 0)},
		{Time: at(6), Name: "dream_from_the_future"},
		{Time: at(7), Name: EventCompleted}, // no usage recorded
		{Time: at(8), Name: EventFired},
		{Time: at(9), Name: EventFailed, Reason: "stopped at its ceiling", Usage: usage(5, 2, 0, 0)}, // what it spent before it stopped counts
	}
	tests := []struct {
		name                     string
		since                    time.Time
		fired, completed, failed int
		usage                    llm.Usage
		hit                      float64
	}{
		{"all", time.Time{}, 4, 3, 2, *usage(15, 8, 100, 30), 100.0 / 145},
		{"since is inclusive", at(2), 3, 2, 2, *usage(5, 3, 40, 0), 40.0 / 45},
		{"after everything", at(10), 0, 0, 0, llm.Usage{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(events, tt.since)
			if s.Fired != tt.fired || s.Completed != tt.completed || s.Failed != tt.failed {
				t.Errorf("counts %d:%d:%d, want %d:%d:%d", s.Fired, s.Completed, s.Failed, tt.fired, tt.completed, tt.failed)
			}
			if s.Usage != tt.usage {
				t.Errorf("usage %+v, want %+v", s.Usage, tt.usage)
			}
			if d := s.CacheHitRate - tt.hit; d > 1e-9 || d < -1e-9 {
				t.Errorf("hit rate %v, want %v", s.CacheHitRate, tt.hit)
			}
			if !s.Since.Equal(tt.since) {
				t.Errorf("since %v", s.Since)
			}
		})
	}
	if s := Summarize(nil, time.Time{}); s.Fired+s.Completed+s.Failed != 0 || s.CacheHitRate != 0 {
		t.Errorf("empty = %+v", s)
	}
}

func TestStatsString(t *testing.T) {
	tests := []struct {
		s    Stats
		want string
	}{
		{Stats{Fired: 5, Completed: 4, Failed: 1, Usage: *usage(12000, 3000, 40000, 8000), CacheHitRate: 40.0 / 60},
			"fired:completed:failed 5:4:1 · tokens in 12k out 3k cache read 40k created 8k · hit rate 66.7%"},
		{Stats{}, "fired:completed:failed 0:0:0 · tokens in 0 out 0 cache read 0 created 0 · hit rate 0.0%"},
		{Stats{Fired: 1, Usage: *usage(950, 1500, 999_999, 3_250_000), Malformed: 2, Since: at(0)},
			"fired:completed:failed 1:0:0 · tokens in 950 out 1.5k cache read 1M created 3.2M · hit rate 0.0% · since 2026-11-30T11:00:00Z · 2 malformed lines skipped"},
		{Stats{Malformed: 1}, "fired:completed:failed 0:0:0 · tokens in 0 out 0 cache read 0 created 0 · hit rate 0.0% · 1 malformed line skipped"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("String() =\n%s\nwant\n%s", got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1k"}, {1049, "1k"}, {1050, "1.1k"}, {9_960, "10k"},
		{12_345, "12k"}, {999_499, "999k"}, {999_999, "1M"}, {2_500_000_000, "2.5G"},
		{-1500, "-1.5k"}, {5e15, "5000T"},
	}
	for _, tt := range tests {
		if got := count(tt.n); got != tt.want {
			t.Errorf("count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestWriteAndRead(t *testing.T) {
	l := Open(t.TempDir() + "/state")
	now := t0
	l.now = func() time.Time { now = now.Add(time.Hour); return now }
	if events, err := l.Read(time.Time{}); err != nil || events != nil {
		t.Fatalf("missing log = %v, %v", events, err)
	}
	if err := l.Fired("id1", "/m", 25.5, 7, Who{}); err != nil {
		t.Fatal(err)
	}
	u := llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadInputTokens: 300, CacheCreationInputTokens: 100}
	if err := l.Completed("id1", "/m", u, 7, []string{"MEMORY.md"}, 1500*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Failed("id2", "/m", "killed", "updating", llm.Usage{InputTokens: 50, OutputTokens: 5}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Event{}); err == nil {
		t.Error("nameless event accepted")
	}
	events, err := l.Read(time.Time{})
	if err != nil || len(events) != 3 {
		t.Fatalf("Read = %d events, %v", len(events), err)
	}
	f, c, x := events[0], events[1], events[2]
	if f.Name != EventFired || f.HoursSinceLast != 25.5 || f.Sessions != 7 || !f.Time.Equal(at(1)) {
		t.Errorf("fired = %+v", f)
	}
	if c.Name != EventCompleted || *c.Usage != u || c.CacheHitRate != 0.6 || c.DurationMS != 1500 || c.SessionsReviewed != 7 || c.FilesTouched[0] != "MEMORY.md" {
		t.Errorf("completed = %+v", c)
	}
	if x.Name != EventFailed || x.Reason != "killed" || x.Phase != "updating" || x.Usage == nil || x.Usage.InputTokens != 50 {
		t.Errorf("failed = %+v", x)
	}
	if since, _ := l.Read(at(2)); len(since) != 2 {
		t.Errorf("Read(since) = %d events, want 2", len(since))
	}
	st, err := l.Stats(time.Time{})
	all := u
	all.Add(llm.Usage{InputTokens: 50, OutputTokens: 5}) // the killed dream's
	if err != nil || st.Fired != 1 || st.Completed != 1 || st.Failed != 1 || st.Usage != all {
		t.Errorf("Stats = %+v, %v", st, err)
	}
	if fi, _ := os.Stat(l.Path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v", fi.Mode().Perm())
	}
}

func TestMalformedLines(t *testing.T) {
	good := `{"time":"2026-11-30T11:00:00Z","event":"dream_fired","sessions":5}`
	tests := []struct {
		name      string
		log       string
		events    int
		malformed int
	}{
		{"clean", good + "\n" + good + "\n", 2, 0},
		{"no trailing newline", good + "\n" + good, 2, 0},
		{"blank lines are not malformed", "\n\n" + good + "\n\n", 1, 0},
		{"garbage", "garbage\n" + good + "\n{\n", 1, 2},
		{"torn line", good[:30] + "\n" + good + "\n", 1, 1},
		{"no name", `{"time":"2026-11-30T11:00:00Z"}` + "\n" + good, 1, 1},
		{"no time", `{"event":"dream_fired"}` + "\n" + good, 1, 1},
		{"wrong types", `{"time":"yesterday","event":"dream_fired"}` + "\n" + `{"time":"2026-11-30T11:00:00Z","event":"dream_fired","sessions":"many"}`, 0, 2},
		{"array", "[1,2]\n" + good, 1, 1},
		{"huge line", strings.Repeat("x", 300<<10) + "\n" + good + "\n", 1, 1},
		{"huge line at end", good + "\n" + `{"event":"` + strings.Repeat("y", 200<<10), 1, 1},
		{"crlf", good + "\r\n" + good + "\r\n", 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, malformed, err := readEvents(strings.NewReader(tt.log), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != tt.events || malformed != tt.malformed {
				t.Errorf("%d events %d malformed, want %d %d", len(events), malformed, tt.events, tt.malformed)
			}
		})
	}
}

// TestConcurrentAppends: many writers at once produce only whole lines.
func TestConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	const writers, each = 8, 50
	reason := strings.Repeat("r", 2000) // lines of ~2 KB make interleaving visible
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := Open(dir) // separate Logs, as separate processes would have
			for i := range each {
				if err := l.Failed(fmt.Sprintf("w%d-%d", w, i), "/m", reason, "starting", llm.Usage{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dir + "/" + FileName)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	seen := map[string]bool{}
	for i, line := range lines {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil || e.Reason != reason {
			t.Fatalf("line %d is not a whole event: %.80s", i, line)
		}
		seen[e.TaskID] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct events, want %d", len(seen), writers*each)
	}
}

func TestReadUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(dir+"/"+FileName, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir).Read(time.Time{}); err == nil {
		t.Error("reading a directory as the log succeeded")
	}
}

// FuzzParseLine: any line parses or errors without panicking, an accepted
// event has a name and a time, and re-encoding it parses back.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"time":"2026-11-30T11:00:00Z","event":"dream_fired","hours_since_last":25.5,"sessions":7}`,
		`{"time":"2026-11-30T11:00:00Z","event":"dream_completed","usage":{"input_tokens":1},"cache_hit_rate":0.5}`,
		`{"event":"x"}`, `{}`, `null`, `"str"`, ``, `{"time":"2026-11-30T11:00:00+08:00","event":"e","usage":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseLine(line)
		if err != nil {
			return
		}
		if e.Name == "" || e.Time.IsZero() {
			t.Fatalf("accepted %+v", e)
		}
		b, err := json.Marshal(e)
		if err != nil {
			return // e.g. a year outside 0..9999 that parsed from an offset
		}
		if _, err := ParseLine(b); err != nil {
			t.Fatalf("re-encoded event does not parse: %v\n%s", err, b)
		}
	})
}
