package eval

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbeddedCorpusIsCurrent keeps the corpus built into the binary equal,
// file for file and byte for byte, to testdata/eval: an edited scenario
// fails here until the archive is regenerated with -update (or
// `go generate ./internal/eval`).
func TestEmbeddedCorpusIsCurrent(t *testing.T) {
	if *update {
		var buf bytes.Buffer
		if err := writeArchive(&buf, corpus); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("corpus.tar.gz", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		corpusArchive = buf.Bytes()
	}
	want, err := readTree(corpus, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := corpusFiles()
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range want {
		switch g, ok := got[name]; {
		case !ok:
			t.Errorf("%s is in testdata/eval but not in corpus.tar.gz (go test -run TestEmbeddedCorpusIsCurrent -update)", name)
		case g != body:
			t.Errorf("%s differs between testdata/eval and corpus.tar.gz (go test -run TestEmbeddedCorpusIsCurrent -update)", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is in corpus.tar.gz but no longer in testdata/eval (go test -run TestEmbeddedCorpusIsCurrent -update)", name)
		}
	}
}

// TestArchiveIsDeterministic: regenerating an unchanged corpus yields the
// same bytes, so the archive only changes in git when a scenario does.
func TestArchiveIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := writeArchive(&a, corpus); err != nil {
		t.Fatal(err)
	}
	if err := writeArchive(&b, corpus); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two archives of one corpus differ")
	}
}

// TestExtractedCorpusLoads: what ExtractCorpus writes is a corpus LoadAll
// reads, with the same scenarios as testdata/eval, odd file names included.
func TestExtractedCorpusLoads(t *testing.T) {
	dst := t.TempDir()
	if err := ExtractCorpus(dst); err != nil {
		t.Fatal(err)
	}
	got, err := LoadAll(dst)
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadAll(corpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("extracted %d scenarios, testdata/eval has %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || len(got[i].Expects) != len(want[i].Expects) || len(got[i].Probes) != len(want[i].Probes) {
			t.Errorf("scenario %d: extracted %s (%d expects, %d probes), want %s (%d, %d)", i,
				got[i].Name, len(got[i].Expects), len(got[i].Probes), want[i].Name, len(want[i].Expects), len(want[i].Probes))
		}
	}
	odd := filepath.Join(dst, "decoy-odd-file-names", "memory", "Map[K,V] notes (draft)#2.md")
	if _, err := os.Stat(odd); err != nil {
		t.Errorf("the odd file name did not survive the archive: %v", err)
	}
}

// TestReadArchiveRefusesEscapes: a damaged archive naming a path outside
// the destination, or holding something other than regular files, is an
// error, not a file written elsewhere.
func TestReadArchiveRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../evil", "/etc/evil", "a/../../evil", "a//b"} {
		var buf bytes.Buffer
		if err := writeArchiveOf(&buf, map[string]string{name: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := readArchive(buf.Bytes()); err == nil || !strings.Contains(err.Error(), "clean relative path") {
			t.Errorf("%q: %v, want a refusal", name, err)
		}
	}
	if _, err := readArchive([]byte("not gzip")); err == nil {
		t.Error("garbage read as an archive")
	}
}

// TestLegendNamesEveryColumn: each column header of Table has a line in
// Legend, so a new column cannot ship unexplained.
func TestLegendNamesEveryColumn(t *testing.T) {
	header := strings.SplitN(Table(nil, false), "\n", 2)[0]
	for _, col := range strings.Split(header, "  ") {
		col = strings.TrimSpace(col)
		if col == "" || col == "scenario" {
			continue
		}
		if !strings.Contains(Legend, "\n  "+col+" ") && !strings.HasPrefix(Legend, "  "+col+" ") {
			t.Errorf("Legend does not explain the %q column:\n%s", col, Legend)
		}
	}
}

// writeArchive writes the regular files under dir as a gzipped tar whose
// bytes depend only on the names and contents (sorted, no times, no
// owners), so that regenerating an unchanged corpus changes nothing.
func writeArchive(w io.Writer, dir string) error {
	files, err := readTree(dir, false)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no files under %s", dir)
	}
	return writeArchiveOf(w, files)
}

// writeArchiveOf writes files (slash path to content) in archive form, with
// no checks on the names, so tests can also build damaged archives.
func writeArchiveOf(w io.Writer, files map[string]string) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, name := range sortedKeys(files) {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(files[name])), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, files[name]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
