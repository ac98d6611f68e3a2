package dream

import (
	"github.com/dreamkit/dream/internal/lossguard"
)

// memoryBefore reads the memory as it is when the dream starts, before the
// runner runs. The loss guard compares the staging dir with this snapshot,
// not with the live memory dir: a user may edit memory while a dream runs
// (the commit merges those edits), and an edit of theirs must never look
// like a loss of the dream's.
func (d *Dreamer) memoryBefore() (lossguard.Tree, error) {
	return lossguard.ReadTree(d.cfg.MemoryDir)
}

// guardLoss runs the loss guard on a finished runner's staging dir against
// the memory as it was when the dream started (before). It fails a strict
// runner that changed a unit it did not record, and holds a dream that
// would lose too much for review (held is true); a dream that changed
// nothing is summarised as "no changes", whatever its model said.
func (d *Dreamer) guardLoss(rep *Report, out Outcome, before lossguard.Tree, stagedDir string) (held bool, err error) {
	after, err := lossguard.ReadTree(stagedDir)
	if err != nil {
		return false, err
	}
	v := lossguard.Check(before, after, lossguard.Options{Strict: out.Strict, Records: out.lossRecords(), MaxLoss: d.cfg.Settings.MaxLoss})
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
