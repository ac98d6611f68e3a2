package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkStageSmallFiles stages one batch of bulkBatch memory-sized
// files (a few hundred bytes of Markdown each, as in a generated
// 30,000-topic memory) into an empty history, with the blobs stored whole
// (what a record does for small files, see rawObjectMax) and compressed at
// git's default level, taking turns in the same run. It reports the time
// and the pack size of the first over the second:
//
//	go test -run '^$' -bench StageSmallFiles -benchtime 10x ./internal/audit/
func BenchmarkStageSmallFiles(b *testing.B) {
	needGit(b)
	mem := b.TempDir()
	files := map[string]string{}
	var list []byte
	for i := range bulkBatch {
		p := fmt.Sprintf("topic_%04d.md", i)
		files[p] = fmt.Sprintf("---\nname: topic %d\ndescription: facts about service %d\n---\n\n# Service %d\n\n## Deploy\n\n1. Run `make release SERVICE=svc%d`.\n2. Watch the dashboard for 10 minutes.\n\n- Owner: team %d (since 2026-%02d-01)\n- 备注：部署前先通知值班。\n", i, i, i, i, i%13, i%12+1)
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
