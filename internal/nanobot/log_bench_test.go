package nanobot

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAfterCursorNearEnd reads the 20 entries after a cursor near the
// end of a 1,000,000-entry history, through the offset index, and, in the
// same run, with the full-scan reader nanobot uses (read every line, parse
// it, keep cursor > since). It reports the indexed read as ns/op and the
// full scan and the ratio as extra metrics:
//
//	go test -run '^$' -bench AfterCursorNearEnd -benchtime 2000x ./internal/nanobot/
func BenchmarkAfterCursorNearEnd(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	path := filepath.Join(dir, LogName)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 1; i <= n; i++ {
		w.Write(encodeLine(Entry{Cursor: int64(i), Timestamp: "2026-05-28 10:00", Content: fmt.Sprintf("- [durable] entry %d: the deploy key lives in vault; 用户喜欢简短回答", i), SessionKey: "cli:direct"}))
	}
	w.Flush()
	f.Close()
	l := OpenLog(dir, LogOptions{})
	ctx := context.Background()
	if _, err := l.Append(ctx, "the newest entry", AppendOptions{}); err != nil { // builds the index once
		b.Fatal(err)
	}
	since := int64(n - 30)
	want := fullScanReader(b, path, since, 20)

	b.ResetTimer()
	for b.Loop() {
		res, err := l.After(ctx, since, Query{Limit: 20})
		if err != nil || len(res.Entries) != 20 || !res.Indexed {
			b.Fatalf("indexed read: %d entries, indexed=%v, %v", len(res.Entries), res.Indexed, err)
		}
	}
	b.StopTimer()
	indexed := float64(b.Elapsed().Nanoseconds()) / float64(b.N)

	const scans = 3
	start := time.Now()
	for range scans {
		got := fullScanReader(b, path, since, 20)
		if len(got) != len(want) {
			b.Fatal("full scan disagrees with itself")
		}
	}
	full := float64(time.Since(start).Nanoseconds()) / scans
	res, _ := l.After(ctx, since, Query{Limit: 20})
	if fmt.Sprint(res.Entries) != fmt.Sprint(want) {
		b.Fatal("indexed read and full scan disagree")
	}
	b.ReportMetric(full, "fullscan-ns/op")
	b.ReportMetric(full/indexed, "speedup-x")
}

// fullScanReader is the baseline: every line read and parsed.
func fullScanReader(tb testing.TB, path string, since int64, limit int) []Entry {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), maxLineBytes)
	var out []Entry
	for sc.Scan() {
		e, err := decodeLine(bytes.TrimSpace(sc.Bytes()))
		if err != nil || e.Cursor <= since {
			continue
		}
		if len(out) < limit {
			out = append(out, e)
		}
	}
	return out
}
