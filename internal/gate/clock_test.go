package gate

import (
	"math"
	"testing"
	"time"
)

func TestHoursDuration(t *testing.T) {
	tests := []struct {
		hours float64
		want  time.Duration
	}{
		{24, 24 * time.Hour},
		{0.5, 30 * time.Minute},
		{0, 0},
		{-3, 0},
		{math.NaN(), 0},
		{2_562_047, 2_562_047 * time.Hour},
		{2_562_048, math.MaxInt64},
		{2.6e6, math.MaxInt64},
		{1e300, math.MaxInt64},
		{math.Inf(1), math.MaxInt64},
	}
	for _, tt := range tests {
		if got := HoursDuration(tt.hours); got != tt.want {
			t.Errorf("HoursDuration(%g) = %v, want %v", tt.hours, got, tt.want)
		}
	}
}

// TestHoursDurationMonotone is the property the time gate relies on: more
// hours never give a shorter Duration, and never a negative one.
func TestHoursDurationMonotone(t *testing.T) {
	prev := time.Duration(0)
	for h := 1.0; h < 1e30; h *= 1.37 {
		d := HoursDuration(h)
		if d < prev || d < 0 {
			t.Fatalf("HoursDuration(%g) = %v after %v", h, d, prev)
		}
		prev = d
	}
}

func TestSessionsSince(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		last, want time.Time
	}{
		{"past", now.Add(-30 * time.Hour), now.Add(-30 * time.Hour)},
		{"never", time.Time{}, time.Time{}},
		{"within skew", now.Add(30 * time.Second), now.Add(30 * time.Second)},
		{"future", now.Add(72 * time.Hour), time.Time{}},
	}
	for _, tt := range tests {
		if got := SessionsSince(now, tt.last); !got.Equal(tt.want) {
			t.Errorf("%s: SessionsSince = %v, want %v", tt.name, got, tt.want)
		}
	}
}
