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
