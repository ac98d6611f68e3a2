package dream

import (
	"github.com/dreamkit/dream/internal/lossguard"
)

// guardLoss runs the loss guard on a finished runner's staging dir against
// the memory as it was (the real memory dir, which a runner never writes).
// It fails a strict runner that changed a unit it did not record, and holds
// a dream that would lose too much for review (held is true); a dream that
// changed nothing is summarised as "no changes", whatever its model said.
func (d *Dreamer) guardLoss(rep *Report, out Outcome, stagedDir string) (held bool, err error) {
	before, err := lossguard.ReadTree(d.cfg.MemoryDir)
	if err != nil {
		return false, err
	}
	after, err := lossguard.ReadTree(stagedDir)
	if err != nil {
		return false, err
	}
	v := lossguard.Check(before, after, lossguard.Options{Strict: out.Strict, Records: out.Accounted, MaxLoss: d.cfg.Settings.MaxLoss})
	if err := v.Err(); err != nil {
		return false, err
	}
	if !v.Changed {
		rep.Summary = "no changes"
		return false, nil
	}
	if v.Hold {
		rep.Summary, rep.Review = v.Summary(), true
		return true, nil
	}
	return false, nil
}
