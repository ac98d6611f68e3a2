package lossguard

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// randomMemory is a memory of topic files in the shapes real ones have:
// front matter, nested headings, numbered steps, code, quotes, Chinese.
func randomMemory(r *rand.Rand, files int) Tree {
	t := Tree{}
	var idx strings.Builder
	idx.WriteString("# Memory\n\n")
	for f := 0; f < files; f++ {
		name := fmt.Sprintf("topic-%02d.md", f)
		fmt.Fprintf(&idx, "- [Topic %d](%s) — notes on area %d\n", f, name, f)
		var b strings.Builder
		fmt.Fprintf(&b, "---\nname: topic-%d\ndescription: area %d\n---\n\n# Topic %d\n\n", f, f, f)
		for u := 0; u < 3+r.IntN(8); u++ {
			switch r.IntN(6) {
			case 5: // said in more than one file
				b.WriteString("Shared fact: the VPN needs a token from the ops portal.\n\n")
			case 0:
				fmt.Fprintf(&b, "## Section %d.%d\n\n", f, u)
			case 1:
				fmt.Fprintf(&b, "1. Step one of procedure %d.%d.\n2. Step two runs `make deploy-%d`.\n\n", f, u, u)
			case 2:
				fmt.Fprintf(&b, "```sh\ngo test -run Test%d_%d ./...\n```\n\n", f, u)
			case 3:
				fmt.Fprintf(&b, "> 用户说：部署 %d 之前要先备份数据库 %d。\n\n", f, u)
			default:
				fmt.Fprintf(&b, "Fact %d.%d: the service %d keeps its logs for %d days.\n\n", f, u, f, 7+u)
			}
		}
		t[name] = []byte(b.String())
	}
	t["MEMORY.md"] = []byte(idx.String())
	return t
}

// mutate applies a dream-like change to a few files: drop paragraphs, move
// one into another file (changed or not), truncate, delete, add.
func mutate(r *rand.Rand, before Tree) Tree {
	after := Tree{}
	for k, v := range before {
		after[k] = v
	}
	names := make([]string, 0, len(before))
	for k := range before {
		names = append(names, k)
	}
	sort.Strings(names)
	for n := 1 + r.IntN(3); n > 0; n-- {
		f := names[r.IntN(len(names))]
		paras := strings.SplitAfter(string(after[f]), "\n\n")
		switch r.IntN(5) {
		case 0: // drop one paragraph
			i := r.IntN(len(paras))
			after[f] = []byte(strings.Join(append(paras[:i:i], paras[i+1:]...), ""))
		case 1: // move one paragraph into another file
			i := r.IntN(len(paras))
			to := names[r.IntN(len(names))]
			moved := paras[i]
			after[f] = []byte(strings.Join(append(paras[:i:i], paras[i+1:]...), ""))
			after[to] = append(append([]byte{}, after[to]...), "\n"+moved...)
		case 2: // keep the first part
			after[f] = []byte(strings.Join(paras[:1+r.IntN(len(paras))], ""))
		case 3:
			delete(after, f)
		default:
			after[fmt.Sprintf("new-%d.md", r.IntN(100))] = []byte("# New\n\nA new fact about the release train.\n")
		}
	}
	return after
}

// Property: CheckChanged, given only the changed files and a stream of the
// others, decides exactly what Check decides on the whole trees.
func TestCheckChangedMatchesCheck(t *testing.T) {
	streamed, kept := 0, 0
	defer func() {
		if streamed == 0 || kept == 0 {
			t.Errorf("the cases never needed the unchanged files (%d) or never found a unit there (%d)", streamed, kept)
		}
	}()
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		before := randomMemory(r, 2+r.IntN(12))
		after := mutate(r, before)
		o := Options{MaxLoss: []float64{0, 0.05, 0.5}[r.IntN(3)], Strict: r.IntN(4) == 0}
		want := Check(before, after, o)
		cb, ca := Tree{}, Tree{}
		same := map[string]bool{}
		for k, v := range before {
			if a, ok := after[k]; ok && string(a) == string(v) {
				same[k] = true
				continue
			}
			cb[k] = v
		}
		for k, v := range after {
			if !same[k] {
				ca[k] = v
			}
		}
		reads := 0
		rest := func(fn func(string, []byte) error) error {
			for k := range same {
				reads++
				if err := fn(k, before[k]); err != nil {
					return err
				}
			}
			return nil
		}
		got, err := CheckChanged(cb, ca, rest, o)
		if err != nil {
			t.Fatal(err)
		}
		if want.Hold != got.Hold || want.Changed != got.Changed || !reflect.DeepEqual(want.Lost, got.Lost) ||
			!reflect.DeepEqual(want.Shrunk, got.Shrunk) || !reflect.DeepEqual(want.Unaccounted, got.Unaccounted) || want.LostBytes != got.LostBytes {
			t.Fatalf("seed %d: CheckChanged %+v\nCheck %+v", seed, got, want)
		}
		if reads > 0 {
			streamed++
			if first := Check(cb, ca, o); len(first.Lost) > len(got.Lost) {
				kept++
			}
		}
		if len(want.Lost) > 0 && (want.Units != got.Units || want.Bytes != got.Bytes) {
			t.Fatalf("seed %d: totals %d/%d, want %d/%d", seed, got.Units, got.Bytes, want.Units, want.Bytes)
		}
		if first := Check(cb, ca, o); (o.Strict || len(first.Lost) == 0) && first.Units > 0 && reads > 0 {
			t.Fatalf("seed %d: read %d unchanged files for a dream that lost nothing", seed, reads)
		}
	}
}
