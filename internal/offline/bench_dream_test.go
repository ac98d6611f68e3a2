package offline

import (
	"context"
	"time"
)

// benchDream is what the offline runner does in one dream: the fixes, with
// the Claude Code layout, and the leads from the same reading.
//
// The baseline figures were measured with this benchmark on the engine as
// it was before issue 8 (the commit that added the benchmark), with
// benchDream defined as that engine's runner did its work:
//
//	Run(ctx, Options{MemoryDir: dir, Now: now}); FindLeads(ctx, dir, "")
//
// workers is Options.Workers (0: one per processor).
func benchDream(ctx context.Context, dir string, now time.Time, workers int) error {
	_, err := Run(ctx, Options{MemoryDir: dir, Now: now, Layout: LayoutFor(""), Leads: true, Workers: workers})
	return err
}
