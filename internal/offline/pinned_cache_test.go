package offline

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPinnedFromCacheEqualsUncached: over random memories with pinned
// lines, PinnedFactsWith and MissingPinnedWith, served from a cache whose
// stats vouch for most files, return what PinnedFacts and MissingPinned
// return, before and after edits that remove, move or hide pinned facts
// (an edit of the same size with its mtime put back included).
func TestPinnedFromCacheEqualsUncached(t *testing.T) {
	served := 0
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			dir := t.TempDir()
			if err := randomTree(rng, dir); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "pins.md"), []byte("# Rules\n\n- The staging database is never reset. <!-- pin -->\n- Ask Ana before a schema change. <!-- pin --> (since May)\n> quoted <!-- pin -->\n"), 0o644)
			cache := filepath.Join(t.TempDir(), "state", "c.bin")
			o := Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor(""), Leads: true, CacheFile: cache}
			runJSON(t, dir, cache)
			time.Sleep(racyWindow + 50*time.Millisecond)
			runJSON(t, dir, cache)
			extra := []string{"a fact only the settings hold"}
			check := func(step string) {
				t.Helper()
				want, err := PinnedFacts(dir, extra)
				if err != nil {
					t.Fatal(err)
				}
				got, err := PinnedFactsWith(o, extra)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: pinned facts %q, want %q", step, got, want)
				}
				facts := append(want, "Ask Ana before a schema change.", "never reset.", "not in the memory at all")
				wm, err := MissingPinned(facts, dir)
				if err != nil {
					t.Fatal(err)
				}
				gm, err := MissingPinnedWith(o, facts)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(gm, wm) {
					t.Fatalf("%s: missing %q, want %q", step, gm, wm)
				}
			}
			check("cached")
			if unread(t, dir, cache, "pins.md") {
				served++
			}
			// The pinned line removed, same size, mtime put back.
			p := filepath.Join(dir, "pins.md")
			info, _ := os.Stat(p)
			b, _ := os.ReadFile(p)
			b = []byte(strings.Replace(string(b), "The staging database is never reset.", "The staging database is sometimes up.", 1))
			os.WriteFile(p, b, 0o644)
			os.Chtimes(p, info.ModTime(), info.ModTime())
			check("pin removed")
			// A pinned fact moved to a new file.
			os.WriteFile(filepath.Join(dir, "moved.md"), []byte("- The staging database is never reset.\n"), 0o644)
			check("moved")
		})
	}
	if served == 0 {
		t.Fatal("no pinned file was ever served from the cache")
	}
}
