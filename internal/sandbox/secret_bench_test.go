package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusMemories loads every memory file of the project's corpus, the text
// the guard sees on each write and edit.
func corpusMemories(b *testing.B) []string {
	b.Helper()
	var out []string
	for _, root := range corpusRoots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".md") && !strings.Contains(filepath.ToSlash(p), "/repo/") {
				if data, err := os.ReadFile(p); err == nil {
					out = append(out, string(data))
				}
			}
			return nil
		})
	}
	if len(out) == 0 {
		b.Fatal("no corpus")
	}
	return out
}

// BenchmarkCheckSecretCorpus is the guard's cost per memory file of the
// corpus (every write and edit pays it once or twice). Run it here and on
// an older checkout for the before/after ratio.
func BenchmarkCheckSecretCorpus(b *testing.B) {
	files := corpusMemories(b)
	var bytes int64
	for _, f := range files {
		bytes += int64(len(f))
	}
	b.SetBytes(bytes / int64(len(files)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_ = CheckSecret(files[i%len(files)])
	}
}

// BenchmarkCompileSecretRules is what compiling the guard's patterns costs:
// the start-up time every dream process saved by compiling them on first
// use instead of at init (issue 15).
func BenchmarkCompileSecretRules(b *testing.B) {
	for b.Loop() {
		_ = compileSecretRules()
	}
}
