package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/gate"
)

// BenchmarkCodexSessionScan: the session gate on a Codex home of 2,000
// rollouts (30 days, first lines of 24 KB as Codex writes its base
// instructions), 286 touched since the last dream. "codex-rule" reads the
// first line of those 100 to skip exec and sub-agent runs; "generic" is the
// mtime-only *.jsonl count. bench: go test -run '^$' -bench CodexSessionScan ./internal/host
func BenchmarkCodexSessionScan(b *testing.B) {
	root := b.TempDir()
	since := time.Now().Add(-24 * time.Hour)
	instructions := strings.Repeat("You are Codex, a coding agent. ", 800)
	for i := 0; i < 2000; i++ {
		day := time.Date(2026, 11, 1+i%30, 9, i%60, 0, 0, time.UTC)
		dir := filepath.Join(root, day.Format("2006"), day.Format("01"), day.Format("02"))
		os.MkdirAll(dir, 0o755)
		id := fmt.Sprintf("019ac3f2-7d1e-7a30-9c41-%012x", i)
		src := []string{`"cli"`, `"exec"`, `{"subagent":{"thread_spawn":{}}}`, `"vscode"`}[i%4]
		line := `{"timestamp":"x","type":"session_meta","payload":{"id":"` + id + `","cwd":"/r","source":` + src + `,"base_instructions":{"text":"` + instructions + `"}}}` + "\n"
		p := filepath.Join(dir, "rollout-"+day.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
		os.WriteFile(p, []byte(line+`{"type":"response_item"}`+"\n"), 0o644)
		mt := since.Add(-time.Hour)
		if i%7 == 0 {
			mt = since.Add(time.Hour)
		}
		os.Chtimes(p, mt, mt)
	}
	ctx := context.Background()
	rule := codexSessionRule(false)
	var n int
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			n, _ = gate.CountSessionsTouchedSince(ctx, root, since, "")
		}
		b.ReportMetric(float64(n), "sessions")
	})
	b.Run("codex-rule", func(b *testing.B) {
		for b.Loop() {
			n, _ = gate.CountSessions(ctx, root, since, rule, "")
		}
		b.ReportMetric(float64(n), "sessions")
	})
}
