package nanobot

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/raceenv"
)

// helperEnv makes the test binary an appender process (see TestMain).
const helperEnv = "DREAM_HISTORY_HELPER"

func TestMain(m *testing.M) {
	raceenv.Setenv() // the helper processes inherit it: no second at each exit
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(helperAppend(spec))
	}
	os.Exit(m.Run())
}

// helperAppend appends n entries to dir: "DIR|N|NAME".
func helperAppend(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[1])
	l := OpenLog(parts[0], LogOptions{})
	for i := range n {
		if _, err := l.Append(context.Background(), fmt.Sprintf("%s entry %d: 用户偏好简洁回复 %s", parts[2], i, strings.Repeat("x", i%300)), AppendOptions{SessionKey: "proc:" + parts[2]}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

var fixedNow = func() time.Time { return time.Date(2026, 5, 28, 10, 0, 0, 0, time.Local) }

func TestAppendWritesNanobotsExactRecord(t *testing.T) {
	dir := t.TempDir()
	l := OpenLog(dir, LogOptions{Now: fixedNow})
	ctx := context.Background()
	if _, err := l.Append(ctx, "<think>should I save this?</think>User prefers replies in 中文 & short <b>tags</b>  \n", AppendOptions{SessionKey: "telegram:42"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "- [durable] deploy runs `make release`\n- [permanent] \"quotes\" stay", AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, LogName))
	want := `{"cursor": 1, "timestamp": "2026-05-28 10:00", "content": "User prefers replies in 中文 & short <b>tags</b>", "session_key": "telegram:42"}` + "\n" +
		`{"cursor": 2, "timestamp": "2026-05-28 10:00", "content": "- [durable] deploy runs ` + "`make release`" + `\n- [permanent] \"quotes\" stay"}` + "\n"
	if string(got) != want {
		t.Fatalf("history.jsonl:\n%s\nwant:\n%s", got, want)
	}
	if c, _ := os.ReadFile(filepath.Join(dir, CursorName)); string(c) != "2" {
		t.Fatalf(".cursor = %q, want 2", c)
	}
}

func TestAppendCaps(t *testing.T) {
	dir := t.TempDir()
	l := OpenLog(dir, LogOptions{})
	ctx := context.Background()
	for _, tc := range []struct{ max, want int }{{0, EntryHardCap}, {RawArchiveMaxChars, RawArchiveMaxChars}, {SummaryMaxChars, SummaryMaxChars}} {
		e, err := l.Append(ctx, strings.Repeat("长", 70_000), AppendOptions{MaxChars: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		body := strings.TrimSuffix(e.Content, TruncatedSuffix)
		if n := len([]rune(body)); n != tc.want || body == e.Content {
			t.Errorf("cap %d: kept %d characters (suffix present: %v), want %d", tc.max, n, body != e.Content, tc.want)
		}
	}
	res, err := l.After(ctx, 0, Query{})
	if err != nil || len(res.Entries) != 3 || len(res.Problems) != 0 {
		t.Fatalf("reading capped entries: %v %d %v", err, len(res.Entries), res.Problems)
	}
}

func TestCursorContinuesFromCounterAndLog(t *testing.T) {
	dir := t.TempDir()
	// A log written by nanobot, with .cursor ahead of it (entries compacted
	// away by hand) and one behind (a stale counter).
	os.WriteFile(filepath.Join(dir, LogName), []byte(`{"cursor": 41, "timestamp": "2026-05-01 09:00", "content": "a"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, CursorName), []byte("50"), 0o644)
	l := OpenLog(dir, LogOptions{})
	e, err := l.Append(context.Background(), "b", AppendOptions{})
	if err != nil || e.Cursor != 51 {
		t.Fatalf("after counter 50: cursor %d, %v", e.Cursor, err)
	}
	os.WriteFile(filepath.Join(dir, CursorName), []byte("3"), 0o644)
	if e, _ := l.Append(context.Background(), "c", AppendOptions{}); e.Cursor != 52 {
		t.Fatalf("a stale counter must not reuse cursors: got %d", e.Cursor)
	}
}

func TestConcurrentGoroutinesGetUniqueGapFreeCursors(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := OpenLog(dir, LogOptions{}) // separate Logs: only the flock serialises them
			for i := range 40 {
				if _, err := l.Append(ctx, fmt.Sprintf("g%d-%d", g, i), AppendOptions{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	checkGapFree(t, dir, 8*40)
}

// Several real processes append at once: every cursor is handed out once,
// 1..N without a gap, and every line is whole.
func TestConcurrentProcessesGetUniqueGapFreeCursors(t *testing.T) {
	dir := t.TempDir()
	const procs, each = 4, 150
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|p%d", helperEnv, dir, each, p))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// This process appends too, through the same lock.
	l := OpenLog(dir, LogOptions{})
	for i := range 50 {
		if _, err := l.Append(context.Background(), fmt.Sprintf("parent %d", i), AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("appender process: %v", err)
		}
	}
	checkGapFree(t, dir, procs*each+50)
}

func checkGapFree(t *testing.T, dir string, n int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, LogName))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	seen := map[int64]bool{}
	for i, line := range lines {
		e, err := decodeLine(line)
		if err != nil {
			t.Fatalf("line %d is torn or corrupt: %v: %q", i+1, err, line)
		}
		if seen[e.Cursor] {
			t.Fatalf("cursor %d handed out twice", e.Cursor)
		}
		seen[e.Cursor] = true
		if e.Cursor != int64(i+1) {
			t.Fatalf("line %d has cursor %d: cursors must follow file order without gaps", i+1, e.Cursor)
		}
	}
	res, err := OpenLog(dir, LogOptions{}).After(context.Background(), 0, Query{})
	if err != nil || len(res.Entries) != n || len(res.Problems) != 0 {
		t.Fatalf("After: %d entries, problems %v, err %v", len(res.Entries), res.Problems, err)
	}
}

func TestTornLastLineIsReportedThenClosedNeverRemoved(t *testing.T) {
	dir := t.TempDir()
	l := OpenLog(dir, LogOptions{Now: fixedNow})
	ctx := context.Background()
	for i := range 3 {
		l.Append(ctx, fmt.Sprintf("entry %d", i), AppendOptions{})
	}
	// A writer crashed in the middle of its line.
	torn := `{"cursor": 4, "timestamp": "2026-05-28 10:00", "content": "half of a summ`
	f, _ := os.OpenFile(filepath.Join(dir, LogName), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(torn)
	f.Close()

	res, err := l.After(ctx, 0, Query{})
	if err != nil {
		t.Fatalf("a torn line must not be fatal: %v", err)
	}
	if len(res.Entries) != 3 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Reason, "torn") {
		t.Fatalf("entries %d, problems %+v", len(res.Entries), res.Problems)
	}
	e, err := l.Append(ctx, "after the crash", AppendOptions{})
	if err != nil || e.Cursor != 4 {
		t.Fatalf("next append: cursor %d, %v (the torn entry never became valid, so 4 is free)", e.Cursor, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, LogName))
	if !bytes.Contains(data, []byte(torn+"\n")) {
		t.Fatal("the torn bytes must stay in the log, closed by a newline")
	}
	res, _ = l.After(ctx, 3, Query{})
	if len(res.Entries) != 1 || res.Entries[0].Content != "after the crash" || len(res.Problems) != 1 {
		t.Fatalf("after recovery: %+v", res)
	}
}

func TestCorruptLinesAreSkippedAndReported(t *testing.T) {
	dir := t.TempDir()
	content := strings.Join([]string{
		`{"cursor": 1, "timestamp": "2026-05-01 09:00", "content": "ok one"}`,
		`not json at all`,
		`{"cursor": true, "timestamp": "2026-05-01 09:00", "content": "bool cursor"}`,
		`{"cursor": -3, "timestamp": "2026-05-01 09:00", "content": "negative"}`,
		`{"cursor": 2.5, "timestamp": "2026-05-01 09:00", "content": "float"}`,
		`{"cursor": 4, "timestamp": 17, "content": "bad timestamp"}`,
		`{"cursor": 5, "timestamp": "2026-05-01 09:00", "content": ["list"]}`,
		`{"cursor": 6, "timestamp": "2026-05-01 09:00", "content": "bad key", "session_key": 9}`,
		`[1, 2]`,
		``,
		`{"cursor": 7, "timestamp": "2026-05-01 09:01", "content": "ok two", "session_key": null}`,
	}, "\n") + "\n"
	os.WriteFile(filepath.Join(dir, LogName), []byte(content), 0o644)
	l := OpenLog(dir, LogOptions{})
	res, err := l.After(context.Background(), 0, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 2 || res.Entries[0].Content != "ok one" || res.Entries[1].Cursor != 7 {
		t.Fatalf("entries: %+v", res.Entries)
	}
	if len(res.Problems) != 8 {
		t.Fatalf("want 8 problems, got %d: %+v", len(res.Problems), res.Problems)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, LogName)); string(after) != content {
		t.Fatal("reading must never rewrite the log")
	}
	if e, _ := l.Append(context.Background(), "next", AppendOptions{}); e.Cursor != 8 {
		t.Fatalf("next cursor %d, want 8", e.Cursor)
	}
}

func TestSessionScopedAndUnifiedReads(t *testing.T) {
	dir := t.TempDir()
	l := OpenLog(dir, LogOptions{})
	ctx := context.Background()
	for _, k := range []string{"cli:direct", "telegram:42", "cron:daily", "dream:20260528-100000", "heartbeat", "", "cli:direct", "heartbeat-ish"} {
		l.Append(ctx, "from "+k, AppendOptions{SessionKey: k})
	}
	keys := func(r ReadResult) string {
		var s []string
		for _, e := range r.Entries {
			s = append(s, e.SessionKey)
		}
		return strings.Join(s, ",")
	}
	own, _ := l.After(ctx, 0, Query{Session: "cli:direct"})
	if got := keys(own); got != "cli:direct,cli:direct" {
		t.Errorf("session-only: %s", got)
	}
	uni, _ := l.After(ctx, 0, Query{Session: "cli:direct", Unified: true})
	if got := keys(uni); got != "cli:direct,telegram:42,,cli:direct,heartbeat-ish" {
		t.Errorf("unified: %s", got)
	}
	all, _ := l.After(ctx, 0, Query{})
	if len(all.Entries) != 8 {
		t.Errorf("no session: %d entries", len(all.Entries))
	}
	lim, _ := l.After(ctx, 1, Query{Session: "cli:direct", Unified: true, Limit: 2})
	if got := keys(lim); got != "telegram:42," {
		t.Errorf("limit after filter: %q", got)
	}
}

// The index gives the same answers as a full scan, for every cursor, also
// after nanobot appended lines behind its back and after the log was
// replaced under it.
func TestIndexAgreesWithFullScan(t *testing.T) {
	dir := t.TempDir()
	writeEntries(t, dir, 99, 0)
	l := OpenLog(dir, LogOptions{Stride: 8})
	ctx := context.Background()
	l.Append(ctx, "entry 100", AppendOptions{}) // indexes the log
	check := func(stage string, wantIndexed bool) {
		t.Helper()
		for _, since := range []int64{-1, 0, 1, 7, 8, 9, 15, 16, 17, 50, 98, 99, 100, 101, 110, 119, 120, 121, 130} {
			for _, limit := range []int{0, 1, 20} {
				got, err := OpenLog(dir, LogOptions{ReadOnly: true, Stride: 8}).After(ctx, since, Query{Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				want := fullScan(t, filepath.Join(dir, LogName), since, limit)
				if fmt.Sprint(got.Entries) != fmt.Sprint(want) {
					t.Fatalf("%s: since %d limit %d: index read %v, full scan %v", stage, since, limit, got.Entries, want)
				}
				if got.Indexed != wantIndexed {
					t.Fatalf("%s: indexed=%v, want %v", stage, got.Indexed, wantIndexed)
				}
			}
		}
	}
	check("fresh", true)

	// nanobot itself appends without knowing about the index.
	f, _ := os.OpenFile(filepath.Join(dir, LogName), os.O_APPEND|os.O_WRONLY, 0)
	for c := 101; c <= 120; c++ {
		fmt.Fprintf(f, `{"cursor": %d, "timestamp": "2026-05-28 10:00", "content": "python %d"}`+"\n", c, c)
	}
	f.Close()
	check("foreign appends", true)

	// nanobot's own compact_history rewrote the log: the index is stale.
	res, _ := l.After(ctx, 60, Query{})
	var b bytes.Buffer
	for _, e := range res.Entries {
		b.Write(encodeLine(e))
	}
	os.WriteFile(filepath.Join(dir, LogName), b.Bytes(), 0o644)
	check("replaced log, stale index", false)
	// A writable read rebuilds it.
	if _, err := OpenLog(dir, LogOptions{Stride: 8}).After(ctx, 0, Query{}); err != nil {
		t.Fatal(err)
	}
	check("rebuilt", true)

	os.Remove(filepath.Join(dir, IndexName))
	check("missing index", false)
	os.WriteFile(filepath.Join(dir, IndexName), []byte("garbage"), 0o644)
	check("garbage index", false)
	l.Append(ctx, "rebuilds on append", AppendOptions{})
	check("rebuilt by append", true)
}

func TestIndexNotUsedForNonMonotonicLog(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	for _, c := range []int64{1, 2, 3, 10, 4, 5, 11, 6} {
		b.Write(encodeLine(Entry{Cursor: c, Timestamp: "2026-05-28 10:00", Content: "x"}))
	}
	os.WriteFile(filepath.Join(dir, LogName), b.Bytes(), 0o644)
	l := OpenLog(dir, LogOptions{Stride: 2})
	l.After(context.Background(), 0, Query{}) // builds the index
	res, _ := l.After(context.Background(), 4, Query{})
	if fmt.Sprint(cursors(res.Entries)) != "[10 5 11 6]" || res.Indexed {
		t.Fatalf("non-monotonic log: %v indexed=%v", cursors(res.Entries), res.Indexed)
	}
}

func cursors(es []Entry) []int64 {
	var out []int64
	for _, e := range es {
		out = append(out, e.Cursor)
	}
	return out
}

// fullScan is the reference reader: nanobot's read_unprocessed_history.
func fullScan(t testing.TB, path string, since int64, limit int) []Entry {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := []Entry{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		e, err := decodeLine(bytes.TrimSpace(line))
		if err != nil || e.Cursor <= since {
			continue
		}
		out = append(out, e)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

func TestCompactNeverDropsUnconsumedEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 30 {
		dir := t.TempDir()
		l := OpenLog(dir, LogOptions{Stride: 4})
		ctx := context.Background()
		n := 1 + rng.IntN(60)
		writeEntries(t, dir, n, -1)
		dream := int64(rng.IntN(n + 1))
		l.SetDreamCursor(dream)
		maxKeep := 1 + rng.IntN(30)
		before, _ := l.After(ctx, dream, Query{})
		rep, err := l.Compact(ctx, maxKeep)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := l.After(ctx, dream, Query{})
		if fmt.Sprint(after.Entries) != fmt.Sprint(before.Entries) {
			t.Fatalf("round %d: unconsumed entries changed: %d -> %d", round, len(before.Entries), len(after.Entries))
		}
		all, _ := l.After(ctx, -1, Query{})
		wantLen := max(maxKeep, len(before.Entries))
		wantLen = min(wantLen, n)
		if len(all.Entries) != wantLen || rep.After != wantLen {
			t.Fatalf("round %d: n=%d dream=%d max=%d: kept %d (report %d), want %d", round, n, dream, maxKeep, len(all.Entries), rep.After, wantLen)
		}
		if e, _ := l.Append(ctx, "next", AppendOptions{}); e.Cursor != int64(n+1) {
			t.Fatalf("round %d: cursor after compaction %d, want %d", round, e.Cursor, n+1)
		}
		if fs, _ := filepath.Glob(filepath.Join(dir, ".dream-tmp-*")); len(fs) > 0 {
			t.Fatalf("temporary files left: %v", fs)
		}
	}
}

func TestCompactToDefaultKeepsCorruptLinesInKeptPart(t *testing.T) {
	dir := t.TempDir()
	l := OpenLog(dir, LogOptions{})
	ctx := context.Background()
	writeEntries(t, dir, 1200, 1101)
	l.SetDreamCursor(1200)
	rep, err := l.Compact(ctx, DefaultMaxEntries)
	if err != nil || rep.Before != 1201 || rep.After != DefaultMaxEntries || rep.RetainedUnprocessed {
		t.Fatalf("%+v %v", rep, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, LogName))
	if !bytes.Contains(data, []byte("{corrupt but kept\n")) {
		t.Fatal("a corrupt line in the kept part was rewritten away")
	}
	res, _ := l.After(ctx, 0, Query{})
	if len(res.Entries) != 999 || res.Entries[0].Cursor != 202 || len(res.Problems) != 1 {
		t.Fatalf("after compaction: %d entries from %d, %d problems", len(res.Entries), res.Entries[0].Cursor, len(res.Problems))
	}
}

func TestDreamCursorRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l := OpenLog(dir, LogOptions{})
	if c, err := l.DreamCursor(); c != 0 || err != nil {
		t.Fatalf("missing cursor: %d %v", c, err)
	}
	l.SetDreamCursor(42)
	if b, _ := os.ReadFile(filepath.Join(dir, DreamCursorName)); string(b) != "42" {
		t.Fatalf(".dream_cursor = %q (nanobot writes str(cursor))", b)
	}
	ro := OpenLog(dir, LogOptions{ReadOnly: true})
	if err := ro.SetDreamCursor(1); err != ErrReadOnly {
		t.Fatalf("read-only: %v", err)
	}
	if _, err := ro.Append(context.Background(), "x", AppendOptions{}); err != ErrReadOnly {
		t.Fatalf("read-only append: %v", err)
	}
}

func TestAppendHonoursContextWhileLocked(t *testing.T) {
	dir := t.TempDir()
	f, err := lockLog(context.Background(), filepath.Join(dir, LogName))
	if err != nil {
		t.Fatal(err)
	}
	defer unlockLog(f)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := OpenLog(dir, LogOptions{}).Append(ctx, "x", AppendOptions{}); err == nil {
		t.Fatal("append succeeded while another holder had the lock")
	}
}

func FuzzReadLog(f *testing.F) {
	f.Add([]byte(`{"cursor": 1, "timestamp": "t", "content": "c"}` + "\n" + `{"cursor": 2`))
	f.Add([]byte("\n\n{}\n[]\n\"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, LogName), data, 0o644)
		l := OpenLog(dir, LogOptions{Stride: 2})
		ctx := context.Background()
		a, err := l.After(ctx, 0, Query{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.After(ctx, 0, Query{}) // now through the index
		if err != nil || fmt.Sprint(a.Entries) != fmt.Sprint(b.Entries) {
			t.Fatalf("index changed the answer: %v vs %v (%v)", a.Entries, b.Entries, err)
		}
		e, err := l.Append(ctx, "x", AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, old := range a.Entries {
			if old.Cursor >= e.Cursor {
				t.Fatalf("cursor %d reused (existing %d)", e.Cursor, old.Cursor)
			}
		}
	})
}

// writeEntries writes n valid entries (cursors 1..n) straight to the log,
// with a corrupt line after entry corruptAfter (none when negative): Append
// syncs every entry, which is too slow to build large logs with.
func writeEntries(t testing.TB, dir string, n, corruptAfter int) {
	t.Helper()
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.Write(encodeLine(Entry{Cursor: int64(i), Timestamp: "2026-05-28 10:00", Content: fmt.Sprintf("entry %d: 用户喜欢简短回答", i)}))
		if i == corruptAfter {
			b.WriteString("{corrupt but kept\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, LogName), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTailMatchesForwardRead(t *testing.T) {
	dir := t.TempDir()
	writeEntries(t, dir, 3000, 1500)
	f, _ := os.OpenFile(filepath.Join(dir, LogName), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"cursor": 3001, "timestamp": "x", "content": "torn`)
	f.Close()
	l := OpenLog(dir, LogOptions{})
	ctx := context.Background()
	all, _ := l.After(ctx, -1, Query{})
	for _, n := range []int{1, 2, 7, 1499, 1500, 1501, 2999, 3000, 5000} {
		got, err := l.Tail(ctx, n, Query{})
		if err != nil {
			t.Fatal(err)
		}
		want := all.Entries[max(0, len(all.Entries)-n):]
		if fmt.Sprint(cursors(got.Entries)) != fmt.Sprint(cursors(want)) {
			t.Fatalf("tail %d: got %d entries from %d", n, len(got.Entries), got.Entries[0].Cursor)
		}
		if len(got.Problems) == 0 || !strings.Contains(got.Problems[len(got.Problems)-1].Reason, "torn") {
			t.Fatalf("tail %d: the torn last line is not reported: %+v", n, got.Problems)
		}
		if n >= 1501 && len(got.Problems) != 2 {
			t.Fatalf("tail %d: problems %+v", n, got.Problems)
		}
	}
}

// Appenders in other processes race with compactions in this one: no
// append may land in a log that a compaction already replaced (the lock
// holder re-checks the file after locking), so the kept tail is gap-free.
func TestCompactionRacingAppendersLosesNothing(t *testing.T) {
	dir := t.TempDir()
	l := OpenLog(dir, LogOptions{})
	if err := l.SetDreamCursor(1 << 40); err != nil { // everything counts as consumed
		t.Fatal(err)
	}
	const procs, each = 3, 60
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|c%d", helperEnv, dir, each, p))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	done := make(chan error, 1)
	go func() {
		for _, c := range cmds {
			if err := c.Wait(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	ctx := context.Background()
	compactions := 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
			if _, err := l.Compact(ctx, 10); err != nil {
				t.Fatal(err)
			}
			compactions++
			time.Sleep(time.Millisecond)
		}
	}
	res, err := l.After(ctx, 0, Query{})
	if err != nil || len(res.Problems) != 0 {
		t.Fatalf("%v %v", err, res.Problems)
	}
	got := cursors(res.Entries)
	if len(got) < 10 || got[len(got)-1] != procs*each {
		t.Fatalf("after %d compactions the log holds %v, want at least 10 entries ending at %d", compactions, got, procs*each)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("gap in the tail: %v", got)
		}
	}
	t.Logf("%d compactions raced %d appends", compactions, procs*each)
}
