//go:build unix

package offline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkWriteNew compares the two ways the engine can write a file into
// an empty write dir: the atomic replace (a temporary file renamed over
// the target, the baseline) and the direct exclusive create (writeNewIn).
// Each op writes 1,000 files of 2 KB each way, into fresh dirs, in turn
// (the order alternating between ops), so that the two share the disk's
// and the machine's state; the figure to read is x-atomic, the direct
// way's CPU time (user + system: creating an inode is kernel work) over
// the atomic one's.
//
//	go test -run=^$ -bench=WriteNew -benchtime=20x ./internal/offline/
func BenchmarkWriteNew(b *testing.B) {
	data := []byte(strings.Repeat("- a line of memory text, as a topic holds\n", 48))
	var cpu [2]time.Duration
	i := 0
	for b.Loop() {
		i++
		for k := range 2 {
			direct := (k+i)%2 == 0
			b.StopTimer()
			dir := b.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				b.Fatal(err)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			c0 := cpuTime()
			for j := range 1000 {
				rel := fmt.Sprintf("topic_%05d.md", j)
				if j%10 == 0 {
					rel = filepath.Join("sub", rel)
				}
				if direct {
					_, err = writeNewIn(root, rel, data, 0o644)
				} else {
					err = writeAtomicIn(root, rel, data, 0o644)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if direct {
				cpu[1] += cpuTime() - c0
			} else {
				cpu[0] += cpuTime() - c0
			}
			root.Close()
		}
	}
	b.ReportMetric(float64(cpu[0].Microseconds())/float64(b.N)/1000, "atomic-cpu-ms/op")
	b.ReportMetric(float64(cpu[1].Microseconds())/float64(b.N)/1000, "direct-cpu-ms/op")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "x-atomic")
}
