package memory_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/eval"
	"github.com/dreamkit/dream/internal/memory"
)

// TestTableMatchesGoldmarkExtensionOnEvalWorkspaces compares gfmTable with
// goldmark's extension.Table on the memories of every eval scenario as a
// dream sees them: the workspace eval prepares, generated topic files
// included (large-180-topics writes its 180 topics at run time, so they are
// not in the test data TestTableMatchesGoldmarkExtension walks).
func TestTableMatchesGoldmarkExtensionOnEvalWorkspaces(t *testing.T) {
	scenarios, err := eval.LoadAll(filepath.Join("..", "..", "testdata", "eval"))
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	compare := func(_ context.Context, s eval.Scenario, ws eval.Workspace) (eval.Outcome, error) {
		return eval.Outcome{}, filepath.WalkDir(ws.MemoryDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			rel, _ := filepath.Rel(ws.MemoryDir, path)
			memory.SameParse(t, s.Name+"/"+rel, src)
			return nil
		})
	}
	scores, err := eval.Run(context.Background(), scenarios, eval.Engine{Offline: compare})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scores {
		// Every error is a workspace that could not be prepared or read:
		// the comparison itself fails t, and nothing writes.
		if sc.Err != "" {
			t.Errorf("%s: %s", sc.Scenario, sc.Err)
		}
	}
	if len(scenarios) < 20 || files < 250 {
		t.Fatalf("compared %d files of %d scenarios; the corpus went missing", files, len(scenarios))
	}
	t.Logf("%d scenarios, %d memory files: same units", len(scenarios), files)
}
