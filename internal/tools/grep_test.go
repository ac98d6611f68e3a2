package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestGrep(t *testing.T) {
	f := newFixture(t, Limits{GrepMaxMatches: 3, GrepMaxLineChars: 40})
	writeFile(t, filepath.Join(f.repo, ".gitignore"), "vendor/\n")
	writeFile(t, filepath.Join(f.repo, "main.go"), "package main\n\nfunc main() {\n\tserve(8080)\n}\n")
	writeFile(t, filepath.Join(f.repo, "util.go"), "package main\n\nfunc serve(port int) {}\n")
	writeFile(t, filepath.Join(f.repo, "vendor", "dep.go"), "package dep\nfunc serve() {}\n")
	writeFile(t, filepath.Join(f.repo, "README.md"), "Run serve on port 8080.\n")
	writeFile(t, filepath.Join(f.repo, "logo.png"), "\x89PNG\x00serve")
	writeFile(t, filepath.Join(f.repo, ".git", "config"), "serve\n")
	var session strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&session, `{"n":%d,"type":"assistant","text":"%s deploy with make release %s"}`+"\n", i, strings.Repeat("a", 60), strings.Repeat("z", 60))
	}
	writeFile(t, filepath.Join(f.sessions, "s1.jsonl"), session.String())
	writeFile(t, filepath.Join(f.sessions, "s2.jsonl"), "{\"n\":1}\n")
	// files_with_matches lists newest first; file systems with coarse
	// timestamps would otherwise tie.
	now := time.Now()
	for i, name := range []string{"README.md", "util.go", "main.go"} {
		mt := now.Add(-time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(f.repo, name), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		in      map[string]any
		golden  string
		errText []string
	}{
		{name: "literal content", in: map[string]any{"pattern": "serve"}, golden: "literal.txt"},
		{name: "regex content", in: map[string]any{"pattern": `serve\([0-9]+\)`}, golden: "regex.txt"},
		{name: "escaped literal", in: map[string]any{"pattern": `serve\(8080\)`}, golden: "escaped.txt"},
		{name: "case insensitive", in: map[string]any{"pattern": `(?i)RUN SERVE`}, golden: "fold.txt"},
		{name: "files with matches", in: map[string]any{"pattern": "serve", "output_mode": "files_with_matches"}, golden: "files.txt"},
		{name: "count", in: map[string]any{"pattern": "package", "output_mode": "count"}, golden: "count.txt"},
		{name: "glob filter", in: map[string]any{"pattern": "serve", "glob": "*.md"}, golden: "glob.txt"},
		{name: "explicit ignored dir", in: map[string]any{"pattern": "serve", "path": "vendor"}, golden: "vendor.txt"},
		{name: "session window and trailer", in: map[string]any{"pattern": "make release", "path": f.sessions, "glob": "*.jsonl"}, golden: "session.txt"},
		{name: "head limit", in: map[string]any{"pattern": "make release", "path": filepath.Join(f.sessions, "s1.jsonl"), "head_limit": 1}, golden: "head.txt"},
		{name: "no match", in: map[string]any{"pattern": "kubernetes"}, golden: "none.txt"},
		{name: "bad regex", in: map[string]any{"pattern": "serve("}, errText: []string{"not a valid regular expression", "escape"}},
		{name: "empty pattern", in: map[string]any{"pattern": ""}, errText: []string{"empty"}},
		{name: "bad mode", in: map[string]any{"pattern": "x", "output_mode": "lines"}, errText: []string{"output_mode", "files_with_matches"}},
		{name: "bad head limit", in: map[string]any{"pattern": "x", "head_limit": 0}, errText: []string{"head_limit"}},
		{name: "bad glob", in: map[string]any{"pattern": "x", "glob": "[x"}, errText: []string{"glob"}},
		{name: "outside", in: map[string]any{"pattern": "x", "path": f.outside}, errText: []string{"must be inside"}},
		{name: "dotdot", in: map[string]any{"pattern": "x", "path": "../outside"}, errText: []string{"must be inside"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.call(t, "grep", tt.in)
			if tt.errText != nil {
				wantErr(t, err, tt.errText...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("grep", tt.golden), f.normalize(res.Content))
		})
	}
}

// TestGrepHugeLine greps a file with a 10 MB line: the match at its very end
// is found, the output stays small, and line numbers after it stay right.
func TestGrepHugeLine(t *testing.T) {
	f := newFixture(t, Limits{})
	huge := strings.Repeat(`{"k":"v"},`, 1<<20) + "NEEDLE-END"
	writeFile(t, filepath.Join(f.sessions, "big.jsonl"), "first NEEDLE-END\n"+huge+"\nthird\nfourth NEEDLE-END\n")
	for _, pattern := range []string{"NEEDLE-END", `NEEDLE-[A-Z]+`} {
		t.Run(pattern, func(t *testing.T) {
			res, err := f.call(t, "grep", map[string]any{"pattern": pattern, "path": f.sessions})
			if err != nil {
				t.Fatal(err)
			}
			got := f.normalize(res.Content)
			for _, want := range []string{"big.jsonl:1:first NEEDLE-END", `big.jsonl:2:…{"k"`, `{"k":"v"},NEEDLE-END` + "\n", "big.jsonl:4:fourth NEEDLE-END"} {
				if !strings.Contains(got, want) {
					t.Errorf("missing %q in\n%s", want, got)
				}
			}
			if len(res.Content) > 2000 {
				t.Errorf("output is %d bytes; the huge line should be cut", len(res.Content))
			}
		})
	}
}

// naiveGrep is the reference: split into lines, match each.
func naiveGrep(data []byte, re *regexp.Regexp) []int64 {
	var out []int64
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if re.Match(l) {
			out = append(out, int64(i+1))
		}
	}
	return out
}

