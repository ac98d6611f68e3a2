package audit

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/journal/linediff"
)

func TestParseRawNumstat(t *testing.T) {
	cases := []struct {
		name, in string
		want     []FileStat
		err      bool
	}{
		{"empty", "", []FileStat{}, false},
		{"mixed", ":000000 100644 0000000 abc A\x00new.md\x00:100644 000000 abc 0000000 D\x00old.md\x00:100644 100644 a b M\x00m.md\x003\t0\tnew.md\x000\t2\told.md\x001\t1\tm.md\x00",
			[]FileStat{{"m.md", 1, 1, "modified"}, {"new.md", 3, 0, "added"}, {"old.md", 0, 2, "deleted"}}, false},
		{"binary", ":100644 100644 a b M\x00b.bin\x00-\t-\tb.bin\x00", []FileStat{{"b.bin", 0, 0, "modified"}}, false},
		{"counts without status", "1\t1\tx.md\x00", nil, true},
		{"bad count", ":100644 100644 a b M\x00x\x00z\t1\tx\x00", nil, true},
		{"rename status", ":100644 100644 a b R100\x00x\x00", nil, true},
		{"raw without path", ":100644 100644 a b M", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseRawNumstat([]byte(c.in))
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			if !c.err && fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestParseTrailers(t *testing.T) {
	msg := "dream x: 1 file\n\ndiff\nDream-Id: forged\n\nDream-Kind: dream\nDream-Id: real\n"
	if got := parseTrailers(msg); got["Dream-Id"] != "real" || got["Dream-Kind"] != "dream" {
		t.Fatalf("trailers = %v", got)
	}
	if got := parseTrailers("subject\n\nbody line\nDream-Id: x\n"); got != nil {
		t.Fatalf("a mixed paragraph is not a trailer block: %v", got)
	}
	if got := parseTrailers("subject only"); got != nil {
		t.Fatalf("got %v", got)
	}
}

func TestParseBatch(t *testing.T) {
	out := "abc blob 3\nhi\n\nx:y missing\ndef blob 0\n\n"
	got, err := parseBatch([]byte(out), 3)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].data) != "hi\n" || !got[1].absent || got[2].absent || len(got[2].data) != 0 {
		t.Fatalf("got %+v", got)
	}
	for _, bad := range []string{"abc blob 9\nhi\n", "abc tree 3\nhi\n", "abc blob 2\nhi!", "noheader", "abc blob 1\nh\nextra"} {
		if _, err := parseBatch([]byte(bad), 1); err == nil {
			t.Errorf("parseBatch(%q) accepted", bad)
		}
	}
}

func TestMerge3(t *testing.T) {
	o := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	cases := []struct {
		name, ours, theirs, want string
		conflicts                []linediff.Region
	}{
		{"only theirs", o, strings.Replace(o, "2\n", "two\n", 1), strings.Replace(o, "2\n", "two\n", 1), nil},
		{"only ours", strings.Replace(o, "8\n", "eight\n", 1), o, strings.Replace(o, "8\n", "eight\n", 1), nil},
		{"apart", strings.Replace(o, "8\n", "eight\n", 1), strings.Replace(o, "2\n", "two\n", 1), "1\ntwo\n3\n4\n5\n6\n7\neight\n9\n", nil},
		{"same change", strings.Replace(o, "5\n", "V\n", 1), strings.Replace(o, "5\n", "V\n", 1), strings.Replace(o, "5\n", "V\n", 1), nil},
		{"overlap", strings.Replace(o, "5\n", "ours\n", 1), strings.Replace(o, "5\n", "theirs\n", 1), strings.Replace(o, "5\n", "ours\n", 1), []linediff.Region{{A0: 4, A1: 5}}},
		{"adjacent is a conflict", strings.Replace(o, "5\n", "ours\n", 1), strings.Replace(o, "6\n", "theirs\n", 1), strings.Replace(o, "5\n", "ours\n", 1), []linediff.Region{{A0: 4, A1: 6}}},
		{"both insert at end", o + "a\n", o + "b\n", o + "a\n", []linediff.Region{{A0: 9, A1: 10}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, conf := linediff.Merge3(linediff.Split([]byte(o)), linediff.Split([]byte(c.ours)), linediff.Split([]byte(c.theirs)))
			if strings.Join(got, "") != c.want {
				t.Errorf("merged %q, want %q", strings.Join(got, ""), c.want)
			}
			if !slices.Equal(conf, c.conflicts) {
				t.Errorf("conflicts %v, want %v", conf, c.conflicts)
			}
		})
	}
}

func FuzzMerge3(f *testing.F) {
	f.Add("1\n2\n3\n", "1\nx\n3\n", "1\n2\n3\ny\n")
	f.Add("", "a", "b")
	f.Fuzz(func(t *testing.T, o, a, b string) {
		lo, la, lb := linediff.Split([]byte(o)), linediff.Split([]byte(a)), linediff.Split([]byte(b))
		if got, c := linediff.Merge3(lo, lo, lb); strings.Join(got, "") != b || len(c) != 0 {
			t.Fatalf("linediff.Merge3(o, o, b) = %q %v, want b", strings.Join(got, ""), c)
		}
		if got, c := linediff.Merge3(lo, la, lo); strings.Join(got, "") != a || len(c) != 0 {
			t.Fatalf("linediff.Merge3(o, a, o) = %q %v, want a", strings.Join(got, ""), c)
		}
		if got, c := linediff.Merge3(lo, la, la); strings.Join(got, "") != a || len(c) != 0 {
			t.Fatalf("linediff.Merge3(o, a, a) = %q %v, want a", strings.Join(got, ""), c)
		}
		// Conflict regions are lines of ours, the current file.
		_, conf := linediff.Merge3(lo, la, lb)
		for _, r := range conf {
			if r.A0 < 0 || r.A1 < r.A0 || r.A1 > len(la) {
				t.Fatalf("conflict region %v outside ours of %d lines", r, len(la))
			}
		}
	})
}

func FuzzParseRawNumstat(f *testing.F) {
	f.Add([]byte(":100644 100644 a b M\x00m.md\x001\t1\tm.md\x00"))
	f.Add([]byte("-\t-\tb\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseRawNumstat(data)
		if err != nil {
			return
		}
		for i, fs := range got {
			if fs.Path == "" || fs.Added < 0 || fs.Removed < 0 || (i > 0 && got[i-1].Path >= fs.Path) {
				t.Fatalf("bad result %+v", got)
			}
		}
	})
}

func FuzzParseLog(f *testing.F) {
	f.Add([]byte("0123456789012345678901234567890123456789\x1f1700000000\x1fdream a: 1 file\n\nDream-Id: a\n\x00"))
	f.Add([]byte("\x1f\x1f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseLog(data)
		if err != nil {
			return
		}
		for _, ci := range got {
			if len(ci.sha) < 40 {
				t.Fatalf("accepted short sha %q", ci.sha)
			}
		}
	})
}

func FuzzParseBatch(f *testing.F) {
	f.Add([]byte("abc blob 3\nhi\n\n"), 1)
	f.Add([]byte("x missing\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		got, err := parseBatch(data, n)
		if err == nil && len(got) != n {
			t.Fatalf("got %d versions for %d requests", len(got), n)
		}
	})
}
