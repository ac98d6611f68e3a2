package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadCWD: a transcript is untrusted; whatever it holds, the cwd read
// back is empty or a clean absolute path without NUL.
func FuzzReadCWD(f *testing.F) {
	f.Add(`{"parentUuid":null,"cwd":"/home/u/app","sessionId":"s","type":"user"}` + "\n")
	f.Add(`{"type":"summary"}` + "\n" + `{"cwd":"relative/x"}` + "\n" + `{"cwd":"/ok/路径"}` + "\n")
	f.Add(`{"cwd":"/a/../../etc"}`)
	f.Add(`{"cwd":"/a\u0000b"}`)
	f.Add("\x00\xff{\"cwd\":")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(dir, "t.jsonl")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cwd := readCWD(p)
		if cwd == "" {
			return
		}
		if !filepath.IsAbs(cwd) || filepath.Clean(cwd) != cwd || strings.ContainsRune(cwd, 0) {
			t.Fatalf("readCWD(%q) = %q", content, cwd)
		}
	})
}
