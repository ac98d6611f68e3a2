package offline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestLinkedFilesAreReadOnlyLeads: a memory file that is a symbolic link
// (a shared notes file linked in, even the index itself) never ends the
// run: it is named as a lead, its target is neither read for a fix nor
// written, no pointer is added for it, and the rest of the memory is still
// tidied. (Issue 28: one link made the offline pass refuse every dream.)
func TestLinkedFilesAreReadOnlyLeads(t *testing.T) {
	fm := "---\nname: %s\ndescription: about %s\n---\n- The staging database is rebuilt every Sunday night.\n- The staging database is rebuilt every Sunday night.\n"
	for _, linked := range []string{"linkfile.md", "MEMORY.md"} {
		t.Run(linked, func(t *testing.T) {
			dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "shared.md")
			const shared = "- shared fact\n- shared fact\n"
			write := func(p, body string) {
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(outside, shared)
			write(filepath.Join(dir, "a.md"), strings.ReplaceAll(fm, "%s", "a"))
			if linked != "MEMORY.md" {
				write(filepath.Join(dir, "MEMORY.md"), "# Memory\n")
			}
			if err := os.Symlink(outside, filepath.Join(dir, linked)); err != nil {
				t.Skip(err)
			}
			rep, err := Run(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor("")})
			if err != nil {
				t.Fatalf("a linked %s ended the run: %v", linked, err)
			}
			var lead *Lead
			for i, l := range rep.Leads {
				if l.Kind == KindLinkedFile {
					lead = &rep.Leads[i]
				}
			}
			if lead == nil || lead.File != linked || !strings.Contains(lead.Detail, outside) {
				t.Errorf("leads %+v: want a %s lead for %s naming its target", rep.Leads, KindLinkedFile, linked)
			}
			if b, _ := os.ReadFile(outside); string(b) != shared {
				t.Errorf("the link's target was changed: %q", b)
			}
			if fi, err := os.Lstat(filepath.Join(dir, linked)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%s is no longer a link: %v %v", linked, fi, err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); strings.Count(string(b), "rebuilt every Sunday") != 1 {
				t.Errorf("the rest of the memory was not tidied: a.md = %q", b)
			}
			for _, f := range rep.Fixes {
				if f.File == linked || strings.Contains(f.Detail, "("+linked+")") {
					t.Errorf("a fix touched the linked file: %+v", f)
				}
			}
		})
	}
}

// TestOddNamesIndexedLiterallyAndOnce: a topic whose name holds characters
// of Markdown's link syntax gets a pointer that CommonMark reads back as
// its name, written as literally as a bare link destination allows (an
// agent reads the index as text: Map<K,V>.md, not Map%3CK,V%3E.md), and a
// second run recognises it and changes nothing. (Issue 28: Map<K,V>.md.)
func TestOddNamesIndexedLiterallyAndOnce(t *testing.T) {
	fm := "---\nname: T\ndescription: d\n---\n- fact\n"
	for _, tc := range []struct{ name, link string }{
		{"Map<K,V>.md", "(Map<K,V>.md)"},
		{"<angle>.md", "(%3Cangle>.md)"},
		{"a (b) [c].md", "(a%20%28b%29%20%5Bc%5D.md)"},
		{"100% #1?.md", "(100%25%20%231%3F.md)"},
		{"split\ntail.md", "(split%0Atail.md)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range map[string]string{"MEMORY.md": "# Memory\n", tc.name: fm} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o := Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor("")}
			if _, err := Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			index, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
			if !strings.Contains(string(index), tc.link) {
				t.Errorf("MEMORY.md = %q, want the link %s", index, tc.link)
			}
			rep, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md")); len(rep.Fixes) != 0 || string(again) != string(index) {
				t.Errorf("a second run changed the index: %+v\n%q", rep.Fixes, again)
			}
		})
	}
}

// TestNonUTF8NameIsALeadNotAPointer: a topic whose name is not UTF-8 (a
// Latin-1 "café.md") is named as a lead, not given a pointer: no agent can
// open it by that name, and the index, which an agent loads as text, stays
// valid UTF-8. A pointer's text is valid UTF-8 even when the topic's
// frontmatter is not. (Issue 28, r2_odd_names_index.)
func TestNonUTF8NameIsALeadNotAPointer(t *testing.T) {
	latin1 := "caf\xe9.md"
	files := map[string]string{
		"MEMORY.md": "# Memory\n",
		latin1:      "---\nname: Cafe\ndescription: latin-1 name\n---\nA note.\n",
		"b.md":      "---\nname: B\xe9\ndescription: caf\xe9 hook\n---\nA note.\n",
	}
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for run := 1; run <= 2; run++ {
		rep, err := Run(context.Background(), Options{MemoryDir: dir, Now: testNow, Layout: LayoutFor("")})
		if err != nil {
			t.Fatal(err)
		}
		index, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
		out := map[string]string{"MEMORY.md": string(index)}
		if !utf8.ValidString(out["MEMORY.md"]) {
			t.Fatalf("run %d: MEMORY.md is not UTF-8: %q", run, out["MEMORY.md"])
		}
		if strings.Contains(out["MEMORY.md"], "Cafe") || !strings.Contains(out["MEMORY.md"], "(b.md)") {
			t.Errorf("run %d: MEMORY.md = %q, want b.md indexed and the Latin-1 name not", run, out["MEMORY.md"])
		}
		var leads []Lead
		for _, l := range rep.Leads {
			if l.Kind == KindUnnamableFile {
				leads = append(leads, l)
			}
		}
		if len(leads) != 1 || leads[0].File != latin1 || !utf8.ValidString(leads[0].Detail) {
			t.Errorf("run %d: leads %+v, want one %s lead for %q", run, rep.Leads, KindUnnamableFile, latin1)
		}
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
