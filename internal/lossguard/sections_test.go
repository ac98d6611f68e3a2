package lossguard

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/memory"
)

// fullTexts and fastTexts are the after side's unit texts, parsed whole
// and by sections.
func fastTexts(before, after []byte) ([]string, bool) {
	s := string(before)
	d := memory.ParseBlocks(before) // as compareFile parses it
	ls := docLeaves(d, s)
	_, ok := sectionTexts(d, s, ls, after)
	return afterTexts(d, s, ls, after), ok
}

// fullTexts are the texts of after's leaf units by a whole parse
// (ParseDoc), which the sections and ParseBlocks must give.
func fullTexts(after []byte) []string {
	_, ls := leaves(after)
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	return out
}

// The section shortcut gives the full parse's texts, in order, over the
// realistic memories and dream-like changes, and it is taken (else it
// would prove nothing) as well as refused.
func TestSectionTextsMatchFullParse(t *testing.T) {
	taken, refused := 0, 0
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		before := realisticMemory(r, 4)
		after, _ := dreamLike(r, before)
		names := make([]string, 0, len(before))
		for k := range before {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, f := range names {
			a, ok := after[f]
			if !ok || string(a) == string(before[f]) {
				continue
			}
			got, fast := fastTexts(before[f], a)
			if want := fullTexts(a); !slices.Equal(got, want) {
				t.Fatalf("seed %d %s (shortcut %v):\n got %q\nwant %q\nbefore %q\nafter %q", seed, f, fast, got, want, before[f], a)
			}
			if fast {
				taken++
			} else {
				refused++
			}
		}
	}
	if taken == 0 || refused == 0 {
		t.Errorf("the shortcut was taken %d times and refused %d", taken, refused)
	}
}

// Each way a shortcut could go wrong, as a change the guard rejects today:
// it must still be rejected, naming the same units, and the texts must be
// the full parse's.
func TestShortcutsRejectWhatTheyRejected(t *testing.T) {
	const fm = "---\nname: deploy\n# a YAML comment\ndescription: deploys\n---\n\n"
	base := fm + "# Deploy\n\n## Steps\n\n1. Pull the latest main.\n2. Run `make deploy`.\n\n## Rules\n\n- Never deploy on Fridays.\n- Ask before deleting anything under /var/lib.\n\n## 发布\n\n> 用户说：发布前先备份数据库。\n\n```sh\n# a shell comment\nmake release\n```\n\n## Links\n\n- See [the runbook](runbook.md).\n"
	other := "# Runbook\n\nRoll back with `make rollback`.\n"
	tests := []struct {
		name   string
		after  string
		other  string // runbook.md afterwards; "" keeps it
		strict bool   // strict rejects (some unit unaccounted)
		lost   int    // model: units lost without a trace
	}{
		{"a fence left open swallows the kept sections after it",
			strings.Replace(base, "2. Run `make deploy`.\n", "2. Run:\n```\nmake deploy\n", 1), "", true, 3},
		{"an HTML block runs into the next heading",
			strings.Replace(base, "- Ask before deleting anything under /var/lib.\n\n", "- Ask before deleting anything under /var/lib.\n\n<div>\n", 1), "", true, 1},
		{"a unit survives only as a substring of another (two paragraphs merged)",
			strings.Replace(base, "- Never deploy on Fridays.\n- Ask", "- Never deploy on Fridays, and ask", 1), "", true, 0},
		{"a unit split across lines",
			strings.Replace(base, "2. Run `make deploy`.\n", "2. Run\n   `make deploy`.\n", 1), "", true, 0},
		{"a unit moved to another file",
			strings.Replace(base, "- Never deploy on Fridays.\n", "", 1), other + "\n- Never deploy on Fridays.\n", true, 0},
		{"a unit moved to another file, reworded",
			strings.Replace(base, "- Never deploy on Fridays.\n", "", 1), other + "\n- No Friday deploys.\n", true, 1},
		{"a section moved within the file", fm + "# Deploy\n\n## Rules\n\n- Never deploy on Fridays.\n- Ask before deleting anything under /var/lib.\n\n## Steps\n\n1. Pull the latest main.\n2. Run `make deploy`.\n\n## 发布\n\n> 用户说：发布前先备份数据库。\n\n```sh\n# a shell comment\nmake release\n```\n\n## Links\n\n- See [the runbook](runbook.md).\n", "", false, 0},
		{"a section repeated",
			base + "\n## Rules\n\n- Never deploy on Fridays.\n- Ask before deleting anything under /var/lib.\n", "", false, 0},
		{"a repeated heading dropped, its section merged into the one before",
			strings.Replace(base, "## Rules\n\n", "", 1), "", true, 1},
		{"front matter left open: everything after it reads differently",
			strings.Replace(base, "description: deploys\n---\n", "description: deploys\n", 1), "", true, 1},
		{"a heading turned into a paragraph line",
			strings.Replace(base, "## Rules\n\n", "Rules:\n", 1), "", true, 1},
		{"a heading indented into a list item",
			strings.Replace(base, "2. Run `make deploy`.\n\n## Rules", "2. Run `make deploy`.\n   ## Rules", 1), "", true, 0},
		{"a setext underline under a kept paragraph",
			strings.Replace(base, "- See [the runbook](runbook.md).\n", "See the runbook.\n===\n", 1), "", true, 1},
		{"a quote made lazy into the next section",
			strings.Replace(base, "> 用户说：发布前先备份数据库。\n\n", "> 用户说：发布前先备份数据库。\n", 1), "", false, 0},
		{"a bullet made a lazy continuation of the item before",
			strings.Replace(base, "- Ask before deleting", "Ask before deleting", 1), "", true, 0},
		{"a bullet indented under the item before",
			strings.Replace(base, "- Ask before deleting", "  - Ask before deleting", 1), "", true, 0},
		{"a bullet made a thematic break and a setext underline",
			strings.Replace(base, "- Never deploy on Fridays.\n- Ask before deleting anything under /var/lib.\n", "Never deploy on Fridays.\n- - -\nAsk before deleting anything under /var/lib.\n---\n", 1), "", true, 0},
		{"a quote run into the bullet after it",
			strings.Replace(base, "## Links\n\n- See", "## Links\n> quoted\n- See", 1), "", false, 0},
		{"a heading's text edited", strings.Replace(base, "## Steps", "## The steps", 1), "", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := Tree{"deploy.md": []byte(base), "runbook.md": []byte(other)}
			after := Tree{"deploy.md": []byte(tt.after), "runbook.md": []byte(other)}
			if tt.other != "" {
				after["runbook.md"] = []byte(tt.other)
			}
			got, _ := fastTexts(before["deploy.md"], after["deploy.md"])
			if want := fullTexts(after["deploy.md"]); !slices.Equal(got, want) {
				t.Fatalf("texts:\n got %q\nwant %q", got, want)
			}
			for _, strict := range []bool{true, false} {
				o := Options{Strict: strict}
				v, want := Check(before, after, o), refCheck(before, after, o)
				if !slices.Equal(v.Lost, want.Lost) || !slices.Equal(v.Unaccounted, want.Unaccounted) || v.Hold != want.Hold {
					t.Fatalf("strict %v: verdict %+v, the guard as it was %+v", strict, v, want)
				}
				if strict && (v.Err() != nil) != tt.strict {
					t.Errorf("strict: %v, want rejected %v", v.Err(), tt.strict)
				}
				if !strict && len(v.Lost) != tt.lost {
					t.Errorf("model: lost %v, want %d", v.Lost, tt.lost)
				}
			}
		})
	}
}

