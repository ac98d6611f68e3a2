package lossguard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

// realisticMemory is a memory in the shapes real ones have, richer than
// randomMemory: nested headings, numbered procedures, fenced code (with a
// "# comment" inside, which is not a heading), quotes, Chinese, rules
// beside pointers, tables, HTML comments, front matter with YAML comments,
// and facts said more than once.
func realisticMemory(r *rand.Rand, files int) Tree {
	t := Tree{}
	var idx strings.Builder
	idx.WriteString("# Memory\n\n")
	for f := 0; f < files; f++ {
		name := fmt.Sprintf("area%d/topic-%03d.md", f%3, f)
		fmt.Fprintf(&idx, "- [Topic %d](%s) — notes on area %d\n", f, name, f)
		t[name] = []byte(realisticTopic(r, f))
	}
	idx.WriteString("\n## Rules\n\n- Never push to main on Fridays.\n- Ask before deleting anything under /var/lib.\n")
	t["MEMORY.md"] = []byte(idx.String())
	return t
}

var topicBlocks = []func(b *strings.Builder, f, u int){
	func(b *strings.Builder, f, u int) { fmt.Fprintf(b, "## Section %d.%d\n\n", f, u) },
	func(b *strings.Builder, f, u int) { fmt.Fprintf(b, "### Procedure %d\n\n", u) },
	func(b *strings.Builder, f, u int) {
		fmt.Fprintf(b, "1. Pull the latest main.\n2. Run `make deploy-%d`.\n   - check the dashboard %d\n3. Announce it.\n\n", u, f)
	},
	func(b *strings.Builder, f, u int) {
		fmt.Fprintf(b, "```sh\n# not a heading: a shell comment %d\ngo test -run Test%d ./...\n```\n\n", u, f)
	},
	func(b *strings.Builder, f, u int) {
		fmt.Fprintf(b, "> 用户说：部署 %d 之前要先备份数据库 %d。\n> Second line of the quote.\n\n", f, u)
	},
	func(b *strings.Builder, f, u int) {
		fmt.Fprintf(b, "- Rule: ask before deleting anything under /var/lib.\n- See [the runbook](runbook-%d.md) for rollbacks.\n\n", f)
	},
	func(b *strings.Builder, f, u int) {
		fmt.Fprintf(b, "| env | host |\n| --- | --- |\n| prod | db-%d |\n| stage | db-%d-s |\n\n", f, u)
	},
	func(b *strings.Builder, f, u int) {
		b.WriteString("- 部署前先在预发环境验证迁移脚本。\n- 部署前先在预发环境验证迁移脚本。\n\n")
	},
	func(b *strings.Builder, f, u int) {
		b.WriteString("Shared fact: the VPN needs a token from the ops portal.\n\n")
	},
	func(b *strings.Builder, f, u int) {
		fmt.Fprintf(b, "Fact %d.%d: the service %d keeps its logs for %d days,\nand rotates them at midnight UTC.\n\n", f, u, f, 7+u)
	},
	func(b *strings.Builder, f, u int) {
		fmt.Fprintf(b, "<!-- pin -->\nThe on-call rota for area %d is in PagerDuty.\n\n", f)
	},
	func(b *strings.Builder, f, u int) { fmt.Fprintf(b, "# Part %d\n\n", u) },
	func(b *strings.Builder, f, u int) {
		fmt.Fprintf(b, "**Production**\n\n- Deploys %d go through the blue/green script.\n\n", u)
	},
}

func realisticTopic(r *rand.Rand, f int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: topic-%d\n# a YAML comment, not a heading\ndescription: area %d\n---\n\n# Topic %d\n\n", f, f, f)
	for u := 0; u < 3+r.IntN(12); u++ {
		topicBlocks[r.IntN(len(topicBlocks))](&b, f, u)
	}
	return b.String()
}

