package gate

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// tenThousand builds a Codex-like tree of 10,000 transcripts: 100 day
// directories of 100 rollouts each, one in ten older than since.
func tenThousand(b *testing.B) string {
	b.Helper()
	files := make([]file, 0, 10_000)
	for d := 0; d < 100; d++ {
		for i := 0; i < 100; i++ {
			age := time.Hour
			if i%10 == 0 {
				age = -time.Hour
			}
			files = append(files, file{fmt.Sprintf("2026/%02d/%02d/rollout-%04d.jsonl", d/28+1, d%28+1, i), age})
		}
	}
	return buildTree(b, files)
}

// BenchmarkCountSessions10k times one scan of 10,000 transcripts with each
// stat strategy available here, serial and parallel; compare the
// sub-benchmarks' ns/op to see what fstatat and the workers buy.
func BenchmarkCountSessions10k(b *testing.B) {
	root := tenThousand(b)
	type variant struct {
		name    string
		fast    bool
		workers int
	}
	variants := []variant{{"info/serial", false, 1}, {"info/parallel", false, scanWorkers}}
	if fastStatAvailable {
		variants = append(variants, variant{"fstatat/serial", true, 1}, variant{"fstatat/parallel", true, scanWorkers})
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			s := scanner{since: since, fast: v.fast}
			for b.Loop() {
				n, err := countSessions(context.Background(), root, s, v.workers)
				if err != nil || n != 9_000 {
					b.Fatalf("got %d, %v; want 9000, nil", n, err)
				}
			}
		})
	}
}

// BenchmarkCountSessionsFlat10k times one scan of 10,000 transcripts in one
// directory (Claude Code keeps a project's sessions side by side), the tree
// bench/process_start.sh compares with find(1).
func BenchmarkCountSessionsFlat10k(b *testing.B) {
	files := make([]file, 0, 10_000)
	for i := 0; i < 10_000; i++ {
		age := time.Hour
		if i%10 == 0 {
			age = -time.Hour
		}
		files = append(files, file{fmt.Sprintf("s%05d.jsonl", i), age})
	}
	root := buildTree(b, files)
	for _, workers := range []int{1, scanWorkers} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s := scanner{since: since, fast: fastStatAvailable}
			b.ReportAllocs()
			for b.Loop() {
				n, err := countSessions(context.Background(), root, s, workers)
				if err != nil || n != 9_000 {
					b.Fatalf("got %d, %v; want 9000, nil", n, err)
				}
			}
		})
	}
}