// scanLines runs the scanner with a tiny buffer so that the overlong-line
// paths run on small inputs.
func scanLines(t testing.TB, data []byte, pattern string, bufSize, maxLine int) ([]int64, error) {
	m, err := newMatcher(pattern)
	if err != nil {
		return nil, err
	}
	sc := newScanner(m, bufSize, maxLine, 16)
	var got []int64
	err = sc.scan(context.Background(), bytes.NewReader(data), func(n int64, line []byte, at int, cut bool) bool {
		got = append(got, n)
		if at >= 0 && !cut && m.re == nil && !bytes.HasPrefix(line[at:], m.lit) {
			t.Errorf("line %d: match offset %d does not point at the literal", n, at)
		}
		return true
	})
	return got, err
}

func TestScanMatchesReference(t *testing.T) {
	inputs := []string{
		"",
		"abc",
		"abc\n",
		"\n\n\nabc\n\n",
		"xxabcxx\nyy\nabc",
		strings.Repeat("z", 100) + "abc" + strings.Repeat("z", 100) + "\nabc\n" + strings.Repeat("q", 70) + "ab\nc",
		strings.Repeat("ab", 50) + "c\n" + "a\nbc\n",
		"héllo wörld abc\r\nnext abc\r\n",
	}
	patterns := []string{"abc", "b", `a.c`, `^abc$`, `(?i)ABC`, `[a-c]{3}`, `c$`, "z+abc", "zz|qq"}
	sizes := []struct{ buf, maxLine int }{{8, 8}, {13, 13}, {8, 40}, {64, 64}, {4096, 4096}}
	for _, sz := range sizes {
		for i, in := range inputs {
			for _, p := range patterns {
				got, err := scanLines(t, []byte(in), p, sz.buf, sz.maxLine)
				if err != nil {
					t.Fatalf("buf %v input %d pattern %q: %v", sz, i, p, err)
				}
				want := naiveGrep([]byte(in), regexp.MustCompile(p))
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("buf %v input %d pattern %q: lines %v, want %v", sz, i, p, got, want)
				}
			}
		}
	}
}

func TestMatcherPaths(t *testing.T) {
	tests := []struct {
		pattern string
		lit     string
		fold    string
		regex   bool
	}{
		{"serve", "serve", "", false},
		{`serve\(8080\)`, "serve(8080)", "", false},
		{`foo.*bar`, "foo", "", true},
		{`(?i)foo`, "", "foo", true},
		{`error: [0-9]+ files`, "error: ", "", true},
		{`a|b`, "", "", true},
		{`(abc)+x?`, "abc", "", true},
		{`(?i)1234`, "1234", "", false},
		{`(?i)econnrefused [0-9.]+`, "", "econnrefu", true},
		{`x(?i:Timeout)+`, "", "timeout", true},
		{`(?i)foo(?-i)BARBAZ`, "BARBAZ", "", true},
		{`(?i)ab(?-i)CDEFG`, "CDEFG", "", true},
		// k and s also match the Kelvin sign and the long s, which a byte
		// search would miss, and ß is not ASCII: the runs stop there.
		{`(?i)quokka`, "", "quo", true},
		{`(?i)straße`, "", "tra", true},
		{`(?i)(ß|x)`, "", "", true},
		{`(?i)kiss`, "", "i", true},
		{`(?i)ÉLAN`, "", "lan", true},
	}
	for _, tt := range tests {
		m, err := newMatcher(tt.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tt.pattern, err)
		}
		fold := ""
		if m.fold != nil {
			fold = string(m.fold.lit)
		}
		if string(m.lit) != tt.lit || fold != tt.fold || (m.re != nil) != tt.regex {
			t.Errorf("%q: lit %q fold %q regex %v; want %q %q %v", tt.pattern, m.lit, fold, m.re != nil, tt.lit, tt.fold, tt.regex)
		}
	}
}

