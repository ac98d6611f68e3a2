package eval

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	_ "embed" // the scenario corpus travels inside the binary
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
)

// The scenario corpus lives, one directory per scenario, in the repository's
// testdata/eval, where people read and edit it. An installed binary has no
// checkout beside it, so `dream eval` carries a copy: a gzipped tar of that
// directory, generated from it and checked against it by
// TestEmbeddedCorpusIsCurrent (run `go generate ./internal/eval` after
// editing a scenario).
//
// An archive rather than an embed.FS of the directory: an embed.FS cannot
// reach a directory above its package, and the corpus lives at the module
// root beside the other test data. Its odd names (the decoy-odd-file-names
// scenario's "Map[K,V] notes (draft)#2.md") stay within what a module zip
// may hold, so that `go install` of a release works.
//
//go:generate go test -run TestEmbeddedCorpusIsCurrent -update .
//go:embed corpus.tar.gz
var corpusArchive []byte

// maxCorpusFile bounds one extracted file, so that a damaged archive cannot
// fill the disk.
const maxCorpusFile = 64 << 20

// ExtractCorpus writes the corpus built into the binary under dst (which
// must exist), one directory per scenario, ready for LoadAll(dst).
func ExtractCorpus(dst string) error {
	files, err := readArchive(corpusArchive)
	if err != nil {
		return fmt.Errorf("eval: built-in corpus: %w", err)
	}
	for _, name := range sortedKeys(files) {
		p := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("eval: built-in corpus: %w", err)
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			return fmt.Errorf("eval: built-in corpus: %w", err)
		}
	}
	return nil
}

// readArchive returns the regular files of a corpus archive keyed by slash
// path. Every name must be local (no "..", no absolute path): the archive
// is ours, but a file written outside dst would be a bug worth an error.
func readArchive(data []byte) (map[string]string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s: not a regular file", h.Name)
		}
		if !filepath.IsLocal(filepath.FromSlash(h.Name)) || path.Clean(h.Name) != h.Name {
			return nil, fmt.Errorf("%q: not a clean relative path", h.Name)
		}
		if h.Size > maxCorpusFile {
			return nil, fmt.Errorf("%s: %d bytes, over the %d limit", h.Name, h.Size, maxCorpusFile)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.Name, err)
		}
		out[h.Name] = string(b)
	}
	if err := zr.Close(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("empty archive")
	}
	return out, nil
}

// corpusFiles lists the built-in corpus's files, for tests.
func corpusFiles() (map[string]string, error) { return readArchive(corpusArchive) }
