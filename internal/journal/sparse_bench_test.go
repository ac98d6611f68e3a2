package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOneFileDream is a whole transaction (Begin, one file written,
// Freeze, Changes, Commit) over a memory of 3,000 files, for each staging:
// a copy, links, and sparse. The sparse one must not grow with the memory:
// compare its ns/op with the linked one's (go test -bench OneFileDream).
func BenchmarkOneFileDream(b *testing.B) {
	mem, state := b.TempDir(), b.TempDir()
	for i := range 3000 {
		dir := filepath.Join(mem, fmt.Sprintf("area%02d", i%30))
		os.MkdirAll(dir, 0o755)
		body := fmt.Sprintf("---\nname: topic %d\n---\n\n## Facts\n\n- fact %d\n- 事实 %d\n", i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%04d.md", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	settle()
	// The file each iteration rewrites was committed by the previous one,
	// just before Begin: its start version is proved by content, read here
	// from the memory as dream reads it from the audit history.
	start := func(rel string) ([]byte, bool, error) {
		b, err := os.ReadFile(filepath.Join(mem, filepath.FromSlash(rel)))
		return b, err == nil, nil
	}
	for _, mode := range []struct {
		name string
		o    Options
	}{{"copy", Options{}}, {"linked", Options{LinkUnchanged: true}}, {"sparse", Options{Sparse: true, Start: start}}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				txn, err := BeginWith(state, mem, fmt.Sprintf("b-%s-%d", mode.name, i), mode.o)
				if err != nil {
					b.Fatal(err)
				}
				rel := filepath.Join("area00", "t0000.md")
				p := filepath.Join(txn.Dir(), rel)
				os.MkdirAll(filepath.Dir(p), 0o755)
				// Replace, never write in place: a linked staging's file is
				// the original's inode.
				if err := os.WriteFile(p+".new", fmt.Appendf(nil, "---\nname: topic 0\n---\n\n## Facts\n\n- fact 0 (run %d)\n", i), 0o644); err != nil {
					b.Fatal(err)
				}
				if err := os.Rename(p+".new", p); err != nil {
					b.Fatal(err)
				}
				txn.Freeze()
				chs, err := txn.Commit()
				if err != nil || len(chs) != 1 {
					b.Fatalf("commit: %v %v", chs, err)
				}
			}
		})
	}
}