// TestScanFold checks the case-insensitive prefilter: mixed case, the
// literal at either end of a line and of the input, split across the
// scanner's reads, and runes outside ASCII that fold to or from ASCII.
func TestScanFold(t *testing.T) {
	var split strings.Builder // the literal at every offset against a read
	for pad := range 24 {
		fmt.Fprintf(&split, "%sqUoKkA\n", strings.Repeat("x", pad))
	}
	tests := []struct {
		name, pattern, input string
		want                 []int64
	}{
		{"mixed case", `(?i)econnrefused [0-9.]+:[0-9]{4}`,
			"connect ECONNREFUSED 127.0.0.1:8080\neconnrefused 1.2:99\nEconnRefused 10.0.0.1:5432 again\nECONNRESET 1.2.3.4:8080\necONNrefusedX 1:1234\n",
			[]int64{1, 3}},
		{"line start and end", `(?i)quokka`, "QUOKKA\nzebra quokka\nno\nquOKka", []int64{1, 2, 4}},
		{"crlf", `(?i)quokka$`, "a QUOKKA\r\nquokka\n", []int64{2}},
		{"anchored", `(?i)^econnrefused`, "ECONNREFUSED\n ECONNREFUSED\nx\neConnRefused!", []int64{1, 4}},
		{"split across reads", `(?i)QUOKKA`, split.String(), seq(1, 24)},
		{"kelvin sign", `(?i)quokka`, "QUO\u212a\u212aA\nquo kka\nx QUOKKA\n", []int64{1, 3}},
		{"long s", `(?i)kiss`, "ki\u017f\u017f\nKISS\nkis\n", []int64{1, 2}},
		{"long s in the run", `(?i)status: failed`, "STATU\u017f: FAILED\nstatus failed\n", []int64{1}},
		{"sharp s", `(?i)straße`, "STRASSE\nStraße\nSTRA\u1e9eE\nstrasse\n", []int64{2, 3}},
		{"non-ASCII around", `(?i)élan vital`, "ÉLAN VITAL\n\xffélan Vital\xfe\nelan vital\n", []int64{1, 2}},
		{"no letter to fold", `(?i)[a-z]+ 8080`, "port 8080\n8080\n", []int64{1}},
	}
	sizes := []struct{ buf, maxLine int }{{8, 8}, {11, 11}, {16, 64}, {64, 64}, {4096, 4096}}
	for _, tt := range tests {
		re := regexp.MustCompile(tt.pattern)
		if ref := naiveGrep([]byte(tt.input), re); fmt.Sprint(ref) != fmt.Sprint(tt.want) {
			t.Fatalf("%s: reference finds %v, want %v", tt.name, ref, tt.want)
		}
		for _, sz := range sizes {
			got, err := scanLines(t, []byte(tt.input), tt.pattern, sz.buf, sz.maxLine)
			if err != nil {
				t.Fatalf("%s buf %v: %v", tt.name, sz, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s buf %v: lines %v, want %v", tt.name, sz, got, tt.want)
			}
		}
	}
}

// seq returns the numbers from lo to hi.
func seq(lo, hi int64) []int64 {
	var s []int64
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// FuzzScan checks the streaming scanner against the line-by-line reference
// for any input, pattern and buffer size.
func FuzzScan(f *testing.F) {
	f.Add([]byte("abc\nxabcx\n"), "abc", uint8(5), uint8(0))
	f.Add([]byte(strings.Repeat("y", 40)+"needle\n"), "ne+dle", uint8(3), uint8(20))
	f.Add([]byte("\x00binary"), "b", uint8(10), uint8(0))
	f.Add([]byte("QUO\u212a\u212aA\nx quokka\nSTATU\u017f: 1\n"), "quokka|status: [0-9]", uint8(7), uint8(9))
	f.Add([]byte("Stra\u1e9eE\nECONNREFUSED 1.2:8080\n"), "(?-i:E)connrefused [0-9.]+:[0-9]{4}|straße", uint8(12), uint8(40))
	f.Fuzz(func(t *testing.T, data []byte, pattern string, size, grow uint8) {
		// Each pattern is also tried case-insensitively, so that the fold
		// prefilter meets every input the fuzzer makes up.
		for _, p := range []string{pattern, "(?i)" + pattern} {
			checkScan(t, data, p, size, grow)
		}
	})
}

// checkScan compares the scanner with the line-by-line reference.
func checkScan(t *testing.T, data []byte, pattern string, size, grow uint8) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return
	}
	bufSize := int(size)%64 + 4
	got, err := scanLines(t, data, pattern, bufSize, bufSize+int(grow))
	if err == errBinary {
		if bytes.IndexByte(data[:min(len(data), bufSize)], 0) < 0 {
			t.Fatal("binary reported without a NUL in the first chunk")
		}
		return
	}
	if err != nil {
		return // e.g. an empty pattern
	}
	if want := naiveGrep(data, re); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pattern %q: lines %v, want %v", pattern, got, want)
	}
}
