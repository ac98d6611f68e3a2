package journal

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// writeTree creates files (slash paths) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree returns every regular file under dir, dream's own files included,
// so a test sees exactly what a reader of the directory would.
func readTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func describe(tree map[string]string) string {
	keys := make([]string, 0, len(tree))
	for k := range tree {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

func sameTree(a, b map[string]string) bool { return maps.Equal(a, b) }

// apply a set of agent edits to the staging dir: "" deletes a file.
func edit(t testing.TB, dir string, edits map[string]string) {
	t.Helper()
	for p, body := range edits {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if body == "" {
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeTree(t, dir, map[string]string{p: body})
	}
}

// after returns the tree pre with edits applied.
func after(pre, edits map[string]string) map[string]string {
	out := maps.Clone(pre)
	for p, body := range edits {
		if body == "" {
			delete(out, p)
		} else {
			out[p] = body
		}
	}
	return out
}

// journalEntries lists the transaction dirs left for memDir.
func journalEntries(t testing.TB, stateDir, memDir string) []string {
	t.Helper()
	key, err := MemKey(memDir)
	if err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(filepath.Join(stateDir, "journal", key))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}
	return out
}

func tempFiles(tree map[string]string) []string {
	var out []string
	for p := range tree {
		if strings.HasPrefix(filepath.Base(p), TempPrefix) {
			out = append(out, p)
		}
	}
	return out
}
