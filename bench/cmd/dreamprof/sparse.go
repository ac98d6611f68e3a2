package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dreamkit/dream"
)

// sparseOneFileRunner is oneFileRunner on a sparse staging
// (dream.SparseWriter): it reads the file from Job.BaseDir and writes only
// it into the empty staging, so what is left is the pipeline's own cost of
// a one-file dream without a view of the memory.
type sparseOneFileRunner struct{ file string }

func (sparseOneFileRunner) WritesChangesOnly() bool { return true }

func (r sparseOneFileRunner) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	b, err := os.ReadFile(filepath.Join(job.BaseDir, filepath.FromSlash(r.file)))
	if err != nil {
		return dream.Outcome{}, err
	}
	b = append(b, []byte(fmt.Sprintf("- [Bench](bench.md) — touched at %s\n", time.Now().Format(time.RFC3339Nano)))...)
	p := filepath.Join(job.MemoryDir, filepath.FromSlash(r.file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return dream.Outcome{}, err
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return dream.Outcome{}, err
	}
	job.Progress(dream.Progress{Kind: dream.ProgressFileTouched, Path: r.file})
	return dream.Outcome{FilesTouched: []string{r.file}}, nil
}
