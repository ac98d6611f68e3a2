package sandbox

import (
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// corpusRoots are the project's own memories and transcripts: the eval
// scenarios (memory, repository and sessions), the demo's example memory,
// and the hosts' and gate's test transcripts. Paths are relative to this
// package.
var corpusRoots = []string{
	"../../testdata/eval",
	"../demo/testdata",
	"../host/testdata",
	"../gate/testdata",
	"../memory/testdata",
	"../offline/testdata",
}

// TestSecretGuardCorpus runs the guard over every text line of the project's
// own corpus and reports how many lines it refuses, split into memory files
// (where any refusal is a false positive the user would meet) and everything
// else (transcripts and repositories, where the eval plants real-looking
// keys on purpose). Each refused line is pinned in a golden file, so a rule
// change that refuses more, or fewer, shows up in review:
//
//	go test ./internal/sandbox -run TestSecretGuardCorpus -v [-update]
func TestSecretGuardCorpus(t *testing.T) {
	type tally struct{ files, lines, refused, refusedFiles int }
	var memory, other tally
	var refusals []string
	for _, root := range corpusRoots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			if strings.Contains(p, string(filepath.Separator)+"fuzz"+string(filepath.Separator)) || strings.HasSuffix(p, ".golden") {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			tl := &other
			// The whole file too, as a write sees it: forms that span
			// lines (a wrapped key, a PEM body) only show here.
			whole, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.HasSuffix(p, ".md") && !strings.Contains(filepath.ToSlash(p), "/repo/") {
				tl = &memory
			}
			tl.files++
			if err := CheckSecret(string(whole)); err != nil {
				tl.refusedFiles++
				refusals = append(refusals, fmt.Sprintf("%s (whole file) %s", filepath.ToSlash(p), refusalKind(err)))
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			n := 0
			for sc.Scan() {
				n++
				tl.lines++
				line := sc.Text()
				if strings.ContainsRune(line, 0) {
					return nil // binary
				}
				if err := CheckSecret(line); err != nil {
					tl.refused++
					refusals = append(refusals, fmt.Sprintf("%s:%d %s", filepath.ToSlash(p), n, refusalKind(err)))
				}
			}
			return sc.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("secret guard over the project's corpus: memory files: %d of %d lines refused, %d of %d whole files; transcripts, repositories and other files: %d of %d lines refused, %d of %d whole files",
		memory.refused, memory.lines, memory.refusedFiles, memory.files, other.refused, other.lines, other.refusedFiles, other.files)
	if memory.lines == 0 || other.lines == 0 {
		t.Fatalf("corpus not found: %+v %+v", memory, other)
	}
	sort.Strings(refusals)
	got := strings.Join(refusals, "\n") + "\n"
	golden := filepath.Join("testdata", "corpus_refusals.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("refused lines changed (review, then -update):\n--- want\n%s--- got\n%s", want, got)
	}
}

// refusalKind is the kind a refusal names, between the parentheses.
func refusalKind(err error) string {
	msg := strings.TrimPrefix(err.Error(), ErrSecret.Error()+" (")
	if i := strings.Index(msg, ") on line"); i >= 0 {
		return msg[:i]
	}
	return msg
}
