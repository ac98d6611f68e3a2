package offline

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"
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
		os.WriteFile(p, binary.LittleEndian.AppendUint32(data, crc32.Checksum(data, crcTable())), 0o600)
		loadCache(p, fp, true)
	})
}

// FuzzCacheDelta lays arbitrary delta bodies, with a checksum that holds,
// over a real base: whatever a delta says (entries, removals, pairs of
// another memory), a run with the cache reports and writes exactly what a
// run without one does.
// go test ./internal/offline -run=^$ -fuzz=FuzzCacheDelta
func FuzzCacheDelta(f *testing.F) {
	mem, state := f.TempDir(), f.TempDir()
	files := map[string]string{
		"MEMORY.md":     "# Memory\n\n- [Deploys](deploys.md) — how we ship\n- [Ops](ops/oncall.md) — who is on call\n",
		"deploys.md":    "# Deploys\n\n1. Tag the release.\n2. Run `make deploy` from main.\n\n- The deploy runs from main after a review by two people\n- the deploy runs from main after a review by two people\n",
		"ops/oncall.md": "# On call\n\n> 值班的人周一交接。\n\n- The deploy runs from main after a review by two people\n- Yesterday the pager moved to Ana.\n",
		"scratch.md":    "- the deploy runs from main after a review by three people\n",
	}
	for rel, text := range files {
		p := filepath.Join(mem, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	cache := filepath.Join(state, "c.bin")
	run := func(dir, cache string) []byte {
		rep, err := Run(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: cache})
		if err != nil {
			f.Fatal(err)
		}
		b, _ := json.Marshal(rep)
		return b
	}
	run(mem, cache)
	time.Sleep(racyWindow + 50*time.Millisecond) // so that the next run's stats vouch
	run(mem, cache)
	os.WriteFile(filepath.Join(mem, "scratch.md"), []byte("- the deploy runs from main after a review by two people\n- a new note\n"), 0o644)
	run(mem, cache)
	base, err := os.ReadFile(cache)
	if err != nil {
		f.Fatal(err)
	}
	delta, err := os.ReadFile(cache + ".delta")
	if err != nil {
		f.Fatalf("a one-file run wrote no delta to seed with: %v", err)
	}
	f.Add(delta[len(cacheMagic) : len(delta)-4])
	f.Add(base[len(cacheMagic) : len(base)-4])
	f.Fuzz(func(t *testing.T, body []byte) {
		state := t.TempDir()
		cache := filepath.Join(state, "c.bin")
		os.WriteFile(cache, base, 0o600)
		data := append(append([]byte(nil), cacheMagic...), body...)
		os.WriteFile(cache+".delta", binary.LittleEndian.AppendUint32(data, crc32.Checksum(data, crcTable())), 0o600)
		withCache, without := t.TempDir(), t.TempDir()
		copyTree(t, mem, withCache)
		copyTree(t, mem, without)
		if a, b := runJSON(t, withCache, cache), runJSON(t, without, ""); !bytes.Equal(a, b) {
			t.Fatalf("a run differs with this delta:\n%s\n---\n%s", a, b)
		}
		sameTree(t, withCache, without)
	})
}
