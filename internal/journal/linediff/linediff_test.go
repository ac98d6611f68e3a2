package linediff

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// applySpans rebuilds b from a and the spans, proving the spans are a
// complete edit script.
func applySpans(a, b []string, spans []Span) ([]string, error) {
	var out []string
	i := 0
	for n, s := range spans {
		if s.A0 < i || s.A1 < s.A0 || s.B1 < s.B0 || s.A1 > len(a) || s.B1 > len(b) {
			return nil, fmt.Errorf("span %d %+v out of order or range", n, s)
		}
		if s.A0 == s.A1 && s.B0 == s.B1 {
			return nil, fmt.Errorf("span %d is empty", n)
		}
		out = append(out, a[i:s.A0]...)
		out = append(out, b[s.B0:s.B1]...)
		i = s.A1
	}
	return append(out, a[i:]...), nil
}

// applyUnified applies a single-file unified diff produced by Unified to
// old; it is a small independent reader used to check the writer.
func applyUnified(old []byte, patch string) ([]byte, error) {
	a := Split(old)
	var out []string
	pos := 0
	lines := strings.SplitAfter(patch, "\n")
	for li := 0; li < len(lines); li++ {
		l := lines[li]
		if !strings.HasPrefix(l, "@@ -") {
			continue
		}
		var as, ac, bs, bc int
		hdr := strings.Fields(l)
		parse := func(f string) (int, int) {
			f = f[1:]
			st, cnt, ok := strings.Cut(f, ",")
			s, _ := strconv.Atoi(st)
			c := 1
			if ok {
				c, _ = strconv.Atoi(cnt)
			}
			return s, c
		}
		as, ac = parse(hdr[1])
		bs, bc = parse(hdr[2])
		_, _ = bs, bc
		start := as - 1
		if ac == 0 {
			start = as
		}
		if start < pos || start > len(a) {
			return nil, fmt.Errorf("hunk %q out of range", l)
		}
		out = append(out, a[pos:start]...)
		pos = start
		for li+1 < len(lines) {
			n := lines[li+1]
			if n == "" || (n[0] != ' ' && n[0] != '-' && n[0] != '+' && n[0] != '\\') {
				break
			}
			li++
			body := n[1:]
			if li+1 < len(lines) && strings.HasPrefix(lines[li+1], "\\ No newline") {
				body = strings.TrimSuffix(body, "\n")
				li++
			}
			switch n[0] {
			case ' ', '-':
				if pos >= len(a) || a[pos] != body {
					return nil, fmt.Errorf("line %d: want %q, have context %q", pos, body, a[min(pos, len(a)-1)])
				}
				if n[0] == ' ' {
					out = append(out, body)
				}
				pos++
			case '+':
				out = append(out, body)
			}
		}
	}
	out = append(out, a[pos:]...)
	return []byte(strings.Join(out, "")), nil
}

func TestDiffTable(t *testing.T) {
	cases := []struct {
		name, a, b string
		added, rm  int
	}{
		{"equal", "x\ny\n", "x\ny\n", 0, 0},
		{"both empty", "", "", 0, 0},
		{"create", "", "a\nb\n", 2, 0},
		{"delete all", "a\nb\n", "", 0, 2},
		{"change middle", "a\nb\nc\n", "a\nB\nc\n", 1, 1},
		{"insert", "a\nc\n", "a\nb\nc\n", 1, 0},
		{"remove", "a\nb\nc\n", "a\nc\n", 0, 1},
		{"lose final newline", "a\nb\n", "a\nb", 1, 1},
		{"interleaved", "a\nb\nc\nd\ne\n", "b\nx\nc\ne\nf\n", 2, 2},
		{"reorder", "1\n2\n3\n", "3\n2\n1\n", 2, 2},
		{"binary", "a\x00b", "a\x00c", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ad, rm := Counts([]byte(c.a), []byte(c.b))
			if ad != c.added || rm != c.rm {
				t.Errorf("Counts = +%d -%d, want +%d -%d", ad, rm, c.added, c.rm)
			}
			a, b := Split([]byte(c.a)), Split([]byte(c.b))
			got, err := applySpans(a, b, Diff(a, b))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "") != c.b {
				t.Errorf("spans rebuild %q, want %q", strings.Join(got, ""), c.b)
			}
		})
	}
}

