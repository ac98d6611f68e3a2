package settings

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dreamkit/dream/price"
)

// Ceilings bound what model dreams spend, per dream and across dreams, and
// price the models they run on (see package spend). A zero token ceiling
// is no ceiling; the money ceilings always have one.
type Ceilings struct {
	// MaxCostPerDream, MaxCostPerDay and MaxCostPerMonth are dollars.
	MaxCostPerDream, MaxCostPerDay, MaxCostPerMonth float64
	// MaxTokensPerDay and MaxTokensPerMonth count tokens as MaxTokens does;
	// 0 is no ceiling.
	MaxTokensPerDay, MaxTokensPerMonth int64
	// MaxRequestTokens caps the input of one model request: a memory that
	// does not fit is dreamed in parts.
	MaxRequestTokens int64
	// Prices are the user's model prices, over the built-in list.
	Prices map[string]price.Price
}

// The default ceilings. A dream on the default model over a memory of a
// few dozen files costs a few cents; the ceilings stop what is not that.
const (
	DefaultMaxCostPerDream  = 2.0
	DefaultMaxCostPerDay    = 10.0
	DefaultMaxCostPerMonth  = 100.0
	DefaultMaxRequestTokens = 100_000
)

// DefaultCeilings are the built-in ceilings, with no prices of the user's.
func DefaultCeilings() Ceilings {
	return Ceilings{MaxCostPerDream: DefaultMaxCostPerDream, MaxCostPerDay: DefaultMaxCostPerDay,
		MaxCostPerMonth: DefaultMaxCostPerMonth, MaxRequestTokens: DefaultMaxRequestTokens}
}

// Upper bounds of the ceilings: past them a value is a typo.
const (
	MaxCost          = 1_000_000.0
	MaxTokensCeiling = 1_000_000_000_000
	MaxRequestCap    = 10_000_000
	maxPrice         = 100_000.0
)

// ceilingSpecs are the keys of Ceilings, in `dream config`'s order.
func ceilingSpecs() []spec {
	return []spec{
		floatKey("max_cost_per_dream", "2", "dollars one model dream may spend (the estimate must fit, and the dream stops before it would cross it)", func(s *Settings) *float64 { return &s.MaxCostPerDream }),
		floatKey("max_cost_per_day", "10", "dollars model dreams may spend per calendar day, across every process (the ledger in the state dir)", func(s *Settings) *float64 { return &s.MaxCostPerDay }),
		floatKey("max_cost_per_month", "100", "dollars model dreams may spend per calendar month", func(s *Settings) *float64 { return &s.MaxCostPerMonth }),
		optionalTokensKey("max_tokens_per_day", "tokens model dreams may spend per calendar day; empty is no ceiling", func(s *Settings) *int64 { return &s.MaxTokensPerDay }),
		optionalTokensKey("max_tokens_per_month", "tokens model dreams may spend per calendar month; empty is no ceiling", func(s *Settings) *int64 { return &s.MaxTokensPerMonth }),
		int64Key("max_request_tokens", "100000", "input tokens of one model request; a memory that does not fit is dreamed in parts", func(s *Settings) *int64 { return &s.MaxRequestTokens }),
		pricesKey(),
	}
}

// optionalTokensKey is a token ceiling that is off unless set.
func optionalTokensKey(name, help string, field func(*Settings) *int64) spec {
	s := int64Key(name, "", help, field)
	s.format = func(st *Settings) string {
		if v := *field(st); v > 0 {
			return strconv.FormatInt(v, 10)
		}
		return ""
	}
	return s
}

var errPrices = errors.New(`must be a table of models, set in a config file: [prices."MODEL"] with input and output (and cache_read, cache_write), dollars per million tokens, each a finite number >= 0`)

