package offline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/memory"
)

func TestUnindexedMentionForms(t *testing.T) {
	fm := "---\nname: t\ndescription: d\n---\n- fact\n"
	files := map[string]string{
		"MEMORY.md": "# Memory\n\n<!-- scratch.md and archive/ are left out on purpose -->\n\n- [A](a.md#limits) — anchor\n- See also [b](./b.md \"title\").\n- `c.md` holds the glossary.\n- d.md is mentioned bare.\n- [E](<e%20file.md>)\n- Folder: [drafts](drafts/)\n\n```\n- [Example](example.md)\n```\n",
		"a.md":      fm, "b.md": fm, "c.md": fm, "d.md": fm, "e file.md": fm,
		"drafts/x.md": fm, "archive/old.md": fm, "scratch.md": fm, "README.md": fm, "readme.md.bak": "x",
		"ignored.md": fm, ".dreamignore": "# comment\nignored.md\n",
		"new.md": fm,
	}
	rep, out := runOn(t, files, Options{Layout: LayoutFor("claude")})
	var added []string
	for _, f := range rep.Fixes {
		if f.Kind == KindUnindexedTopic {
			added = append(added, f.Detail)
		}
	}
	if len(added) != 1 || !strings.Contains(added[0], "(new.md)") {
		t.Errorf("pointers added: %v\n%s", added, out["MEMORY.md"])
	}
	if len(rep.Leads) != 0 {
		t.Errorf("leads: %+v", rep.Leads)
	}
}

func TestPointerForOddNamesReadsBack(t *testing.T) {
	for _, name := range []string{"Map<K,V>.md", "a (b) [c].md", "100% #1?.md", "空 格.md", "back\\slash.md"} {
		p := makePointer("T", name, "")
		d := memory.ParseDoc([]byte(p + "\n"))
		if len(d.Links) != 1 {
			t.Errorf("%s: pointer %q has %d links", name, p, len(d.Links))
			continue
		}
		if rel, ok := memory.LocalTarget(d.Links[0].Dest); !ok || rel != strings.ReplaceAll(name, "\\", "/") {
			t.Errorf("%s: pointer %q reads back as %q %v", name, p, rel, ok)
		}
	}
}

func TestDocumentLayoutsAreLeftAlone(t *testing.T) {
	files := map[string]string{
		"MEMORY.md": "# Long-term Memory\n\n- [Ana](https://example.com) is the owner.\n",
		"SOUL.md":   "# Soul\n",
		"USER.md":   "# User\n",
	}
	for _, host := range []string{"nanobot", "dir"} {
		rep, out := runOn(t, files, Options{Layout: LayoutFor(host)})
		if len(rep.Fixes) != 0 || out["MEMORY.md"] != files["MEMORY.md"] {
			t.Errorf("%s: a document was indexed: %+v", host, rep.Fixes)
		}
	}
}

func TestSymlinkedIndexIsRefusedClearly(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(t.TempDir(), "MEMORY.md")
	if err := os.WriteFile(real, []byte("# Memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "MEMORY.md")); err != nil {
		t.Skip(err)
	}
	_, err := Run(context.Background(), Options{MemoryDir: dir, Layout: LayoutFor("")})
	var se *memory.SymlinkError
	if !errors.As(err, &se) || se.Path != "MEMORY.md" || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), "--memory-dir") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(real); string(b) != "# Memory\n" {
		t.Error("the link target was changed")
	}
}

func TestPinnedFacts(t *testing.T) {
	dir := t.TempDir()
	src := "- The staging database is never reset. <!-- pin --> (ask Ana)\n- Write `<!-- pin -->` after a line to pin it.\n\n```\nrm -rf / <!-- pin -->\n```\n\n1. <!-- pin --> Tag from main.\n> Quoted rule <!-- PIN -->\n"
	if err := os.WriteFile(filepath.Join(dir, "ops.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	facts, err := PinnedFacts(dir, []string{"extra fact"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"The staging database is never reset. (ask Ana)", "Tag from main.", "Quoted rule", "extra fact"}
	if strings.Join(facts, "|") != strings.Join(want, "|") {
		t.Errorf("facts = %q, want %q", facts, want)
	}
	missing, err := MissingPinned(facts, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 1 || missing[0] != "extra fact" {
		t.Errorf("missing = %q", missing)
	}
}

func TestIndexStartedWhenMissing(t *testing.T) {
	fm := "---\nname: %s\ndescription: about %s\n---\n- fact\n"
	_, out := runOn(t, map[string]string{
		"a.md": strings.ReplaceAll(fm, "%s", "a"), "secret.md": strings.ReplaceAll(fm, "%s", "s"), ".dreamignore": "secret.md\n",
	}, Options{Layout: LayoutFor("claude")})
	if out["MEMORY.md"] != "- [a](a.md) — about a\n" {
		t.Errorf("MEMORY.md = %q", out["MEMORY.md"])
	}
	_, out = runOn(t, map[string]string{"secret.md": "- s\n", ".dreamignore": "secret.md\n"}, Options{Layout: LayoutFor("claude")})
	if _, ok := out["MEMORY.md"]; ok {
		t.Error("an index was started for nothing")
	}
}
