package evidence

import (
	"strings"
	"testing"
)

func TestValues(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		{"- Port: 8081", "8081/number"},
		{"## 2026-03-02", "2026-03-02/date"},
		{"The build moved to Go 1.26.", "Go/name 1.26/version"},
		{"Deploys go through ops/deploy.sh and `make deploy`.", "ops/deploy.sh/path make deploy/identifier"},
		{"See https://example.org/runbook for details.", "https://example.org/runbook/url"},
		{"Config is loaded by loadConfig in config_loader.go.", "loadConfig/identifier config_loader.go/path"},
		{"Page the on-call through PagerDuty, never by phone.", "PagerDuty/identifier"},
		{"Alice owns billing.", ""},
		{"billing is owned by Alice.", "Alice/name"},
		{"Set INTEGRATION=1 to run them.", "INTEGRATION=1/number"},
		{"- [Ops](ops.md) — how production is run", "ops.md/path"},
	}
	for _, tt := range tests {
		var got []string
		for _, v := range Values(tt.text) {
			got = append(got, v.Text+"/"+v.Kind)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("Values(%q) = %q, want %q", tt.text, strings.Join(got, " "), tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		old, new string
		want     string // "removed→added" or "negation" or ""
	}{
		{"- Port: 8082", "- Port: 8081", "8082→8081"},
		{"- Port: 8082", "- Port: 8081 (auth and billing)", "8082→8081"},
		{"- Port: 8081", "- Port: 8081 (auth and billing)", ""},
		{"## 2026-03-02", "## 2026-03-20", "2026-03-02→2026-03-20"},
		{"- Deployed yesterday.", "- Deployed on 2026-03-14.", ""}, // a resolved date adds a value, changes none
		{"Deploys go through the blue/green script.", "Deploy with the blue/green script.", ""},
		{"Always run migrations before a deploy.", "Never run migrations before a deploy.", "negation"},
		{"Do not use tabs in Go files.", "Use tabs in Go files.", "negation"},
		{"Don't page by phone.", "Never page by phone.", ""},
		{"- Replies in Chinese, short", "- Replies in Chinese, short; no emoji", ""}, // a new statement, not a negated one
		{"Enable the cache in CI.", "Disable the cache in CI.", "negation"},
		{"The owner is Alice.", "The owner is Bob.", "Alice→Bob"},
		{"Logs live in internal/log/log.go.", "Logs live in internal/logging/log.go.", "internal/log/log.go→internal/logging/log.go"},
		// A denial dropped while the sentence is reworded, and an absolute
		// dropped or weakened, turn what memory says however the words go.
		{"- Never commit `.env` files.", "- Commit `.env` files to the repo.", "negation"},
		{"Do not deploy while the on-call pager is active.", "Deploying while the on-call pager is active is fine.", "negation"},
		{"- CI does not run the integration tests; run them locally with `INTEGRATION=1`.", "- CI runs the integration tests with `INTEGRATION=1`.", "negation"},
		{"Deploy from the release branch; never deploy on Fridays.", "Deploy from the release branch.", "negation"},
		{"Never deploy on Fridays.", "Avoid deploying on Fridays if possible.", "negation"},
		{"Always rotate API keys after an incident.", "Rotate API keys after an incident if they were exposed.", "negation"},
		{"Don't use tabs.", "Do not use tabs in Go files.", ""}, // the same denial, reworded
		{"Deploy from main; never deploy on Fridays.\nAlways run `make migrate` first.\nDo not deploy while paged.", "Deploy from main; avoid deploying on Fridays.\nAlways run `make migrate` first.\nDo not deploy while paged.", "negation"},
		// A quantity is its number and its unit, however the unit is spelled.
		{"Backups are kept for 30 days.", "Backups are kept for 30 hours.", "30 days→30 hours"},
		{"Tokens expire after 15 minutes.", "Tokens expire after 15 hours.", "15 minutes→15 hours"},
		{"Tokens expire after 15 minutes.", "Tokens expire after 15 min.", ""},
		{"A 30-day retention.", "Retention: 30 days.", ""},
		{"Timeout is 500ms.", "Timeout is 500 ms.", ""},
	}
	for _, tt := range tests {
		c := Compare(tt.old, tt.new)
		got := ""
		switch {
		case c.Negation:
			got = "negation"
		case c.Changed():
			var r, a []string
			for _, v := range c.Removed {
				r = append(r, v.Text)
			}
			for _, v := range c.Added {
				a = append(a, v.Text)
			}
			got = strings.Join(r, ",") + "→" + strings.Join(a, ",")
		}
		if got != tt.want {
			t.Errorf("Compare(%q, %q) = %q, want %q", tt.old, tt.new, got, tt.want)
		}
	}
}

func TestJudge(t *testing.T) {
	transcript := `{"role":"user","content":"we moved the auth service to port 9091 yesterday"}` + "\n" +
		`{"role":"assistant","content":"Noted. From now on never run migrations by hand; the deploy job runs them."}`
	c := NewCorpus(
		[]Shown{{Tool: "read", Source: "sessions/a1.jsonl", Text: transcript}, {Tool: "read", Source: "repo/go.mod", Text: "module shop\n\ngo 1.26\n"}},
		[]Contradiction{{Value: "internal/cfg/load.go", Why: "the repository has no internal/cfg/load.go"}},
		[]Citation{
			{File: "auth.md", Source: "sessions/a1.jsonl", Quote: "moved the auth service to port 9091"},
			{File: "auth.md", Source: "sessions/a1.jsonl", Quote: "port 7777, trust me"}, // not in what was shown: dropped
		},
	)
	tests := []struct {
		file, old, new string
		path           []string
		ok             bool
		by             string
	}{
		{"auth.md", "- Port: 8081", "- Port: 9091", nil, true, "cited"},
		{"svc.md", "- Port: 8081", "- Port: 9091", nil, true, "shown"},
		{"auth.md", "- Port: 8081", "- Port: 7777", nil, false, ""},
		{"billing.md", "- Port: 8082", "- Port: 8081 (auth and billing)", nil, false, ""},
		{"build.md", "The build uses Go 1.24.", "The build uses Go 1.26.", nil, true, "shown"},
		{"code.md", "Config is read in internal/cfg/load.go.", "Config is read in internal/config/load.go.", nil, true, "contradicted"},
		{"log.md", "- Migrated on 2026-03-20.", "- Migrated on 2026-03-02.", []string{"Log", "2026-03-02"}, true, "dated heading"},
		{"log.md", "- Migrated on 2026-03-02.", "- Migrated on 2026-03-20.", []string{"Log", "2026-03-02"}, false, ""},
		{"log.md", "## 2026-03-02", "## 2026-03-20", []string{"Log"}, false, ""},
		{"ops.md", "Always run migrations by hand before a deploy.", "Never run migrations by hand before a deploy.", nil, true, "shown"},
		{"ops.md", "Never use tabs in Go files.", "Always use tabs in Go files.", nil, false, ""},
		{"ops.md", "Backups are kept for 35 days.", "Backups are kept for 35 days in the cold bucket.", nil, true, ""},
	}
	for _, tt := range tests {
		_, s, ok := c.Judge(tt.file, tt.old, tt.new, tt.path)
		if ok != tt.ok || s.By != tt.by {
			t.Errorf("Judge(%q → %q) = %v %+v, want %v by %q", tt.old, tt.new, ok, s, tt.ok, tt.by)
		}
	}
	if !c.Quoted("sessions/a1.jsonl", "moved the  auth service") || c.Quoted("repo/go.mod", "moved the auth service") {
		t.Error("Quoted does not check the source")
	}
}

func TestIndexToken(t *testing.T) {
	for _, tt := range []struct {
		text, v string
		want    bool
	}{
		{"listens on 18081", "8081", false},
		{"listens on 8081.", "8081", true},
		{"port=8081,", "8081", true},
		{"internal/config/load.go", "config/load.go", true}, // a path's tail names the file too,
		{"see internal/config/load.go", "internal/config/load.go", true},
		{"Go 1.26", "1.2", false},
	} {
		if got := indexToken(tt.text, tt.v) >= 0; got != tt.want {
			t.Errorf("indexToken(%q, %q) = %v", tt.text, tt.v, got)
		}
	}
}

// FuzzCompare: no text makes the value reader panic; a text compared with
// itself changes nothing; and a rewrite whose new text a tool showed
// verbatim is always supported: every new value is in what was shown.
func FuzzCompare(f *testing.F) {
	for _, s := range [][2]string{
		{"- Port: 8082", "- Port: 8081 (auth and billing)"},
		{"## 2026-03-02", "## 2026-03-20"},
		{"Never deploy on Fridays.", "Always deploy on Fridays."},
		{"See `cfg.Load()` in [cfg](internal/cfg/load.go).", "See `config.Load()` in internal/config/load.go"},
		{"- 部署前先跑 `make test`", "- 部署前不要跑 `make test`"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, old, new string) {
		if c := Compare(old, old); c.Changed() {
			t.Fatalf("Compare(%q, itself) = %+v", old, c)
		}
		c := Compare(old, new)
		if c.Negation {
			return // a negation is supported by a statement, not by values
		}
		corpus := NewCorpus([]Shown{{Tool: "read", Source: "s", Text: new}}, nil, nil)
		if _, s, ok := corpus.Judge("m.md", old, new, nil); !ok {
			t.Fatalf("a rewrite shown verbatim is not supported: %q → %q: %+v %+v", old, new, c, s)
		}
	})
}
