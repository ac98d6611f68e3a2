package journal

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// BenchmarkCommitManyFiles is the commit of a sparse dream that rewrote
// 3,000 memory files (a big first dream), by link and by copy, against
// `cp -a` of the same staged files into a fresh dir in the same run, and
// by link flushed file by file instead of with one syncfs (link-fsync), and
// by link keeping the files it replaced (link-keep, KeepReplaced; their
// freeing after the commit is free-median-ns, not in the commit's time):
// the x-cp metric is the commit's median time over cp's (medians, as the
// two alternate and a shared machine's noise hits either). The scan (Freeze, Changes)
// is done before the timer runs, as the dream's guards do it before the
// commit (go test -run '^$' -bench CommitManyFiles -benchtime 5x).
func BenchmarkCommitManyFiles(b *testing.B) {
	const files = 3000
	if _, err := exec.LookPath("cp"); err != nil {
		b.Skip("no cp to compare with")
	}
	for _, install := range []struct {
		name   string
		link   bool
		fsyncs bool // syncfs declines: one fsync per file and directory
		keep   bool // KeepReplaced
	}{{"link", true, false, false}, {"link-keep", true, false, true}, {"link-fsync", true, true, false}, {"copy", false, false, false}} {
		b.Run(install.name, func(b *testing.B) {
			linkInstalls = install.link
			if install.fsyncs {
				syncFS = func(string) (bool, error) { return false, nil }
			}
			defer func() { linkInstalls, syncFS = true, fsutil.SyncFS }()
			mem, state, scratch := b.TempDir(), b.TempDir(), b.TempDir()
			body := func(i, run int) []byte {
				return fmt.Appendf(nil, "---\nname: topic %d\ndescription: run %d\n---\n\n# Topic %d\n\n## Facts\n\n- fact %d (run %d)\n- 事实 %d\n\n## Steps\n1. `make test`\n2. > keep it short\n", i, run, i, i, run, i)
			}
			write := func(dir string, run int) {
				for i := range files {
					p := filepath.Join(dir, fmt.Sprintf("area%02d", i%30), fmt.Sprintf("t%04d.md", i))
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, body(i, run), 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			write(mem, 0)
			var commitTimes, cpTimes, freeTimes []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				settle()
				txn, err := BeginWith(state, mem, fmt.Sprintf("many-%d", i), Options{Sparse: true})
				if err != nil {
					b.Fatal(err)
				}
				write(txn.Dir(), i+1)
				txn.Freeze()
				if chs, err := txn.Changes(); err != nil || len(chs) != files {
					b.Fatalf("changes: %d, %v", len(chs), err)
				}
				dst := filepath.Join(scratch, fmt.Sprint(i))
				start := time.Now()
				if out, err := exec.Command("cp", "-a", txn.Dir(), dst).CombinedOutput(); err != nil {
					b.Fatalf("cp: %v: %s", err, out)
				}
				cpTimes = append(cpTimes, time.Since(start))
				b.StartTimer()
				start = time.Now()
				res, err := txn.CommitWith(CommitOptions{KeepReplaced: install.keep})
				if err != nil {
					b.Fatal(err)
				}
				commitTimes = append(commitTimes, time.Since(start))
				b.StopTimer()
				if install.keep {
					if res.Replaced == "" {
						b.Fatal("a commit by link kept nothing")
					}
					start = time.Now()
					if err := RemoveReplaced(res.Replaced); err != nil {
						b.Fatal(err)
					}
					freeTimes = append(freeTimes, time.Since(start))
				}
				os.RemoveAll(dst)
				b.StartTimer()
			}
			b.ReportMetric(float64(median(commitTimes))/float64(median(cpTimes)), "x-cp")
			b.ReportMetric(float64(median(commitTimes).Nanoseconds()), "commit-median-ns")
			b.ReportMetric(float64(median(cpTimes).Nanoseconds()), "cp-median-ns")
			if install.keep {
				b.ReportMetric(float64(median(freeTimes).Nanoseconds()), "free-median-ns")
			}
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
