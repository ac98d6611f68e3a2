package runner

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/offline"
)

// auditDepth is how many recorded changes the audit provenance reads back.
const auditDepth = 50

// auditProvenance tells the offline engine on which day a line was written
// from the audit history: a line first seen in a recorded version, when the
// previous record of the memory was made the same day, was written that
// day. The history is read only when a relative date has no other anchor,
// and each file's versions once.
type auditProvenance struct {
	ctx  context.Context
	hist *audit.History

	once    sync.Once
	entries []audit.Entry // oldest first
	files   map[string]*offline.History
}

func newAuditProvenance(ctx context.Context, stateDir, memoryDir string) *auditProvenance {
	if stateDir == "" || memoryDir == "" {
		return nil
	}
	h, err := audit.Open(ctx, stateDir, memoryDir)
	if err != nil {
		return nil // no history: no anchor from it, never a failed dream
	}
	return &auditProvenance{ctx: ctx, hist: h, files: map[string]*offline.History{}}
}

// WrittenOn implements offline.Provenance.
func (p *auditProvenance) WrittenOn(rel, line string) (time.Time, bool) {
	if p == nil {
		return time.Time{}, false
	}
	p.once.Do(func() {
		es, err := p.hist.Log(p.ctx, auditDepth)
		if err == nil {
			slices.Reverse(es)
			p.entries = es
		}
	})
	h, ok := p.files[rel]
	if !ok {
		var vs []offline.Version
		for i, e := range p.entries {
			if !touches(e, rel) {
				continue
			}
			data, err := p.hist.FileAt(p.ctx, e.Commit, rel)
			if err != nil {
				continue
			}
			v := offline.Version{At: e.StartedAt, Content: data}
			if i > 0 {
				v.Since = p.entries[i-1].StartedAt
			}
			vs = append(vs, v)
		}
		h = offline.NewHistory(map[string][]offline.Version{rel: vs})
		p.files[rel] = h
	}
	return h.WrittenOn(rel, line)
}

func touches(e audit.Entry, rel string) bool {
	for _, f := range e.Files {
		if f.Path == rel && f.Status != "deleted" {
			return true
		}
	}
	return false
}
