package spend

import (
	"fmt"

	"github.com/dreamkit/dream/llm"
)

// Amount is tokens and money: what a dream may spend, is expected to, or
// did. Tokens counts as llm.Usage.Total does (input, output, cache reads
// and writes), the unit of max_tokens.
type Amount struct {
	Tokens int64   `json:"tokens"`
	USD    float64 `json:"usd"`
}

// Add returns a + b.
func (a Amount) Add(b Amount) Amount { return Amount{Tokens: a.Tokens + b.Tokens, USD: a.USD + b.USD} }

// String prints "12.3k tokens, $0.04".
func (a Amount) String() string {
	return fmt.Sprintf("%s tokens, %s", Count(a.Tokens), Dollars(a.USD))
}

// AmountOf is what usage u costs at p.
func AmountOf(u llm.Usage, p Price) Amount { return Amount{Tokens: u.Total(), USD: USD(p, u)} }

// Estimate is what a model dream is expected to cost, computed before it
// starts from what it will send.
type Estimate struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model"`
	// Requests is the number of model requests planned, over every part.
	Requests int `json:"requests"`
	// Parts is how many bounded sub-runs the dream is split into (1 for a
	// memory that fits one context).
	Parts int `json:"parts"`
	// Usage is the expected tokens by kind.
	Usage llm.Usage `json:"usage"`
	// Amount is Usage in tokens and, at Price, in dollars.
	Amount
	// Price is the model's price the money was computed at, and PriceFrom
	// where it came from.
	Price     Price  `json:"price"`
	PriceFrom string `json:"price_from,omitempty"`
	// Basis says what the estimate counted, in words.
	Basis string `json:"basis"`
}

// Priced fills Amount from Usage at p.
func (e *Estimate) Priced(p Price, from string) {
	e.Price, e.PriceFrom = p, from
	e.Amount = AmountOf(e.Usage, p)
}

// String is a one-line account: "about 31k tokens, $0.05 (4 requests ...)".
func (e Estimate) String() string {
	parts := ""
	if e.Parts > 1 {
		parts = fmt.Sprintf(" in %d parts", e.Parts)
	}
	return fmt.Sprintf("about %s (%d request(s)%s with %s: %s in, %s out, %s read from cache, %s written to it)",
		e.Amount, e.Requests, parts, e.Model, Count(e.Usage.InputTokens), Count(e.Usage.OutputTokens),
		Count(e.Usage.CacheReadInputTokens), Count(e.Usage.CacheCreationInputTokens))
}

// Turn is one request of a planned dream after the first: what the model
// answered to the previous request (Output) and what the tools gave back
// (Results), in tokens, both of which the next request carries.
type Turn struct {
	Output, Results int64
}

// Simulate plays a dream's requests as the agent loop sends them: the first
// carries first tokens (tools, system prompt, task), of which shared are
// still in the provider's cache from an earlier request (the tools and the
// system prompt, for every part after the first); each later request
// re-sends the one before it unchanged, which the provider reads from its
// cache, and adds the previous answer and its tool results, which it
// writes to the cache (Anthropic, writes means creates: cache_control) or
// takes as plain input (OpenAI, writes false). last is the output of the
// final request, the summary. It returns the usage and the number of
// requests, and the largest request's input.
func Simulate(first, shared int64, turns []Turn, last int64, writes bool) (u llm.Usage, requests int, largest int64) {
	in := func(read, fresh int64) {
		u.CacheReadInputTokens += read
		if writes {
			u.CacheCreationInputTokens += fresh
		} else {
			u.InputTokens += fresh
		}
		largest = max(largest, read+fresh)
		requests++
	}
	prev := first
	in(min(shared, first), first-min(shared, first))
	for _, t := range turns {
		u.OutputTokens += t.Output
		next := prev + t.Output + t.Results
		in(prev, next-prev)
		prev = next
	}
	u.OutputTokens += last
	return u, requests, largest
}

// Count renders a token count compactly: 950, 1.5k, 12k, 3.2M.
func Count(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}