// dreamLike applies the changes dreams make to a few files: a duplicate
// removed (with a record, as the offline engine does), a paragraph
// dropped, moved to another file, split over lines, merged into another
// unit, a heading renamed, a fence left open, a file deleted or added.
func dreamLike(r *rand.Rand, before Tree) (Tree, []Record) {
	after := Tree{}
	for k, v := range before {
		after[k] = v
	}
	names := make([]string, 0, len(before))
	for k := range before {
		names = append(names, k)
	}
	sort.Strings(names)
	var recs []Record
	for n := 1 + r.IntN(4); n > 0; n-- {
		f := names[r.IntN(len(names))]
		cur, ok := after[f]
		if !ok {
			continue
		}
		s := string(cur)
		paras := strings.SplitAfter(s, "\n\n")
		i := r.IntN(len(paras))
		switch r.IntN(10) {
		case 0: // the engine drops a repeated line and says so
			if string(before[f]) != s {
				continue // records are offsets into the file before the dream
			}
			lines := strings.SplitAfter(s, "\n")
			for j := 1; j < len(lines); j++ {
				if lines[j] == lines[j-1] && strings.TrimSpace(lines[j]) != "" {
					start := len(strings.Join(lines[:j], ""))
					recs = append(recs, Record{File: f, Start: start, End: start + len(lines[j])})
					after[f] = []byte(s[:start] + s[start+len(lines[j]):])
					break
				}
			}
		case 1: // drop a paragraph
			after[f] = []byte(strings.Join(append(paras[:i:i], paras[i+1:]...), ""))
		case 2: // move a paragraph into another file
			to := names[r.IntN(len(names))]
			after[f] = []byte(strings.Join(append(paras[:i:i], paras[i+1:]...), ""))
			after[to] = append(append([]byte{}, after[to]...), "\n"+paras[i]...)
		case 3: // split a paragraph over lines, or merge two
			if r.IntN(2) == 0 {
				after[f] = []byte(strings.Replace(s, ", ", ",\n", 1))
			} else {
				after[f] = []byte(strings.Replace(s, ".\n\n", ".\n", 1))
			}
		case 4: // rename a heading
			after[f] = []byte(strings.Replace(s, "## Section", "## Part", 1))
		case 5: // leave a fence open: everything after it becomes code
			after[f] = []byte(strings.Replace(s, "```\n\n", "\n\n", 1))
		case 6: // edit a fact in place
			after[f] = []byte(strings.Replace(s, "days,", "days (checked 2026-11-29),", 1))
		case 7:
			delete(after, f)
		case 8: // keep the first part
			after[f] = []byte(strings.Join(paras[:1+r.IntN(len(paras))], ""))
		default:
			after[fmt.Sprintf("new-%d.md", r.IntN(100))] = []byte("# New\n\nA new fact about the release train.\n")
		}
	}
	return after, recs
}

// split divides a before/after pair into the changed files on each side and
// a stream of the files the same on both.
func split(before, after Tree) (Tree, Tree, Files) {
	cb, ca := Tree{}, Tree{}
	var same []string
	for k, v := range before {
		if a, ok := after[k]; ok && string(a) == string(v) {
			same = append(same, k)
			continue
		}
		cb[k] = v
	}
	for k, v := range after {
		if b, ok := before[k]; !ok || string(b) != string(v) {
			ca[k] = v
		}
	}
	sort.Strings(same)
	return cb, ca, func(fn func(string, []byte) error) error {
		for _, k := range same {
			if err := fn(k, before[k]); err != nil {
				return err
			}
		}
		return nil
	}
}

// Property: over random memories and dream-like changes, the parallel
// guard, the serial guard and the guard as it was (ref_test.go) give the
// same verdict, field by field: the same units lost or unaccounted, in the
// same order, the same totals, the same hold.
func TestParallelMatchesSerialAndReference(t *testing.T) {
	held, lost, unaccounted := 0, 0, 0
	for seed := uint64(0); seed < 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		before := realisticMemory(r, 1+r.IntN(16))
		after, recs := dreamLike(r, before)
		o := Options{MaxLoss: []float64{0, 0.05, 0.5}[r.IntN(3)], Strict: r.IntN(3) == 0, Records: recs}
		want := refCheck(before, after, o)
		var ledger []Entry // the same whatever the number of workers
		for k, workers := range []int{1, 2, 7} {
			got, err := check(context.Background(), treeNames(before, after), TreeSides(before, after), nil, o, workers)
			if err != nil {
				t.Fatal(err)
			}
			if k == 0 {
				ledger = got.Ledger
			} else if !reflect.DeepEqual(got.Ledger, ledger) {
				t.Fatalf("seed %d, %d workers: ledger\n got %+v\nwant %+v", seed, workers, got.Ledger, ledger)
			}
			got.Ledger = nil // the reference is the guard as it was, before the ledger
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, %d workers: Check\n got %+v\nwant %+v", seed, workers, got, want)
			}
		}
		cb, ca, rest := split(before, after)
		wantC, err := refCheckChanged(cb, ca, rest, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 3} {
			got, err := check(context.Background(), treeNames(cb, ca), TreeSides(cb, ca), rest, o, workers)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Ledger, ledger) {
				t.Fatalf("seed %d, %d workers: CheckChanged's ledger\n got %+v\nwant %+v", seed, workers, got.Ledger, ledger)
			}
			got.Ledger = nil
			if !reflect.DeepEqual(got, wantC) {
				t.Fatalf("seed %d, %d workers: CheckChanged\n got %+v\nwant %+v", seed, workers, got, wantC)
			}
		}
		if want.Hold {
			held++
		}
		lost += len(want.Lost)
		unaccounted += len(want.Unaccounted)
	}
	if held == 0 || lost == 0 || unaccounted == 0 {
		t.Errorf("the cases never held (%d), lost (%d) or failed strict (%d)", held, lost, unaccounted)
	}
}

