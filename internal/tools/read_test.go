package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	f := newFixture(t, Limits{ReadMaxLines: 5, ReadMaxLineChars: 20, ReadMaxBytes: 1 << 10})
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	writeFile(t, filepath.Join(f.repo, "twelve.txt"), strings.Join(lines, "\n")+"\n")
	writeFile(t, filepath.Join(f.repo, "long.txt"), "short\n"+strings.Repeat("é", 50)+"\nend")
	writeFile(t, filepath.Join(f.repo, "empty.txt"), "")
	writeFile(t, filepath.Join(f.repo, "bin.dat"), "ELF\x00\x01\x02")
	writeFile(t, filepath.Join(f.repo, "latin1.txt"), "caf\xe9\n")
	writeFile(t, filepath.Join(f.repo, "crlf.txt"), "a\r\nb\r\n")
	writeFile(t, filepath.Join(f.staging, "topic.md"), "staged memory\n")
	writeFile(t, filepath.Join(f.display, "topic.md"), "the user's copy\n")
	writeFile(t, filepath.Join(f.sessions, "s1.jsonl"), `{"type":"user"}`+"\n")
	writeFile(t, filepath.Join(f.outside, "secret.txt"), "nope\n")
	tests := []struct {
		name    string
		in      map[string]any
		golden  string // expected output file under testdata/read/
		errText []string
	}{
		{name: "first lines capped", in: map[string]any{"file_path": "twelve.txt"}, golden: "capped.txt"},
		{name: "offset and limit", in: map[string]any{"file_path": "twelve.txt", "offset": 10, "limit": 2}, golden: "offset.txt"},
		{name: "tail", in: map[string]any{"file_path": filepath.Join(f.repo, "twelve.txt"), "offset": 11}, golden: "tail.txt"},
		{name: "long line cut on rune boundary", in: map[string]any{"file_path": "long.txt"}, golden: "long.txt"},
		{name: "crlf", in: map[string]any{"file_path": "crlf.txt"}, golden: "crlf.txt"},
		{name: "empty", in: map[string]any{"file_path": "empty.txt"}, golden: "empty.txt"},
		{name: "memory reads the staging copy", in: map[string]any{"file_path": filepath.Join(f.display, "topic.md")}, golden: "memory.txt"},
		{name: "sessions", in: map[string]any{"file_path": filepath.Join(f.sessions, "s1.jsonl")}, golden: "session.txt"},
		{name: "offset past end", in: map[string]any{"file_path": "twelve.txt", "offset": 40}, errText: []string{"past the end", "12 lines"}},
		{name: "binary", in: map[string]any{"file_path": "bin.dat"}, errText: []string{"binary file"}},
		{name: "not utf-8", in: map[string]any{"file_path": "latin1.txt"}, errText: []string{"binary file"}},
		{name: "directory", in: map[string]any{"file_path": "."}, errText: []string{"is a directory", "ls"}},
		{name: "missing", in: map[string]any{"file_path": "nope.txt"}, errText: []string{"nope.txt"}},
		{name: "outside", in: map[string]any{"file_path": filepath.Join(f.outside, "secret.txt")}, errText: []string{"must be inside", "repo"}},
		{name: "dotdot", in: map[string]any{"file_path": "../outside/secret.txt"}, errText: []string{"must be inside"}},
		{name: "negative offset", in: map[string]any{"file_path": "twelve.txt", "offset": -1}, errText: []string{"offset"}},
		{name: "zero limit", in: map[string]any{"file_path": "twelve.txt", "limit": 0}, errText: []string{"limit"}},
		{name: "missing path", in: map[string]any{}, errText: []string{"file_path is required"}},
		{name: "empty path", in: map[string]any{"file_path": ""}, errText: []string{"empty path"}},
		{name: "zero offset is the first line", in: map[string]any{"file_path": "twelve.txt", "offset": 0, "limit": 2}, golden: "head2.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.call(t, "read", tt.in)
			if tt.errText != nil {
				wantErr(t, err, tt.errText...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Touched != "" {
				t.Errorf("read reported a touched file %q", res.Touched)
			}
			golden(t, filepath.Join("read", tt.golden), f.normalize(res.Content))
		})
	}
}

func TestReadByteCap(t *testing.T) {
	f := newFixture(t, Limits{ReadMaxBytes: 100})
	writeFile(t, filepath.Join(f.repo, "big.txt"), strings.Repeat("0123456789012345678\n", 20))
	res, err := f.call(t, "read", map[string]any{"file_path": "big.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "cap; continue with offset=") {
		t.Errorf("byte cap note missing:\n%s", res.Content)
	}
	if len(res.Content) > 100+120 {
		t.Errorf("output %d bytes, cap is 100 plus the note", len(res.Content))
	}
}

func TestReadHugeLineBoundedMemory(t *testing.T) {
	f := newFixture(t, Limits{})
	writeFile(t, filepath.Join(f.sessions, "huge.jsonl"), strings.Repeat("x", 3<<20)+"\nsecond\n")
	res, err := f.call(t, "read", map[string]any{"file_path": filepath.Join(f.sessions, "huge.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "     2\tsecond") || !strings.Contains(res.Content, "1 line(s) longer than 2000") {
		t.Errorf("unexpected output tail: %q", res.Content[len(res.Content)-200:])
	}
}
