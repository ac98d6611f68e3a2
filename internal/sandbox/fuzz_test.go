package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks the path guard's one promise: whatever the input, a path
// it accepts stays inside the memory directory and is never the lock file or
// under .git.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a.md", "../x", "/etc/passwd", ".consolidate-lock", "a/../../b", "./.GIT/config", "", "a\x00b", "..", "sub/.Consolidate-Lock/x"} {
		f.Add(s)
	}
	base := f.TempDir()
	display := filepath.Join(base, "memory")
	real := filepath.Join(base, "staging")
	for _, d := range []string{display, real} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	m, err := OpenMemory(real, display)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = m.Close() })
	f.Fuzz(func(t *testing.T, in string) {
		for _, p := range []string{in, filepath.Join(display, in), filepath.Join(real, in), display + in} {
			rel, err := m.Resolve(p)
			if err != nil {
				continue
			}
			native := filepath.FromSlash(rel)
			if !filepath.IsLocal(native) || rel == "." {
				t.Fatalf("Resolve(%q) = %q: not a local path", p, rel)
			}
			if _, ok := within(display, filepath.Join(display, native)); !ok {
				t.Fatalf("Resolve(%q) = %q escapes", p, rel)
			}
			for _, part := range strings.Split(rel, "/") {
				if part == ".." || strings.EqualFold(part, LockFileName) || strings.EqualFold(part, ".git") {
					t.Fatalf("Resolve(%q) = %q has forbidden component %q", p, rel, part)
				}
			}
			if filepath.IsAbs(p) {
				_, inDisplay := within(display, filepath.Clean(p))
				_, inReal := within(real, filepath.Clean(p))
				if !inDisplay && !inReal {
					t.Fatalf("Resolve(%q) accepted an absolute path outside the memory directory", p)
				}
			}
			if filepath.ToSlash(filepath.Clean(native)) != rel {
				t.Fatalf("Resolve(%q) = %q is not clean", p, rel)
			}
		}
	})
}

// FuzzCheckSecret checks that the guard never panics and that a refusal never
// quotes what it found.
func FuzzCheckSecret(f *testing.F) {
	for _, s := range []string{"", "API_KEY=abc", "token: \"aB3dE5gH7jK9mN2pQ4sT6\"", "-----BEGIN PRIVATE KEY-----", "sk-" + strings.Repeat("aB3", 10), "password=\n", "\xff\xfe=token:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := CheckSecret(s)
		if err == nil {
			return
		}
		for _, fd := range findSecrets(s) {
			if len(fd.value) >= 8 && strings.Contains(err.Error(), fd.value) {
				t.Fatalf("error %q echoes the secret", err)
			}
		}
	})
}

// FuzzWriteName writes under fuzzed names through Resolve and WriteFile:
// a name is either refused by both checks, or lands as exactly one regular
// file under exactly that name, inside the memory dir, and every accepted
// name is valid UTF-8 without control characters or a reserved prefix.
func FuzzWriteName(f *testing.F) {
	for _, s := range []string{"a.md", "a\nb.md", "bad\xff.md", ".dream-tmp-x", "x.md/y.md", "sub/dir/n.md", "项目.md", "\u2028", " a.md", "a/../b.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		dir := t.TempDir()
		m, err := OpenMemory(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		rel, err := m.Resolve(name)
		if err != nil {
			if werr := m.WriteFile(filepath.ToSlash(filepath.Clean(name)), []byte("x")); werr == nil && CheckName(filepath.ToSlash(filepath.Clean(name))) != nil {
				t.Fatalf("WriteFile accepted %q, which CheckName refuses", name)
			}
			return
		}
		if err := CheckName(rel); err != nil {
			t.Fatalf("Resolve(%q) = %q accepted a name CheckName refuses: %v", name, rel, err)
		}
		for _, r := range rel {
			if r < 0x20 || r == 0x7f || r == '\uFFFD' {
				t.Fatalf("accepted %q with control rune %U", rel, r)
			}
		}
		if err := m.WriteFile(rel, []byte("x")); err != nil {
			return // e.g. a component that exists as a file
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || string(data) != "x" {
			t.Fatalf("wrote %q but read back %q, %v", rel, data, err)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".dream-tmp-") {
				t.Fatalf("temp file %q left behind", e.Name())
			}
		}
	})
}
