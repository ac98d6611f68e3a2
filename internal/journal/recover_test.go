package journal

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// leave builds a transaction stuck in state, as a dead process would.
func leave(t *testing.T, state, mem, id, st string) *Txn {
	t.Helper()
	txn, err := Begin(state, mem, id)
	if err != nil {
		t.Fatal(err)
	}
	edit(t, txn.Dir(), map[string]string{"topics/y.md": "y from " + id + "\n"})
	if st == StateCommitting {
		chs, err := txn.changes()
		if err != nil {
			t.Fatal(err)
		}
		txn.rec.Changes = chs
	}
	txn.rec.State = st
	if err := writeRecord(filepath.Dir(txn.Dir()), txn.rec); err != nil {
		t.Fatal(err)
	}
	return txn
}

func TestRecoverStateTransitions(t *testing.T) {
	state, mem := setup(t)
	leave(t, state, mem, "s-staging", StateStaging)
	leave(t, state, mem, "s-parked", StateParked)
	leave(t, state, mem, "s-committed", StateCommitted)
	leave(t, state, mem, "s-committing", StateCommitting)
	key, _ := MemKey(mem)
	root := filepath.Join(state, "journal", key)
	if err := os.MkdirAll(filepath.Join(root, "s-norecord", "stage"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{TempPrefix + "123": "half", "topics/" + TempPrefix + "9": "x"})

	res, err := Recover(state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Discarded, []string{"s-norecord", "s-staging"}) {
		t.Errorf("Discarded = %v", res.Discarded)
	}
	if !slices.Equal(res.RolledForward, []string{"s-committing"}) {
		t.Errorf("RolledForward = %v", res.RolledForward)
	}
	if left := journalEntries(t, state, mem); !slices.Equal(left, []string{"s-parked"}) {
		t.Errorf("journal left %v, want only the parked txn", left)
	}
	want := preTree()
	want["topics/y.md"] = "y from s-committing\n"
	if got := readTree(t, mem); !sameTree(got, want) {
		t.Errorf("memory = %s; temps %v; y=%q", describe(got), tempFiles(got), got["topics/y.md"])
	}
	// Recovering again finds nothing to do.
	res, err = Recover(state, mem)
	if err != nil || len(res.Discarded)+len(res.RolledForward) != 0 {
		t.Fatalf("second Recover = %+v, %v", res, err)
	}
}

func TestRecoverKeepsHandEditAfterCrash(t *testing.T) {
	state, mem := setup(t)
	leave(t, state, mem, "d1", StateCommitting)
	writeTree(t, mem, map[string]string{"topics/y.md": "typed by hand after the crash\n"})
	res, err := Recover(state, mem)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Skipped, []string{"d1: topics/y.md"}) {
		t.Fatalf("Skipped = %v", res.Skipped)
	}
	if got := readTree(t, mem)["topics/y.md"]; got != "typed by hand after the crash\n" {
		t.Fatalf("hand edit overwritten: %q", got)
	}
}

func TestRecoverReportsDamagedRecord(t *testing.T) {
	state, mem := setup(t)
	txn := leave(t, state, mem, "d1", StateStaging)
	recPath := filepath.Join(filepath.Dir(txn.Dir()), recordName)
	if err := os.WriteFile(recPath, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Recover(state, mem)
	if err == nil {
		t.Fatal("Recover accepted a damaged record")
	}
	if left := journalEntries(t, state, mem); !slices.Equal(left, []string{"d1"}) {
		t.Fatalf("damaged txn should stay for inspection, journal has %v", left)
	}
}

func TestDecodeRecordRejectsUnsafe(t *testing.T) {
	now := time.Now().Format(time.RFC3339)
	cases := map[string]string{
		"escape":     `{"id":"a","state":"committing","created_at":"` + now + `","changes":[{"path":"../x","kind":"deleted"}]}`,
		"absolute":   `{"id":"a","state":"committing","changes":[{"path":"/etc/passwd","kind":"deleted"}]}`,
		"lock":       `{"id":"a","state":"committing","changes":[{"path":".consolidate-lock","kind":"deleted"}]}`,
		"bad state":  `{"id":"a","state":"weird"}`,
		"bad id":     `{"id":"../a","state":"staging"}`,
		"no hash":    `{"id":"a","state":"committing","changes":[{"path":"x.md","kind":"added"}]}`,
		"bad kind":   `{"id":"a","state":"committing","changes":[{"path":"x.md","kind":"renamed"}]}`,
		"unclean":    `{"id":"a","state":"staging","base":{"a//b.md":{"size":1}}}`,
		"not object": `[]`,
	}
	for name, data := range cases {
		if _, err := decodeRecord([]byte(data)); err == nil {
			t.Errorf("%s: decodeRecord accepted %s", name, data)
		}
	}
	if _, err := decodeRecord([]byte(`{"id":"a","state":"parked","base":{"t/x.md":{"size":1,"sha256":"ab"}}}`)); err != nil {
		t.Errorf("valid record rejected: %v", err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"id":"a","state":"committing","changes":[{"path":"x.md","kind":"added","new_sha256":"ab"}]}`))
	f.Add([]byte(`{"id":"a","state":"staging","base":{"m.md":{"size":3,"sha256":"x","mode":420}}}`))
	f.Add([]byte(`{"id":"..","state":"parked"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRecord(data)
		if err != nil {
			return
		}
		if validID(r.ID) != nil {
			t.Fatalf("accepted id %q", r.ID)
		}
		for _, c := range r.Changes {
			if !filepath.IsLocal(c.Path) || validRel(c.Path) != nil {
				t.Fatalf("accepted unsafe path %q", c.Path)
			}
		}
	})
}

func TestHasPending(t *testing.T) {
	state, mem := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(mem, "a.md"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if HasPending(state, mem) {
		t.Fatal("pending with no transaction")
	}
	txn, err := Begin(state, mem, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if !HasPending(state, mem) {
		t.Fatal("a staging transaction is not reported pending")
	}
	if err := txn.Park(); err != nil {
		t.Fatal(err)
	}
	if HasPending(state, mem) {
		t.Fatal("a parked review is reported pending")
	}
}
