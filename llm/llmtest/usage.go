package llmtest

import (
	"bytes"
	"encoding/json"

	"github.com/dreamkit/dream/llm"
)

// bytesPerToken is the rough size of a token in JSON-heavy English; the
// synthesised counts only need to be plausible and deterministic.
const bytesPerToken = 4

// canonicalPrompt serialises the prompt parts in the order a provider's
// prompt cache reads them, with cache_control markers removed (they move to
// the newest message on every request and are not part of the content) and
// object keys sorted, so that an unchanged prefix compares byte-equal.
func canonicalPrompt(parts ...json.RawMessage) []byte {
	var buf bytes.Buffer
	for _, p := range parts {
		if len(p) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(p, &v); err != nil {
			buf.Write(p)
			continue
		}
		b, err := json.Marshal(stripCacheControl(v))
		if err != nil {
			buf.Write(p)
			continue
		}
		buf.Write(b)
	}
	return buf.Bytes()
}

func stripCacheControl(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "cache_control")
		for k, e := range x {
			x[k] = stripCacheControl(e)
		}
	case []any:
		for i, e := range x {
			x[i] = stripCacheControl(e)
		}
	}
	return v
}

// synthInput estimates the input side of usage: the whole prompt in tokens,
// of which the prefix shared with the previous request is read from cache.
// On Anthropic, a request that carries cache_control writes the rest to the
// cache; without it, and always on OpenAI, the rest is plain input.
func synthInput(proto string, prev, cur []byte, hasCacheControl bool) llm.Usage {
	total := max(int64((len(cur)+bytesPerToken-1)/bytesPerToken), 1)
	read := min(int64(commonPrefix(prev, cur)/bytesPerToken), total)
	u := llm.Usage{CacheReadInputTokens: read}
	if proto == ProtocolAnthropic && hasCacheControl {
		u.CacheCreationInputTokens = total - read
	} else {
		u.InputTokens = total - read
	}
	return u
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// outputTokens estimates the output of a turn from its text and calls.
func outputTokens(t Turn) int64 {
	n := len(t.Text)
	for _, c := range t.Calls {
		args, _ := c.arguments()
		n += len(c.Name) + len(args)
	}
	return int64(n/bytesPerToken) + 1
}
