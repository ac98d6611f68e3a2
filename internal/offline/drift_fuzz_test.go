package offline

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/memory"
)

// FuzzMentions: any text yields well-formed mentions, none outside the repo.
func FuzzMentions(f *testing.F) {
	f.Add("`LoadConfig` in internal/config/loader.go and server.go")
	f.Add("`a/../../b` `x.y.z()`")
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range mentions(s) {
			if m.Mention == "" || (m.Kind != "path" && m.Kind != "file" && m.Kind != "identifier") {
				t.Fatalf("bad mention %+v from %q", m, s)
			}
			if strings.HasPrefix(m.Mention, "/") || strings.HasPrefix(m.Mention, "..") {
				t.Fatalf("mention escapes the repo: %+v", m)
			}
		}
	})
}

// FuzzMentionsPrefilter: the cheap filter in mentions (no code span and no
// ".ext" means no mention) never changes what the patterns find.
func FuzzMentionsPrefilter(f *testing.F) {
	f.Add("`LoadConfig` in internal/config/loader.go and server.go")
	f.Add("see x.Go, `y`.ts and (z.py)")
	f.Add("a.\nb")
	f.Add("see https://x.io/a.go and foo.go, [doc](b.rs) c.rs")
	f.Add("x.gox y.go_ z.go-1 w.GO v.go.bak u.cpp\fq.h")
	f.Add("(main.go) [\"a.py\"] 'b.ts'; c.tsx: d.sh! e.rb? f.c")
	f.Add("`x.go` y.go")
	f.Fuzz(func(t *testing.T, s string) {
		got, want := mentions(s), mentionsUnfiltered(s)
		if len(got) != len(want) {
			t.Fatalf("%q: %+v, want %+v", s, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: %+v, want %+v", s, got, want)
			}
		}
	})
}

// mentionsUnfiltered is mentions without its prefilter: every pattern run.
func mentionsUnfiltered(text string) []Suspect {
	var out []Suspect
	for _, m := range driftPatterns().codeSpan.FindAllStringSubmatch(text, -1) {
		if s, ok := classify(strings.TrimSpace(m[1])); ok {
			out = append(out, s)
		}
	}
	prose := driftPatterns().codeSpan.ReplaceAllString(text, " ")
	prose = driftPatterns().linkTarget.ReplaceAllString(prose, "]")
	prose = driftPatterns().url.ReplaceAllString(prose, " ")
	for _, m := range driftPatterns().bareFile.FindAllStringSubmatch(prose, -1) {
		if s, ok := classify(m[1]); ok {
			out = append(out, s)
		}
	}
	return out
}

// BenchmarkMentions times mentions against mentionsUnfiltered (every
// pattern run on every text) over the units of the benchmark memory, in
// the same process: the ratio to read is filtered-ns over unfiltered-ns.
//
//	go test -run=^$ -bench=Mentions ./internal/offline/
func BenchmarkMentions(b *testing.B) {
	dir := b.TempDir()
	writeBench(b, dir, 300, false)
	var texts []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, u := range memory.ParseDoc(src).Units {
			if u.Leaf {
				texts = append(texts, u.Content)
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var filtered, unfiltered time.Duration
	for b.Loop() {
		t0 := time.Now()
		for _, s := range texts {
			mentions(s)
		}
		t1 := time.Now()
		for _, s := range texts {
			mentionsUnfiltered(s)
		}
		filtered, unfiltered = filtered+t1.Sub(t0), unfiltered+time.Since(t1)
	}
	b.ReportMetric(float64(filtered.Nanoseconds())/float64(b.N), "filtered-ns")
	b.ReportMetric(float64(unfiltered.Nanoseconds())/float64(b.N), "unfiltered-ns")
	b.ReportMetric(float64(filtered)/float64(unfiltered), "x-unfiltered")
	b.ReportMetric(float64(len(texts)), "texts")
}
