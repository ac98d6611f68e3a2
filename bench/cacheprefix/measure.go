package main

import (
	"encoding/json"
	"fmt"

	"github.com/dreamkit/dream/llm"
)

// serialize lays a request out in the order a provider's prompt cache reads
// it: tool definitions, then the system prompt, then the messages. Two
// requests share a cache entry for exactly their common prefix in this order.
func serialize(req *llm.Request) ([]byte, error) {
	toolsJSON, err := json.Marshal(req.Tools)
	if err != nil {
		return nil, fmt.Errorf("encoding tools: %w", err)
	}
	msgsJSON, err := json.Marshal(req.Messages)
	if err != nil {
		return nil, fmt.Errorf("encoding messages: %w", err)
	}
	out := make([]byte, 0, len(toolsJSON)+len(req.System)+len(msgsJSON))
	out = append(out, toolsJSON...)
	out = append(out, req.System...)
	return append(out, msgsJSON...), nil
}

// commonPrefix is the number of leading bytes a and b share.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// pair is the reuse between one request and the next.
type pair struct {
	Request int     // 1-based index of the later request
	Prev    int     // bytes of the earlier request
	Cur     int     // bytes of the later request
	Common  int     // bytes of their common prefix
	OfPrev  float64 // Common/Prev: share of what was sent before that is re-sent unchanged (cacheable)
	OfCur   float64 // Common/Cur: share of the new request that could be read from cache
}

// prefixReuse measures every consecutive pair of serialised requests.
func prefixReuse(reqs [][]byte) []pair {
	var out []pair
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1], reqs[i]
		c := commonPrefix(prev, cur)
		p := pair{Request: i + 1, Prev: len(prev), Cur: len(cur), Common: c}
		if len(prev) > 0 {
			p.OfPrev = float64(c) / float64(len(prev))
		}
		if len(cur) > 0 {
			p.OfCur = float64(c) / float64(len(cur))
		}
		out = append(out, p)
	}
	return out
}

// means averages the two ratios over pairs.
func means(ps []pair) (ofPrev, ofCur float64) {
	if len(ps) == 0 {
		return 0, 0
	}
	for _, p := range ps {
		ofPrev += p.OfPrev
		ofCur += p.OfCur
	}
	return ofPrev / float64(len(ps)), ofCur / float64(len(ps))
}
