package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/offline"
)

// TestContradictionsAreRepositoryPaths: only a drift lead the repository
// can contradict is evidence for changing the value: a file, or a path
// under one of its directories. A path under none (a Vault path) or an
// identifier (a feature flag) is a lead, never a contradiction (they once
// let a model rewrite a Vault path with no evidence).
func TestContradictionsAreRepositoryPaths(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "internal"), 0o755); err != nil {
		t.Fatal(err)
	}
	leads := offline.Leads{DriftSuspects: []offline.Suspect{
		{File: "code.md", Line: 3, Mention: "internal/cfg/load.go", Kind: "path"},
		{File: "ops.md", Line: 5, Mention: "secret/data/app/prod", Kind: "path"},
		{File: "code.md", Line: 7, Mention: "loader.go", Kind: "file"},
		{File: "flags.md", Line: 2, Mention: "new_checkout", Kind: "identifier"},
	}}
	var got []string
	for _, c := range contradictions(leads, repo) {
		got = append(got, c.Value)
	}
	if strings.Join(got, " ") != "internal/cfg/load.go loader.go" {
		t.Errorf("contradictions = %q, want the repository path and the file", got)
	}
	if n := len(contradictions(leads, "")); n != 0 {
		t.Errorf("with no repository, %d contradictions", n)
	}
}
