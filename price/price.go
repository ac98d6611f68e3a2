// Package price is what a model charges per token, and how money is
// shown. It is its own package, with nothing but the standard library
// beneath it, because the settings (which the hook's early start reads)
// hold the user's prices: package spend, which needs the model types,
// builds on it.
package price

import "fmt"

// Price is what a model charges, in US dollars per million tokens: plain
// input, output, input read from the prompt cache, and input written to
// it (Anthropic charges cache writes above plain input; OpenAI caches for
// free and reports no writes).
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

// Cost is what these token counts cost at p.
func (p Price) Cost(input, output, cacheRead, cacheWrite int64) float64 {
	return (float64(input)*p.Input + float64(output)*p.Output + float64(cacheRead)*p.CacheRead + float64(cacheWrite)*p.CacheWrite) / 1e6
}

// MaxInput is the most one input token can cost: the price of input that
// is not read from the cache.
func (p Price) MaxInput() float64 { return max(p.Input, p.CacheWrite, p.CacheRead) }

// String prints the four rates.
func (p Price) String() string {
	return fmt.Sprintf("input %s, output %s, cache read %s, cache write %s per million tokens",
		Dollars(p.Input), Dollars(p.Output), Dollars(p.CacheRead), Dollars(p.CacheWrite))
}

// Dollars prints an amount of money: $0.0042, $0.31, $12.50.
func Dollars(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.01:
		return fmt.Sprintf("$%.4f", usd)
	case usd < 100:
		return fmt.Sprintf("$%.2f", usd)
	}
	return fmt.Sprintf("$%.0f", usd)
}
