package settings

import (
	"math"
	"testing"
	"time"
)

// TestFillZeros: what a host left zero (or NaN) gets its default; what it
// set stays; a job's zero session gate stays open.
func TestFillZeros(t *testing.T) {
	def := DreamDefaults()
	var d Dream
	d.MinHours = math.NaN()
	d.Timeout = -time.Second
	d.MaxCostPerDay = 3
	d.FillZeros(true)
	if d.MinHours != def.MinHours || d.MinSessions != def.MinSessions || d.Timeout != def.Timeout ||
		d.MaxCostPerDream != def.MaxCostPerDream || d.MaxCostPerMonth != def.MaxCostPerMonth || d.MaxRequestTokens != def.MaxRequestTokens {
		t.Errorf("zeros not filled: %+v", d)
	}
	if d.MaxCostPerDay != 3 {
		t.Errorf("a set ceiling changed: %v", d.MaxCostPerDay)
	}
	var job Dream
	job.FillZeros(false)
	if job.MinSessions != 0 {
		t.Errorf("a job's session gate was closed: MinSessions %d", job.MinSessions)
	}
}
