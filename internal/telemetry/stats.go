package telemetry

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/llm"
)

// Stats is what the events since a time add up to.
type Stats struct {
	Fired     int `json:"fired"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// Usage sums the tokens of the dreams that ended: completed (landed,
	// staged for review or dry runs) and failed.
	Usage llm.Usage `json:"usage"`
	// CacheHitRate is the hit rate of the summed usage, not a mean of rates,
	// so a big dream weighs more than a small one.
	CacheHitRate float64 `json:"cache_hit_rate"`
	// Malformed counts log lines that could not be read.
	Malformed int       `json:"malformed"`
	Since     time.Time `json:"since"`
	// Found sums what each job's completed runs found, by job and kind
	// (a health check's TODOs, outdated dependencies ...).
	Found map[string]map[string]int `json:"found,omitempty"`
}

// Summarize counts the events at or after since (all when since is zero).
// Unknown event names are ignored, so newer writers do not break old readers.
func Summarize(events []Event, since time.Time) Stats {
	s := Stats{Since: since}
	for _, e := range events {
		if !since.IsZero() && e.Time.Before(since) {
			continue
		}
		switch e.Name {
		case EventFired:
			s.Fired++
		case EventCompleted:
			s.Completed++
			if e.Usage != nil {
				s.Usage.Add(*e.Usage)
			}
			for k, n := range e.Found {
				if s.Found == nil {
					s.Found = map[string]map[string]int{}
				}
				if s.Found[e.Job] == nil {
					s.Found[e.Job] = map[string]int{}
				}
				s.Found[e.Job][k] += n
			}
		case EventFailed:
			s.Failed++
			if e.Usage != nil {
				s.Usage.Add(*e.Usage)
			}
		}
	}
	s.CacheHitRate = s.Usage.CacheHitRate()
	return s
}

// String is a one-line human summary, e.g.
// "fired:completed:failed 5:4:1 · tokens in 12k out 3k cache read 40k created 8k · hit rate 66.7%".
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fired:completed:failed %d:%d:%d", s.Fired, s.Completed, s.Failed)
	fmt.Fprintf(&b, " · tokens in %s out %s cache read %s created %s",
		count(s.Usage.InputTokens), count(s.Usage.OutputTokens),
		count(s.Usage.CacheReadInputTokens), count(s.Usage.CacheCreationInputTokens))
	fmt.Fprintf(&b, " · hit rate %.1f%%", s.CacheHitRate*100)
	jobs := make([]string, 0, len(s.Found))
	for j := range s.Found {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	for _, j := range jobs {
		kinds := make([]string, 0, len(s.Found[j]))
		for k := range s.Found[j] {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for i, k := range kinds {
			kinds[i] = fmt.Sprintf("%s %d", strings.ReplaceAll(k, "_", " "), s.Found[j][k])
		}
		fmt.Fprintf(&b, " · job %s found %s", j, strings.Join(kinds, ", "))
	}
	if !s.Since.IsZero() {
		fmt.Fprintf(&b, " · since %s", s.Since.UTC().Format(time.RFC3339))
	}
	if s.Malformed > 0 {
		fmt.Fprintf(&b, " · %d malformed line", s.Malformed)
		if s.Malformed > 1 {
			b.WriteString("s")
		}
		b.WriteString(" skipped")
	}
	return b.String()
}

// count renders a token count compactly: 950, 1.5k, 12k, 3.2M.
func count(n int64) string {
	if n < 1000 && n > -1000 {
		return strconv.FormatInt(n, 10)
	}
	f := float64(n)
	units := []string{"k", "M", "G", "T"}
	for i, u := range units {
		f /= 1000
		// Move up a unit once rounding would show 1000 (999_999 is "1M", not "1000k").
		if (f < 999.5 && f > -999.5) || i == len(units)-1 {
			return scaled(f) + u
		}
	}
	panic("unreachable")
}

// scaled formats with one decimal below 10 and none above, dropping ".0".
func scaled(f float64) string {
	prec := 0
	if f < 9.95 && f > -9.95 {
		prec = 1
	}
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', prec, 64), ".0")
}
