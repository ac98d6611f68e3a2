package offline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// benchDocs is a memory of n topic files of five ten-word facts drawn from
// a 2,000-word vocabulary, with a near-duplicate (one word changed) of the
// previous topic's first fact planted in every tenth topic.
func benchDocs(n int) []*doc {
	rng := rand.New(rand.NewPCG(1, 2))
	fact := func() []string {
		w := make([]string, 10)
		for k := range w {
			w[k] = fmt.Sprintf("w%d", rng.IntN(2000))
		}
		return w
	}
	var docs []*doc
	var prev []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "---\nname: t%d\n---\n", i)
		for f := 0; f < 5; f++ {
			words := fact()
			if f == 0 && i%10 == 9 && prev != nil {
				words = append([]string(nil), prev...)
				words[9] = "changed"
			}
			if f == 0 {
				prev = words
			}
			fmt.Fprintf(&b, "- %s\n", strings.Join(words, " "))
		}
		d := newDoc(fmt.Sprintf("t%03d.md", i), []byte(b.String()))
		d.body = 3
		docs = append(docs, d)
	}
	return docs
}

// naivePairs is the all-pairs baseline the inverted index replaces.
func naivePairs(docs []*doc) int {
	var us []map[string]bool
	var keys []string
	for _, d := range docs {
		for _, u := range units(d) {
			us = append(us, shingles(u.key))
			keys = append(keys, u.key)
		}
	}
	n := 0
	for i := range us {
		for j := i + 1; j < len(us); j++ {
			if keys[i] != keys[j] && jaccard(us[i], us[j]) >= nearThreshold {
				n++
			}
		}
	}
	return n
}

// BenchmarkNearDuplicates reports how many times faster the inverted index
// is than comparing all pairs, both measured here on the same 300-topic
// memory: go test -run=^$ -bench=NearDuplicates ./internal/offline/
func BenchmarkNearDuplicates(b *testing.B) {
	docs := benchDocs(300)
	ctx := context.Background()
	start := time.Now()
	base := naivePairs(docs)
	naive := time.Since(start)
	b.ResetTimer()
	var got []Pair
	for b.Loop() {
		var err error
		if got, err = nearDuplicates(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(naive)/float64(perOp), "x-faster-than-all-pairs")
	b.ReportMetric(float64(len(got)), "pairs")
	b.ReportMetric(float64(base), "baseline-pairs")
}
