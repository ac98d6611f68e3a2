package audit

import (
	"testing"
)

// A memory dir may hold its own .gitignore and .gitattributes (a folder of
// notes kept in git). The history must record every file byte for byte
// regardless: an ignored file a dream deletes must come back on undo, and a
// file with CRLF line endings must come back with them.
func TestUndoIgnoresInTreeGitignoreAndAttributes(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	writeTree(t, mem, map[string]string{
		".gitignore":     "private.md\n",
		".gitattributes": "* text eol=lf\n",
		"private.md":     "kept out of the notes repo, still memory\n",
		"crlf.md":        "line one\r\nline two\r\n",
	})
	before := treeHash(t, mem)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"private.md": "", "crlf.md": "", "topic.md": "rewritten\n"})
	if _, err := h.RecordDream(ctx, meta("d1")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Undo(ctx, "d1", false); err != nil {
		t.Fatal(err)
	}
	if got := treeHash(t, mem); got != before {
		t.Fatalf("tree after undo\n%s\nwant\n%s", got, before)
	}
}
