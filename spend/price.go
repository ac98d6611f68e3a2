// Package spend is what a model dream costs: the price of each model, the
// estimate of a dream before it starts, and the ledger in the state dir
// that every dream, whichever process runs it, reserves its estimate in
// before it sends anything and settles with what it spent, so that the
// ceilings per dream, per day and per month hold across processes.
//
// It links no model SDK and no tokenizer: the runner counts what a dream
// will send (its prompts, tools, the memory it reads); this package turns
// those counts into requests, tokens and money, and keeps the books.
package spend

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/price"
)

// Price is what a model charges, in dollars per million tokens.
type Price = price.Price

// USD is what usage u costs at p.
func USD(p Price, u llm.Usage) float64 {
	return p.Cost(u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
}

// DefaultPrices are the list prices, in dollars per million tokens, of the
// models dream names as defaults and of their current siblings, as the
// providers publish them (Anthropic: input, output, cache hits, 5-minute
// cache writes; OpenAI: input, output, cached input). They change: the
// user's config overrides and extends them ([prices."MODEL"]).
var DefaultPrices = map[string]Price{
	"claude-opus-4-6":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"claude-sonnet-4-6": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.5, CacheWrite: 2},
	"gpt-4.1-mini":      {Input: 0.4, Output: 1.6, CacheRead: 0.1, CacheWrite: 0.4},
	"gpt-4.1-nano":      {Input: 0.1, Output: 0.4, CacheRead: 0.025, CacheWrite: 0.1},
	"gpt-4o":            {Input: 2.5, Output: 10, CacheRead: 1.25, CacheWrite: 2.5},
	"gpt-4o-mini":       {Input: 0.15, Output: 0.6, CacheRead: 0.075, CacheWrite: 0.15},
	"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25},
	"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025, CacheWrite: 0.25},
}

// datedSuffix is the snapshot date a provider appends to a model name
// (claude-sonnet-4-5-20250929, gpt-4o-2024-08-06): the same price as the
// alias.
var datedSuffix = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// Lookup finds model's price: in table (the user's), then in
// DefaultPrices, by its exact name and then without a snapshot date. ok
// is false for a model neither knows: a model dream on it is refused
// until the user prices it (a zero price included, for a local model).
func Lookup(model string, table map[string]Price) (p Price, from string, ok bool) {
	names := []string{model}
	if base := datedSuffix.ReplaceAllString(model, ""); base != model {
		names = append(names, base)
	}
	for _, n := range names {
		if p, ok := table[n]; ok {
			return p, "your price for " + n, true
		}
	}
	for _, n := range names {
		if p, ok := DefaultPrices[n]; ok {
			return p, "the list price of " + n, true
		}
	}
	return Price{}, "", false
}

// UnpricedError refuses a model dream on a model with no price: dream
// cannot say what it will cost, so it does not start.
type UnpricedError struct{ Model string }

func (e *UnpricedError) Error() string {
	if e.Model == "" {
		return "the model dream names no model, so dream cannot price it: name one (--model, model in config.toml, or the runner's Model)"
	}
	// No figures are suggested: a number pasted from here would price the
	// model as whatever it named, and every dollar ceiling would then hold
	// a multiple of what it says.
	return fmt.Sprintf("no price for model %q, so dream cannot say what a dream on it costs: add its provider's list prices to your config.toml\n"+
		"  [prices.%q]\n  input = ...    # dollars per million input tokens\n  output = ...   # and output tokens (cache_read, cache_write too); 0 and 0 for a free local model\n"+
		"known models: %s", e.Model, e.Model, strings.Join(KnownModels(), ", "))
}

// Is makes errors.Is(err, ErrOverBudget) true: an unpriced model is a
// dream that does not start for want of a budget.
func (e *UnpricedError) Is(target error) bool { return target == ErrOverBudget }

// KnownModels lists the models DefaultPrices prices, sorted.
func KnownModels() []string {
	out := make([]string, 0, len(DefaultPrices))
	for m := range DefaultPrices {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Dollars prints an amount of money: $0.0042, $0.31, $12.50.
func Dollars(usd float64) string { return price.Dollars(usd) }
