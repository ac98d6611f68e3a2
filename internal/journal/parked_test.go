package journal

import (
	"errors"
	"testing"
)

// A parked review applied after memory changed must refuse, change nothing,
// and stay parked so that it can still be read or discarded.
func TestParkedCommitAfterMemoryChangedRefuses(t *testing.T) {
	state, mem := setup(t)
	txn, err := Begin(state, mem, "review-1")
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), dreamEdits())
	if err := txn.Park(); err != nil {
		t.Fatal(err)
	}
	edit(t, mem, map[string]string{"user.md": "edited by hand\n", "project_c.md": "mine\n"})
	edited := readTree(t, mem)
	back, err := Load(state, mem, "review-1")
	if err != nil {
		t.Fatal(err)
	}
	chs, err := back.Commit()
	if !errors.Is(err, ErrConflict) || chs != nil {
		t.Fatalf("Commit = %v, %v; want ErrConflict", chs, err)
	}
	if !sameTree(readTree(t, mem), edited) {
		t.Fatalf("a refused commit changed memory: %s", describe(readTree(t, mem)))
	}
	infos, err := ListParked(state, mem)
	if err != nil || len(infos) != 1 {
		t.Fatalf("after a refused commit: ListParked = %+v, %v", infos, err)
	}
	if HasPending(state, mem) {
		t.Fatal("a refused parked commit left a pending transaction")
	}
	again, err := Load(state, mem, "review-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Discard(); err != nil {
		t.Fatal(err)
	}
}