func TestMaxEditsFallbackStillCorrect(t *testing.T) {
	var a, b []string
	for i := 0; i < 3*MaxEdits; i++ {
		a = append(a, fmt.Sprintf("a%d\n", i))
		b = append(b, fmt.Sprintf("b%d\n", i))
	}
	spans := Diff(a, b)
	got, err := applySpans(a, b, spans)
	if err != nil || strings.Join(got, "") != strings.Join(b, "") {
		t.Fatalf("fallback diff wrong: %v", err)
	}
}

func TestUnifiedGolden(t *testing.T) {
	cases := []struct {
		name     string
		old, new File
	}{
		{"modify", File{Path: "MEMORY.md", Data: []byte("# Memory\n- [a](a.md) one\n- [b](b.md) two\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\n- [c](c.md) three\n")},
			File{Path: "MEMORY.md", Data: []byte("# Memory\n- [a](a.md) one, dated 2025-01-02\n- [b](b.md) two\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\n")}},
		{"add", File{Path: "topics/new.md", Absent: true}, File{Path: "topics/new.md", Data: []byte("---\nname: new\n---\nbody")}},
		{"delete", File{Path: "old.md", Data: []byte("gone\n")}, File{Path: "old.md", Absent: true}},
		{"newline", File{Path: "n.md", Data: []byte("x")}, File{Path: "n.md", Data: []byte("x\n")}},
		{"binary", File{Path: "b.bin", Data: []byte("\x00")}, File{Path: "b.bin", Data: []byte("\x00\x01")}},
		{"quoted", File{Path: "we\"ird.md", Data: []byte("a\n")}, File{Path: "we\"ird.md", Data: []byte("b\n")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Unified(c.old, c.new)
			golden := filepath.Join("testdata", c.name+".diff")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if got != string(want) {
				t.Errorf("Unified mismatch\n got:\n%s\nwant:\n%s", got, want)
			}
			if !IsBinary(c.old.Data) && !IsBinary(c.new.Data) {
				res, err := applyUnified(c.old.Data, got)
				if err != nil || !bytes.Equal(res, c.new.Data) {
					t.Errorf("applying own diff: %v, got %q want %q", err, res, c.new.Data)
				}
			}
		})
	}
}

// TestUnifiedAcceptedByGit checks that git itself applies the diffs, the
// compatibility the package doc promises.
func TestUnifiedAcceptedByGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not found; skipping git apply compatibility check")
	}
	dir := t.TempDir()
	old := []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n")
	new := []byte("one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven")
	if err := os.WriteFile(filepath.Join(dir, "m.md"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	patch := Unified(File{Path: "m.md", Data: old}, File{Path: "m.md", Data: new}) +
		Unified(File{Path: "add.md", Absent: true}, File{Path: "add.md", Data: []byte("hi\n")})
	cmd := exec.Command("git", "apply", "--unsafe-paths", "-")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_DIR="+filepath.Join(dir, "nogit"))
	cmd.Stdin = strings.NewReader(patch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\npatch:\n%s", err, out, patch)
	}
	for name, want := range map[string][]byte{"m.md": new, "add.md": []byte("hi\n")} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s after git apply = %q (%v), want %q", name, got, err, want)
		}
	}
}

func FuzzDiff(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd"))
	f.Add([]byte(""), []byte("x"))
	f.Add([]byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n"), []byte("1\n2\nX\n4\n5\n6\n7\n8\nY\n"))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		a, b := Split(x), Split(y)
		got, err := applySpans(a, b, Diff(a, b))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "") != string(y) {
			t.Fatalf("spans rebuild %q, want %q", strings.Join(got, ""), y)
		}
		if IsBinary(x) || IsBinary(y) {
			return
		}
		res, err := applyUnified(x, Unified(File{Path: "f", Data: x}, File{Path: "f", Data: y}))
		if err != nil || !bytes.Equal(res, y) {
			t.Fatalf("unified round trip: %v: %q want %q", err, res, y)
		}
	})
}
