package early

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/cmd/dream/internal/gatestamp"
)

// TestMaybeStampRepeatsItsAnswer: what the early start hands a gate stamp
// to record, answered again later, is byte for byte what the early start
// itself prints then, as text and as JSON, in the zone TZ names.
func TestMaybeStampRepeatsItsAnswer(t *testing.T) {
	start := time.Now()
	for _, tc := range []struct {
		name string
		json bool
		tz   string // "" leaves TZ unset
	}{
		{name: "text"},
		{name: "json", json: true},
		{name: "TZ empty (UTC)", tz: "="},
		{name: "TZ a zone file", tz: "/usr/share/zoneinfo/Asia/Shanghai"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlace(t, start)
			if tc.tz == "=" {
				p.env["TZ"] = ""
			} else if tc.tz != "" {
				if _, err := os.Stat(tc.tz); err != nil {
					t.Skip("no zone file:", err)
				}
				p.env["TZ"] = tc.tz
			}
			args := append([]string{"maybe"}, p.loc()...)
			if tc.json {
				args = append(args, "--json")
			}
			var first bytes.Buffer
			done, st := maybe(args, nil, &first, p.lookup, func() time.Time { return start })
			if !done || st == nil {
				t.Fatalf("done %v, stamp %v", done, st)
			}
			zone := false
			for _, in := range st.Inputs {
				zone = zone || in.Path == "/etc/localtime" || in.Path == tc.tz
			}
			if zone != (tc.tz != "=") {
				t.Fatalf("inputs %+v: zone file among them %v", st.Inputs, zone)
			}
			gates := filepath.Join(t.TempDir(), "gate")
			key := gatestamp.Key{Exe: "dream", Cwd: p.repo, Args: args, Environ: []string{"HOME=" + p.home}}
			// The place's files were just made: start the decision later
			// than the racy margin instead of waiting for them to age.
			if err := gatestamp.Record(gates, key, st.Decision, time.Now().Add(gatestamp.RacyMargin+time.Second)); err != nil {
				t.Fatal(err)
			}
			for _, later := range []time.Duration{0, time.Minute, 3*time.Hour + 7*time.Minute, 21*time.Hour + 59*time.Minute} {
				now := start.Add(later)
				var want bytes.Buffer
				if !Maybe(args, nil, &want, p.lookup, func() time.Time { return now }) {
					t.Fatalf("+%v: the early start did not answer", later)
				}
				got, ok := gatestamp.Answer(gates, key, now)
				if !ok || string(got) != want.String() {
					t.Fatalf("+%v: stamp %q (%v), early start %q", later, got, ok, want.String())
				}
			}
			if got, ok := gatestamp.Answer(gates, key, start.Add(22*time.Hour+time.Second)); ok {
				t.Fatalf("the gate opened (24h after the last consolidation 2h before start), the stamp answered %q", got)
			}
		})
	}
}

// TestMaybeStampsOnlyWhatFilesDecide: no stamp where the answer depends on
// more than the files a stamp compares, though the early start answers.
func TestMaybeStampsOnlyWhatFilesDecide(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name  string
		setup func(t *testing.T, p *place) []string
	}{
		{"--hook: the answer depends on stdin", func(t *testing.T, p *place) []string {
			return append([]string{"maybe", "--hook"}, p.loc()...)
		}},
		{"a zone looked up by name", func(t *testing.T, p *place) []string {
			p.env["TZ"] = "Europe/Paris"
			return append([]string{"maybe"}, p.loc()...)
		}},
		{"a live holder in the lock (its liveness is no file)", func(t *testing.T, p *place) []string {
			lock := filepath.Join(p.mem, ".consolidate-lock")
			write(t, lock, strconv.Itoa(os.Getpid())+"\n")
			last := now.Add(-10 * time.Minute) // younger than the lock's stale age
			if err := os.Chtimes(lock, last, last); err != nil {
				t.Fatal(err)
			}
			return append([]string{"maybe"}, p.loc()...)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlace(t, now)
			args := tc.setup(t, p)
			var out bytes.Buffer
			done, st := maybe(args, strings.NewReader(""), &out, p.lookup, func() time.Time { return now })
			if !done || !strings.Contains(out.String(), "time gate is closed") {
				t.Fatalf("done %v: %q; want the early start's answer", done, out.String())
			}
			if st != nil {
				t.Fatalf("stamp %+v, want none", *st)
			}
		})
	}
}
