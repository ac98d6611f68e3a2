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
// stat strategy available here; compare the sub-benchmarks' ns/op to see what
// fstatat buys over DirEntry.Info.
func BenchmarkCountSessions10k(b *testing.B) {
	root := tenThousand(b)
	for _, fast := range strategies() {
		name := "info"
		if fast {
			name = "fstatat"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				n, err := countSessions(context.Background(), root, since, "", fast)
				if err != nil || n != 9_000 {
					b.Fatalf("got %d, %v; want 9000, nil", n, err)
				}
			}
		})
	}
}
