package offline

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCacheDecode feeds arbitrary bytes to the cache's decoder, whose
// checksum a hand-made file passes: it must refuse or decode them, never
// panic or allocate past what the bytes could hold.
// go test ./internal/offline -run=^$ -fuzz=FuzzCacheDecode
func FuzzCacheDecode(f *testing.F) {
	dir, state := f.TempDir(), f.TempDir()
	os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte("# Memory\n\n- [A](a.md) — a\n<!-- drafts/ -->\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("- the deploy runs from main after a review by two people <!-- pin -->\n- `make check` runs the linters\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.md"), []byte("- the deploy runs from main after a review by three people\n"), 0o644)
	cache := filepath.Join(state, "c.bin")
	if _, err := Run(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: cache}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(cache)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good[len(cacheMagic) : len(good)-4])
	f.Add([]byte{cacheVersion})
	fp := LayoutFor("").fingerprint()
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := decodeCache(body, fp, false)
		if err == nil && c == nil {
			t.Fatal("no cache and no error")
		}
		// Through the file, with a checksum that holds.
		p := filepath.Join(t.TempDir(), "c.bin")
		data := append(append([]byte(nil), cacheMagic...), body...)
		os.WriteFile(p, binary.LittleEndian.AppendUint32(data, crc32.Checksum(data, crcTable)), 0o600)
		loadCache(p, fp, true)
	})
}
