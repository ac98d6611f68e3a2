package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/sandbox"
	"golang.org/x/text/unicode/norm"
)

// TestWriteRefusesPathsTheFileSystemCannotHold is issue 28's 4,400-byte
// path: answered "Created" (os.Root makes it one directory at a time), it
// then failed the commit with ENAMETOOLONG and the dream's good edits were
// lost. It is a tool error at the call now, naming the limit, and nothing
// is created; a name at the file system's own limit still works.
func TestWriteRefusesPathsTheFileSystemCannotHold(t *testing.T) {
	f := newFixture(t, Limits{})
	deep := strings.TrimSuffix(strings.Repeat("a-directory-name-of-forty-bytes-exactly/", 110), "/") + "/note.md"
	tests := []struct {
		name, path string
		want       []string
	}{
		{"4,400-byte path", deep, []string{"write refused", "path too long", "bytes long", "shorter"}},
		{"a name over NAME_MAX", strings.Repeat("n", 300) + ".md", []string{"write refused", "path too long", "303 bytes", "at most 255 bytes per name"}},
		{"a directory name over NAME_MAX", strings.Repeat("d", 256) + "/x.md", []string{"write refused", "256 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, f.staging)
			res, err := f.call(t, "write", map[string]any{"file_path": tt.path, "content": "# Note\n\nkept\n"})
			wantErr(t, err, tt.want...)
			if !errors.Is(err, sandbox.ErrTooLong) {
				t.Errorf("error %v is not ErrTooLong", err)
			}
			if res.Content != "" || !sameSnapshot(before, snapshot(t, f.staging)) {
				t.Errorf("a refused write changed the staging (result %q)", res.Content)
			}
		})
	}
	// The longest name the file system holds is still written (its
	// temporary name is cut to fit), and so is a deep path under PATH_MAX.
	long := strings.Repeat("x", 252) + ".md"
	if _, err := f.call(t, "write", map[string]any{"file_path": long, "content": "# Long\n\nname\n"}); err != nil {
		t.Fatalf("a 255-byte name: %v", err)
	}
	if got := readFile(t, filepath.Join(f.staging, long)); got != "# Long\n\nname\n" {
		t.Errorf("255-byte name holds %q", got)
	}
	ok := strings.Repeat("sub/", 200) + "note.md"
	if _, err := f.call(t, "write", map[string]any{"file_path": ok, "content": "# Deep\n\nnote\n"}); err != nil {
		t.Fatalf("an 807-byte path: %v", err)
	}
}

// TestWriteRefusesNamesThatCollideOnCaseInsensitiveSystems is issue 28's
// Build.md beside build.md: Linux keeps both, macOS and Windows one, so
// the memory synced to a laptop silently loses one. A new name that folds
// (case, Unicode normalisation) onto an existing one, in the memory or
// written earlier in the same dream, at any depth, is refused with the
// name to use instead; the exact existing spelling still passes.
func TestWriteRefusesNamesThatCollideOnCaseInsensitiveSystems(t *testing.T) {
	nfc, nfd := norm.NFC.String("café.md"), norm.NFD.String("café.md")
	if nfc == nfd {
		t.Fatal("NFC and NFD spellings are the same bytes")
	}
	tests := []struct {
		name     string
		existing []string // files in the memory before the call
		path     string
		want     []string // fragments of the refusal; nil: the write succeeds
	}{
		{"letter case", []string{"build.md"}, "Build.md", []string{"Build.md collides with the existing", "build.md", "letter case", "edit " + "$MEM/build.md instead"}},
		{"the index", []string{"MEMORY.md"}, "MEMORY.MD", []string{"MEMORY.MD collides", "edit $MEM/MEMORY.md instead"}},
		{"NFD beside NFC", []string{nfc}, nfd, []string{"collides", "Unicode normalisation", "edit $MEM/" + nfc + " instead"}},
		{"NFC beside NFD", []string{nfd}, nfc, []string{"collides", "Unicode normalisation"}},
		{"full case folding", []string{"straße.md"}, "STRASSE.md", []string{"collides"}},
		{"a directory", []string{"notes/a.md"}, "Notes/b.md", []string{"$MEM/Notes collides with the existing $MEM/notes", "put the file under $MEM/notes instead"}},
		{"a nested directory", []string{"a/Topics/x.md"}, "a/topics/y.md", []string{"$MEM/a/topics collides"}},
		{"a file over a directory's spelling", []string{"Archive/x.md"}, "archive", []string{"collides", "choose another name"}},
		{"the exact spelling replaces", []string{"build.md", "Build.md"}, "Build.md", nil},
		{"a new name beside others", []string{"build.md"}, "builds.md", nil},
		{"under a new directory", []string{"notes/a.md"}, "other/Notes/b.md", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Limits{})
			for _, p := range tt.existing {
				writeFile(t, filepath.Join(f.staging, p), "# Existing\n\n"+p+"\n")
			}
			before := snapshot(t, f.staging)
			res, err := f.call(t, "write", map[string]any{"file_path": tt.path, "content": "# New\n\ncontent\n"})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("write %s: %v", tt.path, err)
				}
				return
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.ReplaceAll(w, "$MEM", f.display))
			}
			wantErr(t, err, append(want, "write refused")...)
			if !errors.Is(err, sandbox.ErrNameCollides) {
				t.Errorf("error %v is not ErrNameCollides", err)
			}
			if res.Content != "" || !sameSnapshot(before, snapshot(t, f.staging)) {
				t.Errorf("a refused write changed the staging (result %q)", res.Content)
			}
		})
	}
}

// TestWriteRefusesACollisionWithAFileWrittenEarlierInTheDream: the second
// spelling is refused even when the first was created by this dream.
func TestWriteRefusesACollisionWithAFileWrittenEarlierInTheDream(t *testing.T) {
	f := newFixture(t, Limits{})
	if _, err := f.call(t, "write", map[string]any{"file_path": "Deploy/steps.md", "content": "# Steps\n\none\n"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.call(t, "write", map[string]any{"file_path": "deploy/STEPS.md", "content": "# Steps\n\ntwo\n"})
	wantErr(t, err, "collides", "put the file under "+filepath.Join(f.display, "Deploy")+" instead")
	_, err = f.call(t, "write", map[string]any{"file_path": "Deploy/STEPS.md", "content": "# Steps\n\ntwo\n"})
	wantErr(t, err, "collides", "edit "+filepath.Join(f.display, "Deploy", "steps.md")+" instead")
	if _, err := os.Stat(filepath.Join(f.staging, "deploy")); !os.IsNotExist(err) {
		t.Errorf("a refused write created deploy/: %v", err)
	}
}

// TestEditRefusesAnotherSpelling: edit creates nothing, but on macOS
// "Build.md" opens build.md and the edit's rename would respell it; the
// message names the file to edit.
func TestEditRefusesAnotherSpelling(t *testing.T) {
	f := newFixture(t, Limits{})
	writeFile(t, filepath.Join(f.staging, "build.md"), "# Build\n\nmake\n")
	_, err := f.call(t, "edit", map[string]any{"file_path": "BUILD.md", "old_string": "make", "new_string": "make all"})
	wantErr(t, err, "edit refused", "collides", "edit "+filepath.Join(f.display, "build.md")+" instead")
}
