package offline

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/memory"
)

// TestKeysAsTheyWere holds dupKey and appendUnitKey, built by hand, to the
// Sprintf and Join forms they replaced, over every unit of random memories.
func TestKeysAsTheyWere(t *testing.T) {
	units := 0
	for seed := uint64(0); seed < 20; seed++ {
		dir := t.TempDir()
		if err := randomTree(rand.New(rand.NewPCG(seed, 33)), dir); err != nil {
			t.Fatal(err)
		}
		err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			d := memory.ParseDoc(src)
			for _, u := range d.Units {
				units++
				norm := normalize(u.Content)
				if got, ok := dupKey(d, u, func() string { return norm }); ok {
					if want := fmt.Sprintf("%s\x00%d\x00%s\x00%s", u.Kind, u.Parent, strings.Join(u.Path, "\x1f"), norm); got != want {
						t.Fatalf("dupKey %q, want %q", got, want)
					}
				}
				if got, want := string(appendUnitKey(nil, d, u)), string(u.Kind)+"\x00"+strings.Join(u.Path, "\x1f")+"\x00"+d.Text(u); got != want {
					t.Fatalf("unit key %q, want %q", got, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if units < 1000 {
		t.Fatalf("only %d units compared", units)
	}
}
