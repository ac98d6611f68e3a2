// Command genmemory writes a synthetic Claude Code–style memory directory
// for the scaling benchmarks: a MEMORY.md index and N topic files that look
// like real memories (front matter, nested headings, numbered procedures,
// code, quotes, Chinese, rules beside pointers), with planted work for the
// offline engine — duplicate list items under one heading, relative dates
// under a dated heading, and topics the index does not mention.
//
// Usage:
//
//	genmemory -dir DIR -topics N [-seed 1] [-big BYTES]
//
// The output is deterministic for a seed. -big adds one opaque file of that
// many bytes (a pasted log), for the large-file benchmark.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

var subjects = []string{"build", "deploy", "auth", "cache", "router", "billing", "search", "storage", "queue", "metrics", "i18n", "frontend"}

var facts = []string{
	"Run `make test` before pushing; CI runs the race detector.",
	"The staging database is reset every Monday at 06:00 UTC.",
	"Prefer table tests; golden files live under testdata/ with an -update flag.",
	"Never log request bodies: they can hold tokens.",
	"The retry budget is three attempts with jittered back-off.",
	"部署前先在预发环境验证迁移脚本。",
	"用户偏好简洁的提交信息，主题行不超过五十个字符。",
	"Feature flags are read once at start; a change needs a restart.",
	"The `internal/api` package owns request validation.",
	"Timeouts are set per call with context.WithTimeout, never globally.",
}

func main() {
	dir := flag.String("dir", "", "memory dir to create (must not exist)")
	n := flag.Int("topics", 300, "number of topic files")
	seed := flag.Uint64("seed", 1, "random seed")
	big := flag.Int64("big", 0, "size in bytes of one extra opaque file (0: none)")
	flag.Parse()
	if *dir == "" || *n <= 0 {
		fmt.Fprintln(os.Stderr, "usage: genmemory -dir DIR -topics N [-seed 1] [-big BYTES]")
		os.Exit(2)
	}
	if err := generate(*dir, *n, *seed, *big); err != nil {
		fmt.Fprintln(os.Stderr, "genmemory:", err)
		os.Exit(1)
	}
}

func generate(dir string, n int, seed uint64, big int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var index strings.Builder
	index.WriteString("# Memory\n\n")
	for i := 0; i < n; i++ {
		subj := subjects[i%len(subjects)]
		name := fmt.Sprintf("%s_%05d.md", subj, i)
		sub := ""
		if i%10 == 0 {
			sub = subj // every tenth topic in a subdirectory
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				return err
			}
		}
		rel := filepath.ToSlash(filepath.Join(sub, name))
		if err := os.WriteFile(filepath.Join(dir, sub, name), []byte(topic(rng, i, subj)), 0o644); err != nil {
			return err
		}
		// One topic in twenty is unindexed: the offline engine indexes it.
		if i%20 != 7 {
			fmt.Fprintf(&index, "- [%s %d](%s) — %s notes, part %d\n", subj, i, rel, subj, i)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(index.String()), 0o644); err != nil {
		return err
	}
	if big > 0 {
		if err := writeBig(filepath.Join(dir, "pasted-build-log.txt"), big, rng); err != nil {
			return err
		}
	}
	return nil
}

func topic(rng *rand.Rand, i int, subj string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s-%d\ndescription: %s notes, part %d\ntype: project\n---\n\n", subj, i, subj, i)
	fmt.Fprintf(&b, "# %s %d\n\n", strings.ToUpper(subj[:1])+subj[1:], i)
	fmt.Fprintf(&b, "## 2026-%02d-%02d\n\n", 1+i%12, 1+i%28)
	for k := 0; k < 4; k++ {
		fmt.Fprintf(&b, "- %s\n", facts[rng.IntN(len(facts))])
	}
	if i%3 == 0 {
		// An exact duplicate under the same heading.
		fmt.Fprintf(&b, "- %s\n", facts[i%len(facts)])
		fmt.Fprintf(&b, "- %s\n", facts[i%len(facts)])
	}
	if i%4 == 0 {
		b.WriteString("- Fixed the flaky test yesterday; it was a shared temp dir.\n")
	}
	b.WriteString("\n### Procedure\n\n1. Pull the latest main.\n2. Run the migrations: `go run ./cmd/migrate up`.\n3. Check the dashboard before announcing.\n\n")
	b.WriteString("> Rule: ask before deleting anything under /var/lib.\n\n")
	b.WriteString("```go\nctx, cancel := context.WithTimeout(ctx, 5*time.Second)\ndefer cancel()\n```\n\n")
	fmt.Fprintf(&b, "See also [the %s index](MEMORY.md).\n", subj)
	return b.String()
}

func writeBig(path string, size int64, rng *rand.Rand) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	for line := 0; written < size; line++ {
		s := fmt.Sprintf("2026-11-30T03:%02d:%02d.%06dZ INFO build step %d: compiled package %d in %dms\n", line/60%60, line%60, rng.IntN(1e6), line, rng.IntN(5000), rng.IntN(900))
		if rest := size - written; int64(len(s)) > rest {
			s = s[:rest]
		}
		n, err := w.WriteString(s)
		if err != nil {
			f.Close()
			return err
		}
		written += int64(n)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
