package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkStageSmallFiles stages one batch of bulkBatch Markdown files of
// a given size into an empty history, with the blobs stored whole (what a
// record does for files up to rawObjectMax) and compressed at git's default
// level, taking turns in the same run. It reports the time and the pack
// size of the first over the second, the trade rawObjectMax is set by:
//
//	go test -run '^$' -bench StageSmallFiles -benchtime 5x ./internal/audit/
func BenchmarkStageSmallFiles(b *testing.B) {
	for _, size := range []int{700, 2 << 10, 4 << 10, 8 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) { benchStage(b, size) })
	}
}

// memoryFile is a topic file of about size bytes: frontmatter, nested
// headings, a numbered procedure, notes with dates, Chinese and code, each
// line varied by the topic's number as files written by hand are.
func memoryFile(i, size int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "---\nname: service %d\ndescription: how service %d is deployed and who owns it\n---\n\n# Service %d\n\n## Deploy\n\n1. Run `make release SERVICE=svc%d`.\n2. Watch the dashboard for %d minutes.\n", i, i, i, i, 5+i%11)
	for n := 0; s.Len() < size; n++ {
		switch n % 4 {
		case 0:
			fmt.Fprintf(&s, "\n### Incident %d-%d\n\n- On 2026-%02d-%02d the queue of svc%d backed up past %d messages; the fix was to raise the consumer count to %d.\n", i, n, n%12+1, n%28+1, i, 1000*(n%9+1), n%7+2)
		case 1:
			fmt.Fprintf(&s, "- 备注：第 %d 次发布前先通知值班（%s），回滚用 `svcctl rollback --to v%d.%d`。\n", n, []string{"张三", "李四", "王五"}[n%3], i%5, n)
		case 2:
			fmt.Fprintf(&s, "\n```sh\nsvcctl scale svc%d --replicas %d --region eu-%d\n```\n", i, n%6+2, n%3+1)
		default:
			fmt.Fprintf(&s, "> Owner: team %d since 2025-%02d. Ask in #svc%d before changing the limits (%d req/s).\n", i%13, n%12+1, i, 50*(n%20+1))
		}
	}
	return s.String()
}

func benchStage(b *testing.B, size int) {
	needGit(b)
	mem := b.TempDir()
	files := map[string]string{}
	var list []byte
	for i := range bulkBatch {
		p := fmt.Sprintf("topic_%04d.md", i)
		files[p] = memoryFile(i, size)
		list = append(append(list, p...), 0)
	}
	writeTree(b, mem, files)
	h, err := Open(testCtx(b), b.TempDir(), mem)
	if err != nil {
		b.Fatal(err)
	}
	ctx := testCtx(b)
	stage := func(raw bool) (time.Duration, int64) {
		os.Remove(filepath.Join(h.gitDir, "index"))
		packs := filepath.Join(h.gitDir, "objects", "pack")
		os.RemoveAll(packs)
		os.MkdirAll(packs, 0o755)
		args := append([]string(nil), bulkCheckin...)
		if raw {
			args = append(args, storeRaw...)
		}
		t0 := time.Now()
		if _, err := h.gitEnv(ctx, bulkEnv(), list, append(args, "update-index", "--add", "-z", "--stdin")...); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		var size int64
		des, _ := os.ReadDir(packs)
		for _, de := range des {
			if info, err := de.Info(); err == nil && filepath.Ext(de.Name()) == ".pack" {
				size += info.Size()
			}
		}
		return d, size
	}
	var whole, zipped time.Duration
	var wholeSize, zippedSize int64
	for b.Loop() {
		d, s := stage(true)
		whole, wholeSize = whole+d, s
		d, s = stage(false)
		zipped, zippedSize = zipped+d, s
	}
	b.ReportMetric(float64(whole)/float64(zipped), "time-whole/compressed")
	b.ReportMetric(float64(wholeSize)/float64(zippedSize), "pack-whole/compressed")
}
