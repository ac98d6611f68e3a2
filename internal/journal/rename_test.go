package journal

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// renameInstalls renames each directory's files in their order, every file
// once, and after a failure starts no directory's next rename; the error is
// the failing install's, and renamed says exactly which were done.
func TestRenameInstallsOrderAndFailure(t *testing.T) {
	var installs []install
	for i := range 60 {
		installs = append(installs, install{tmp: fmt.Sprintf("d%d/.tmp%d", i%5, i), rel: fmt.Sprintf("d%d/f%02d.md", i%5, i)})
	}
	installs = append(installs, install{tmp: ".tmp-root", rel: "MEMORY.md"})
	for _, failAt := range []int{-1, 0, 7, 33, len(installs) - 1} {
		t.Run(fmt.Sprintf("fail=%d", failAt), func(t *testing.T) {
			var mu sync.Mutex
			calls := map[string][]int{}
			boom := errors.New("disk on fire")
			renamed, err := renameInstalls(installs, func(in install) error {
				i := -1
				for j := range installs {
					if installs[j] == in {
						i = j
					}
				}
				mu.Lock()
				d := filepath.Dir(in.rel)
				calls[d] = append(calls[d], i)
				mu.Unlock()
				if i == failAt {
					return boom
				}
				return nil
			})

			if failAt < 0 {
				if err != nil {
					t.Fatalf("renameInstalls = %v", err)
				}
			} else if !errors.Is(err, boom) {
				t.Fatalf("renameInstalls = %v, want the failure of %s", err, installs[failAt].rel)
			}
			seen := map[int]bool{}
			for d, is := range calls {
				for k, i := range is {
					if seen[i] {
						t.Errorf("%s renamed twice", installs[i].rel)
					}
					seen[i] = true
					if k > 0 && is[k-1] > i {
						t.Errorf("in %q, %s renamed after %s", d, installs[is[k-1]].rel, installs[i].rel)
					}
					if k > 0 && is[k-1] == failAt {
						t.Errorf("in %q, %s renamed after the failure", d, installs[i].rel)
					}
				}
			}
			for i := range installs {
				if want := seen[i] && i != failAt; renamed[i] != want {
					t.Errorf("renamed[%d] (%s) = %v, want %v", i, installs[i].rel, renamed[i], want)
				}
			}
			if failAt < 0 && len(seen) != len(installs) {
				t.Errorf("%d of %d renamed", len(seen), len(installs))
			}
		})
	}
}
