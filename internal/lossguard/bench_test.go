package lossguard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

var benchFacts = []string{
	"Run `make test` before pushing; CI runs the race detector.",
	"The staging database is reset every Monday at 06:00 UTC.",
	"Prefer table tests; golden files live under testdata/ with an -update flag.",
	"Never log request bodies: they can hold tokens.",
	"部署前先在预发环境验证迁移脚本。",
	"用户偏好简洁的提交信息，主题行不超过五十个字符。",
	"Timeouts are set per call with context.WithTimeout, never globally.",
}

// benchTopic is a topic file as bench/cmd/genmemory writes them, and the
// same file after an offline dream: the repeated line dropped, a relative
// date made absolute, each with its record.
func benchTopic(r *rand.Rand, i int) (before, after string, recs []Record) {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: topic-%d\ndescription: notes, part %d\ntype: project\n---\n\n# Topic %d\n\n## 2026-%02d-%02d\n\n", i, i, i, 1+i%12, 1+i%28)
	for k := 0; k < 4; k++ {
		fmt.Fprintf(&b, "- %s\n", benchFacts[r.IntN(len(benchFacts))])
	}
	dup := fmt.Sprintf("- %s\n", benchFacts[i%len(benchFacts)])
	b.WriteString(dup)
	dupAt := b.Len()
	b.WriteString(dup)
	b.WriteString("- Fixed the flaky test yesterday; it was a shared temp dir.\n")
	b.WriteString("\n### Procedure\n\n1. Pull the latest main.\n2. Run the migrations: `go run ./cmd/migrate up`.\n3. Check the dashboard before announcing.\n\n")
	b.WriteString("> Rule: ask before deleting anything under /var/lib.\n\n")
	b.WriteString("```go\nctx, cancel := context.WithTimeout(ctx, 5*time.Second)\ndefer cancel()\n```\n\n")
	fmt.Fprintf(&b, "## Notes %d\n\n", i)
	for k := 0; k < 3; k++ {
		fmt.Fprintf(&b, "Fact %d.%d: the service keeps its logs for %d days.\n\n", i, k, 7+k)
	}
	b.WriteString("See also [the index](MEMORY.md).\n")
	before = b.String()
	y := strings.Index(before, "yesterday")
	after = before[:dupAt] + before[dupAt+len(dup):y] + "on 2026-11-29" + before[y+len("yesterday"):]
	return before, after, []Record{{Start: dupAt, End: dupAt + len(dup)}, {Start: y, End: y + len("yesterday")}}
}

// benchMemory writes a memory of n topics before and after an offline
// dream that changed nine in ten of them, and returns the changed paths
// and the records.
func benchMemory(tb testing.TB, n int) (dir string, changed []string, recs []Record) {
	dir = tb.TempDir()
	r := rand.New(rand.NewPCG(uint64(n), 5))
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf("t%02d/topic_%05d.md", i%50, i)
		b, a, rs := benchTopic(r, i)
		if i%10 == 9 {
			a, rs = b, nil
		} else {
			changed = append(changed, rel)
			for _, x := range rs {
				x.File = rel
				recs = append(recs, x)
			}
		}
		for side, text := range map[string]string{"before": b, "after": a} {
			p := filepath.Join(dir, side, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dir, changed, recs
}

func diskSides(dir string) Sides {
	read := func(side string) func(string) ([]byte, bool, error) {
		return func(rel string) ([]byte, bool, error) {
			b, err := os.ReadFile(filepath.Join(dir, side, filepath.FromSlash(rel)))
			if os.IsNotExist(err) {
				return nil, false, nil
			}
			return b, err == nil, err
		}
	}
	return Sides{Before: read("before"), After: read("after")}
}

// readBoth is the baseline: both sides of every changed file read once.
func readBoth(tb testing.TB, dir string, changed []string) (Tree, Tree) {
	before, after := Tree{}, Tree{}
	s := diskSides(dir)
	for _, rel := range changed {
		b, _, err := s.Before(rel)
		if err != nil {
			tb.Fatal(err)
		}
		a, _, err := s.After(rel)
		if err != nil {
			tb.Fatal(err)
		}
		before[rel], after[rel] = b, a
	}
	return before, after
}

// BenchmarkCheckChanged: the loss guard over an offline dream's change of
// 3,000 and 30,000 topic files, as it was ("today": the changed files read
// into trees, then one serial pass) and as it is ("now": CheckFiles
// reading and comparing over GOMAXPROCS workers), against a baseline in
// the same process: both sides' bytes read once. Each iteration runs the
// three in turn, so that a machine whose load changes weighs on all three
// alike; ns/op is "now", and the metrics are the ratios (of wall time,
// and of the process's CPU time, which a loaded machine distorts less).
//
//	go test -run '^$' -bench CheckChanged -benchtime 3x ./internal/lossguard/
func BenchmarkCheckChanged(b *testing.B) {
	for _, n := range []int{3000, 30000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			if testing.Short() && n > 3000 {
				b.Skip("-short")
			}
			dir, changed, recs := benchMemory(b, n)
			o := Options{Strict: true, Records: recs}
			none := func(func(string, []byte) error) error { return nil }
			{
				before, after := readBoth(b, dir, changed)
				want, _ := refCheckChanged(before, after, none, o)
				got, err := CheckFiles(context.Background(), changed, diskSides(dir), none, o)
				if err != nil || !reflect.DeepEqual(got, want) || got.Err() != nil || !got.Changed {
					b.Fatalf("the verdicts differ: %v\n%+v\n%+v", err, got, want)
				}
			}
			var read, today, now, todayCPU, nowCPU time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				runtime.GC()
				t := time.Now()
				readBoth(b, dir, changed)
				read += time.Since(t)
				runtime.GC()
				t, c := time.Now(), processCPU()
				before, after := readBoth(b, dir, changed)
				if v, err := refCheckChanged(before, after, none, o); err != nil || v.Err() != nil {
					b.Fatal(err, v.Err())
				}
				today += time.Since(t)
				todayCPU += processCPU() - c
				before, after = nil, nil
				runtime.GC()
				b.StartTimer()
				t, c = time.Now(), processCPU()
				if v, err := CheckFiles(context.Background(), changed, diskSides(dir), none, o); err != nil || v.Err() != nil {
					b.Fatal(err, v.Err())
				}
				now += time.Since(t)
				nowCPU += processCPU() - c
			}
			b.ReportMetric(float64(today)/float64(b.N)/1e6, "today-ms")
			b.ReportMetric(float64(read)/float64(b.N)/1e6, "read-ms")
			b.ReportMetric(float64(today)/float64(read), "today/read")
			b.ReportMetric(float64(now)/float64(read), "now/read")
			b.ReportMetric(float64(now)/float64(today), "now/today")
			if todayCPU > 0 {
				b.ReportMetric(float64(nowCPU)/float64(todayCPU), "cpu-now/today")
			}
		})
	}
}
