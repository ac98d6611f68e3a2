package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"
)

// helperSparseDream is helperDream with a sparse staging: the "runner"
// writes only the files it changes, one at a time, then commits.
func helperSparseDream(state, mem string) error {
	time.Sleep(clockSlack + 20*time.Millisecond) // the memory predates the dream
	txn, err := BeginWith(state, mem, "crashdream", Options{Sparse: true})
	if err != nil {
		return err
	}
	edits := sparseEdits()
	paths := make([]string, 0, len(edits))
	for p := range edits {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for i, p := range paths {
		full := filepath.Join(txn.Dir(), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(edits[p]), 0o644); err != nil {
			return err
		}
		crashPoint("agent:write:%d", i+1)
	}
	_, err = txn.Commit()
	return err
}

// A sparse dream killed at any point is finished or forgotten whole by the
// next Recover: the memory is exactly the old tree or the new one.
func TestSparseCrashAtEveryPointRecoversWholeTree(t *testing.T) {
	var pre, post []string
	pre = append(pre, "begin:done")
	for i := 1; i <= len(sparseEdits()); i++ {
		pre = append(pre, fmt.Sprintf("agent:write:%d", i))
	}
	post = append(post, "commit:record")
	for i := 1; i <= 7; i++ {
		post = append(post, fmt.Sprintf("commit:link:%d", i), fmt.Sprintf("commit:tmp:%d", i), fmt.Sprintf("commit:rename:%d", i))
	}
	post = append(post, "commit:synced", "commit:marked")
	type tc struct {
		at, recoverAt string
		wantPost      bool
	}
	var cases []tc
	for _, p := range pre {
		cases = append(cases, tc{at: p})
	}
	for _, p := range post {
		cases = append(cases, tc{at: p, wantPost: true})
	}
	cases = append(cases,
		tc{at: "commit:rename:3", recoverAt: "recover:forward:crashdream", wantPost: true},
		tc{at: "commit:tmp:5", recoverAt: "commit:rename:2", wantPost: true},
	)
	deadline := time.Now().Add(60 * time.Second)
	for _, c := range cases {
		name := c.at
		if c.recoverAt != "" {
			name += "+" + c.recoverAt
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if time.Now().After(deadline) {
				t.Skip("crash test time budget spent")
			}
			state, mem := setup(t)
			if !runHelper(t, "sparsedream", state, mem, c.at) {
				t.Fatalf("crash point %q was never reached", c.at)
			}
			if c.recoverAt != "" && !runHelper(t, "recover", state, mem, c.recoverAt) {
				t.Fatalf("recovery crash point %q was never reached", c.recoverAt)
			}
			res, err := Recover(state, mem)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			got := readTree(t, mem)
			switch {
			case sameTree(got, after(preTree(), sparseEdits())):
				if !c.wantPost {
					t.Errorf("crash before the commit record rolled forward (%+v)", res)
				}
			case sameTree(got, preTree()):
				if c.wantPost {
					t.Errorf("crash after the commit record was not rolled forward (%+v)", res)
				}
			default:
				t.Fatalf("memory is a mix of old and new: %s (temps %v)", describe(got), tempFiles(got))
			}
			if left := journalEntries(t, state, mem); len(left) != 0 {
				t.Errorf("journal left %v", left)
			}
			if c.wantPost && c.at != "commit:marked" && !slices.Equal(res.RolledForward, []string{"crashdream"}) {
				t.Errorf("RolledForward = %v", res.RolledForward)
			}
		})
	}
}
