package eval

import "github.com/dreamkit/dream/internal/memory"

// The index limits are counted as the host agent counts them: the eval
// fails a dream that leaves the index past what the agent loads, so it
// must count what the agent would load, not what looks right here.
//
// This is the one seam for that rule: indexSize and indexLimits are what
// every check in this package asks (the index_max_lines and
// index_max_bytes expectations, and the budget every scenario is scored
// on). Today they are memory.LoadedSize and memory's budget for every
// host; when internal/host knows each agent's own rule (its lines and
// bytes, which lines count, front matter and comments), these two
// functions take it from there by host name and nothing else changes.

// indexSize is the index src as host counts it: lines and bytes.
func indexSize(host string, src []byte) (lines, bytes int) { return memory.LoadedSize(src) }

// indexLimits is what host loads of an index: lines and bytes.
func indexLimits(host string) (lines, bytes int) { return memory.MaxIndexLines, memory.MaxIndexBytes }

// indexFits reports whether the index src is within what host loads.
func indexFits(host string, src []byte) bool {
	l, b := indexSize(host, src)
	ml, mb := indexLimits(host)
	return l <= ml && b <= mb
}
