package settings

import (
	"strings"
	"testing"

	"github.com/dreamkit/dream/price"
)

// TestPrices: the user file prices models over the built-in list; the
// cache rates default to the input rate; a bad table is refused whole
// with a warning naming the model, and the environment cannot set it.
func TestPrices(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", `max_cost_per_day = 3.5

[prices."llama3"]
input = 0
output = 0

[prices."claude-sonnet-4-6"]
input = 2
output = 10
cache_read = 0.2
`)
	l, err := Load(Inputs{UserFile: user, Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]price.Price{"llama3": {}, "claude-sonnet-4-6": {Input: 2, Output: 10, CacheRead: 0.2, CacheWrite: 2}}
	if len(l.Settings.Prices) != 2 || l.Settings.Prices["llama3"] != want["llama3"] || l.Settings.Prices["claude-sonnet-4-6"] != want["claude-sonnet-4-6"] {
		t.Errorf("prices = %+v, want %+v", l.Settings.Prices, want)
	}
	if l.Settings.MaxCostPerDay != 3.5 || l.Source["prices"] != "user file "+user || len(l.Warnings) != 0 {
		t.Errorf("max_cost_per_day %v, prices from %q, warnings %q", l.Settings.MaxCostPerDay, l.Source["prices"], l.Warnings)
	}

	for _, bad := range []string{
		"[prices.\"x\"]\ninput = -1\noutput = 1\n",
		"[prices.\"x\"]\ninput = 1\n",
		"[prices.\"x\"]\ninput = 1\noutput = 1\ncache = 1\n",
		"[prices.\"x\"]\ninput = \"cheap\"\noutput = 1\n",
		"prices = 3\n",
	} {
		user := writeFile(t, dir, "bad.toml", bad)
		l, err := Load(Inputs{UserFile: user, Home: dir})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Settings.Prices) != 0 || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "prices") {
			t.Errorf("%q: prices %+v, warnings %q", bad, l.Settings.Prices, l.Warnings)
		}
	}
	env := func(k string) (string, bool) { return map[string]string{"DREAM_PRICES": "x=1"}[k], k == "DREAM_PRICES" }
	l, err = Load(Inputs{Env: env, Home: dir})
	if err != nil || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "config file") {
		t.Errorf("DREAM_PRICES: %v, warnings %q", err, l.Warnings)
	}
}

// TestCeilingBounds: the ceilings are numbers > 0 with an upper bound,
// like every numeric key.
func TestCeilingBounds(t *testing.T) {
	for key, val := range map[string]string{
		"max_cost_per_dream": "0", "max_cost_per_day": "-1", "max_cost_per_month": "1e7",
		"max_tokens_per_day": "1.5", "max_tokens_per_month": "1e13", "max_request_tokens": "1e8",
	} {
		env := func(k string) (string, bool) {
			if k == EnvVar(key) {
				return val, true
			}
			return "", false
		}
		l, err := Load(Inputs{Env: env, Home: "/h"})
		if err != nil || len(l.Warnings) != 1 || l.Source[key] != "default" {
			t.Errorf("%s = %s: %v, source %q, warnings %q", key, val, err, l.Source[key], l.Warnings)
		}
	}
}