// FuzzAfterTexts: a file, a change of it (bytes [a, b) replaced), and the
// texts of its units afterwards by sections must be the full parse's.
func FuzzAfterTexts(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 8; i++ {
		f.Add([]byte(realisticTopic(r, i)), uint16(40+i*30), uint16(60+i*31), []byte("```\n"))
	}
	f.Add([]byte("# A\n\npara\n\n## B\n\n- x\n- x\n\n## C\n\ntext\n"), uint16(12), uint16(12), []byte("<div>\n"))
	f.Add([]byte("---\n# c\n---\n# A\n\n## B\n\nb\n"), uint16(8), uint16(12), []byte(""))
	f.Add([]byte("# A\n\n> q\n\n## B\n\nb\n\n## C\n"), uint16(8), uint16(9), []byte(""))
	f.Add([]byte("# A\n\n    code\n\n## B\n\nb\n"), uint16(5), uint16(5), []byte("- item\n"))
	f.Add([]byte("# Memory\n\n- [A](a.md) — a\n- [B](b.md) — b\n- [C](c.md) — c\n"), uint16(30), uint16(31), []byte("\n"))
	f.Add([]byte("- a\n\n  more a\n- b\n> q\n- c\n1. d\n- e\n"), uint16(12), uint16(14), []byte("x"))
	f.Add([]byte("para\n- a\n- b\n\n* c\n+ d\n"), uint16(5), uint16(7), []byte(""))
	f.Fuzz(func(t *testing.T, before []byte, a, b uint16, insert []byte) {
		if len(before) > 1<<14 || len(insert) > 1<<10 {
			return
		}
		i, j := min(int(a), len(before)), min(int(b), len(before))
		if i > j {
			i, j = j, i
		}
		after := append(append(append([]byte{}, before[:i]...), insert...), before[j:]...)
		got, _ := fastTexts(before, after)
		if want := fullTexts(after); !slices.Equal(got, want) {
			t.Fatalf("texts by sections\n%q\nwant\n%q\nbefore %q\nafter %q", got, want, before, after)
		}
	})
}