// pricesKey is the prices table: each model's rates, merged over the
// lower layers' (a later file prices a model again, or adds one).
func pricesKey() spec {
	field := func(s *Settings) *map[string]price.Price { return &s.Prices }
	return spec{
		Key: Key{Name: "prices", Default: "", Help: `model prices, dollars per million tokens, over the built-in list: [prices."MODEL"] input, output, cache_read, cache_write (a TOML table; 0 and 0 prices a free local model)`},
		apply: func(s *Settings, r raw, _ string) error {
			if r.table == nil {
				return errPrices
			}
			merged := make(map[string]price.Price, len(*field(s))+len(r.table))
			for k, v := range *field(s) {
				merged[k] = v
			}
			for model, v := range r.table {
				p, err := parsePrice(v)
				if err != nil {
					return fmt.Errorf("%q: %w", model, err)
				}
				merged[model] = p
			}
			*field(s) = merged
			return nil
		},
		reset: func(dst, src *Settings) {
			m := make(map[string]price.Price, len(src.Prices))
			for k, v := range src.Prices {
				m[k] = v
			}
			dst.Prices = m
		},
		format: func(s *Settings) string {
			models := make([]string, 0, len(s.Prices))
			for m := range s.Prices {
				models = append(models, m)
			}
			sort.Strings(models)
			out := make([]string, 0, len(models))
			for _, m := range models {
				p := s.Prices[m]
				out = append(out, fmt.Sprintf("%s: %s in, %s out, %s cache read, %s cache write", m,
					formatFloat(p.Input), formatFloat(p.Output), formatFloat(p.CacheRead), formatFloat(p.CacheWrite)))
			}
			return strings.Join(out, "; ")
		},
	}
}

// parsePrice reads one model's table: input and output are required,
// cache_read and cache_write default to input (no discount assumed).
func parsePrice(v any) (price.Price, error) {
	t, ok := v.(map[string]any)
	if !ok {
		return price.Price{}, errPrices
	}
	var p price.Price
	seen := map[string]bool{}
	for k, x := range t {
		var f float64
		switch n := x.(type) {
		case int64:
			f = float64(n)
		case float64:
			f = n
		default:
			return p, fmt.Errorf("%s: %w", k, errPrices)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > maxPrice {
			return p, fmt.Errorf("%s = %v: %w", k, x, errPrices)
		}
		switch k {
		case "input":
			p.Input = f
		case "output":
			p.Output = f
		case "cache_read":
			p.CacheRead = f
		case "cache_write":
			p.CacheWrite = f
		default:
			return p, fmt.Errorf("unknown field %q: %w", k, errPrices)
		}
		seen[k] = true
	}
	if !seen["input"] || !seen["output"] {
		return p, fmt.Errorf("input and output are required: %w", errPrices)
	}
	if !seen["cache_read"] {
		p.CacheRead = p.Input
	}
	if !seen["cache_write"] {
		p.CacheWrite = p.Input
	}
	return p, nil
}

// ceilingRanges are the ceilings' upper bounds.
var ceilingRanges = map[string]func(s *Settings) error{
	"max_cost_per_dream": func(s *Settings) error { return atMost(s.MaxCostPerDream <= MaxCost, "1000000 dollars") },
	"max_cost_per_day":   func(s *Settings) error { return atMost(s.MaxCostPerDay <= MaxCost, "1000000 dollars") },
	"max_cost_per_month": func(s *Settings) error { return atMost(s.MaxCostPerMonth <= MaxCost, "1000000 dollars") },
	"max_tokens_per_day": func(s *Settings) error {
		return atMost(s.MaxTokensPerDay <= MaxTokensCeiling, fmt.Sprint(int64(MaxTokensCeiling)))
	},
	"max_tokens_per_month": func(s *Settings) error {
		return atMost(s.MaxTokensPerMonth <= MaxTokensCeiling, fmt.Sprint(int64(MaxTokensCeiling)))
	},
	"max_request_tokens": func(s *Settings) error { return atMost(s.MaxRequestTokens <= MaxRequestCap, fmt.Sprint(MaxRequestCap)) },
}

// ceilingRules are the ceilings an untrusted project file may lower: a
// repository may make dreams cheaper, never dearer. A token ceiling that
// is off (0) is lowered by any value.
var ceilingRules = map[string]tightens{
	"max_cost_per_dream": func(f, p *Settings) bool { return p.MaxCostPerDream <= f.MaxCostPerDream },
	"max_cost_per_day":   func(f, p *Settings) bool { return p.MaxCostPerDay <= f.MaxCostPerDay },
	"max_cost_per_month": func(f, p *Settings) bool { return p.MaxCostPerMonth <= f.MaxCostPerMonth },
	"max_tokens_per_day": func(f, p *Settings) bool { return f.MaxTokensPerDay == 0 || p.MaxTokensPerDay <= f.MaxTokensPerDay },
	"max_tokens_per_month": func(f, p *Settings) bool {
		return f.MaxTokensPerMonth == 0 || p.MaxTokensPerMonth <= f.MaxTokensPerMonth
	},
	"max_request_tokens": func(f, p *Settings) bool { return p.MaxRequestTokens <= f.MaxRequestTokens },
}
