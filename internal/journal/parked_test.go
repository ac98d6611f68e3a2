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

// A commit that holds files lands the rest as one commit and parks the held
// ones, with the reason, as a review transaction that shows them against
// the memory and lands them on apply.
func TestCommitHoldsFilesForReview(t *testing.T) {
	state, mem := setup(t)
	pre := readTree(t, mem)
	txn, err := Begin(state, mem, "hold-1")
	if err != nil {
		t.Fatal(err)
	}
	edits := dreamEdits()
	edit(t, txn.Dir(), edits)
	res, err := txn.CommitWith(CommitOptions{Hold: map[string]string{"project_a.md": "a changed date without evidence"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ReviewID != "hold-1-review" || len(res.ForReview) != 1 || res.ForReview[0] != "project_a.md" {
		t.Fatalf("review %q %v", res.ReviewID, res.ForReview)
	}
	for _, c := range res.Applied {
		if c.Path == "project_a.md" {
			t.Fatal("a held file was applied")
		}
	}
	got := readTree(t, mem)
	if got["project_a.md"] != pre["project_a.md"] || got["user.md"] != edits["user.md"] {
		t.Fatalf("the held file changed or the rest did not land: %s", describe(got))
	}
	review, err := Load(state, mem, res.ReviewID)
	if err != nil {
		t.Fatal(err)
	}
	if review.ParkReason() != "a changed date without evidence (project_a.md)" {
		t.Errorf("park reason %q", review.ParkReason())
	}
	chs, err := review.Changes()
	if err != nil || len(chs) != 1 || chs[0].Path != "project_a.md" {
		t.Fatalf("the review's changes: %+v, %v", chs, err)
	}
	if _, err := review.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, mem); got["project_a.md"] != edits["project_a.md"] {
		t.Fatalf("apply did not land the held file: %q", got["project_a.md"])
	}
}