// FuzzCheck: two files and a change of each (bytes [a, b) of the first
// replaced, the second's tail moved into the first), checked strict and
// not, with a record over the replaced bytes or none: the verdict is the
// guard's as it was, field by field.
func FuzzCheck(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 6; i++ {
		f.Add([]byte(realisticTopic(r, i)), []byte(realisticTopic(r, i+10)), uint16(50+20*i), uint16(90+20*i), []byte("- moved\n"), uint16(30), true, false)
	}
	f.Add([]byte("# A\n\n- x\n- x\n\n## B\n\nb\n"), []byte("# C\n\nc c c c\n"), uint16(9), uint16(13), []byte(""), uint16(4), false, true)
	f.Fuzz(func(t *testing.T, x, y []byte, a, b uint16, insert []byte, cut uint16, strict, record bool) {
		if len(x) > 1<<13 || len(y) > 1<<13 || len(insert) > 1<<9 {
			return
		}
		i, j := min(int(a), len(x)), min(int(b), len(x))
		if i > j {
			i, j = j, i
		}
		k := min(int(cut), len(y))
		x2 := append(append(append(append([]byte{}, x[:i]...), insert...), x[j:]...), y[k:]...)
		before := Tree{"x.md": x, "sub/y.md": y}
		after := Tree{"x.md": x2, "sub/y.md": y[:k]}
		o := Options{Strict: strict}
		if record {
			o.Records = []Record{{File: "x.md", Start: i, End: j}}
		}
		got, want := Check(before, after, o), refCheck(before, after, o)
		got.Ledger = nil // the reference is the guard as it was, before the ledger
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Check\n got %+v\nwant %+v", got, want)
		}
	})
}

// A dream that lost nothing has each changed file read once per side, by
// at most GOMAXPROCS readers at a time, and never the unchanged ones.
func TestCheckFilesReadsEachChangedFileOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	before := realisticMemory(r, 40)
	after := Tree{}
	var changed []string
	for k, v := range before {
		after[k] = v
		if strings.HasPrefix(k, "area1/") {
			after[k] = append(append([]byte{}, v...), "\n## Added\n\nA new fact about the release train.\n"...)
			changed = append(changed, k)
		}
	}
	var mu sync.Mutex
	calls := map[string]int{}
	inFlight, most := 0, 0
	counted := func(t Tree, side string) func(string) ([]byte, bool, error) {
		return func(rel string) ([]byte, bool, error) {
			mu.Lock()
			calls[side+" "+rel]++
			inFlight++
			most = max(most, inFlight)
			mu.Unlock()
			defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
			b, ok := t[rel]
			return b, ok, nil
		}
	}
	streamed := 0
	rest := func(func(string, []byte) error) error { streamed++; return nil }
	v, err := check(context.Background(), changed, Sides{Before: counted(before, "before"), After: counted(after, "after")}, rest, Options{}, 3)
	if err != nil || v.Hold || len(v.Lost) != 0 || !v.Changed {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	for _, f := range changed {
		if calls["before "+f] != 1 || calls["after "+f] != 1 {
			t.Errorf("%s read %d/%d times", f, calls["before "+f], calls["after "+f])
		}
	}
	if len(calls) != 2*len(changed) || most > 3 || streamed != 0 {
		t.Errorf("%d reads for %d files, %d at once, the unchanged streamed %d times", len(calls), len(changed), most, streamed)
	}
}

// A path named changed that is on neither side (a deletion of a file the
// start version does not hold) changes nothing, as it was when the guard
// was given trees without it.
func TestCheckFilesAbsentOnBothSides(t *testing.T) {
	v, err := CheckFiles(context.Background(), []string{"gone.md"}, TreeSides(Tree{}, Tree{}), nil, Options{})
	if err != nil || v.Changed || v.Summary() != "no changes" {
		t.Errorf("verdict %+v, %v", v, err)
	}
}
