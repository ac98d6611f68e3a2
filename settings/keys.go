package settings

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// Key describes one setting for `dream config` and for help text.
type Key struct {
	// Name is the key as written in a config file; the environment variable
	// is DREAM_ followed by Name in upper case, the flag -- followed by Name
	// with '_' replaced by '-'.
	Name string
	// Default is the built-in value in text form.
	Default string
	// Help is one line on what the key controls.
	Help string
}

// EnvVar returns the environment variable that sets key.
func EnvVar(key string) string { return "DREAM_" + strings.ToUpper(key) }

// FlagName returns the command-line flag, without dashes, that sets key.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// raw is one value as a layer supplied it, before parsing: text from the
// environment, a flag or a TOML scalar, or a list from a TOML array.
type raw struct {
	text   string
	list   []string
	isList bool
	// bad marks a TOML value of a shape no key takes (a table, a date, a
	// list of numbers): every key refuses it with its own rule.
	bad bool
	// table is a TOML table as decoded, for the one key that takes one
	// (prices); it is also bad, for every other key.
	table map[string]any
	// note says why a value was marked bad before any parser saw it, for
	// the warning.
	note string
}

// String shows the value as the user wrote it, for warnings.
func (r raw) String() string {
	if r.isList {
		return "[" + strings.Join(r.list, ", ") + "]"
	}
	return r.text
}

// spec is a Key plus how to parse, store, copy and print it.
type spec struct {
	Key
	// apply parses r and stores it in s; on error s is unchanged and the
	// error is the rule the value broke.
	apply func(s *Settings, r raw, home string) error
	// reset copies the key's field from src into dst.
	reset func(dst, src *Settings)
	// format prints the key's field of s.
	format func(s *Settings) string
}

// specs is the ordered key table. Order is the order of `dream config`.
var specs = append([]spec{
	boolKey("enabled", "true", "run automatic dreams at all", func(s *Settings) *bool { return &s.Enabled }),
	floatKey("min_hours", "24", "hours since the last consolidation before a dream may start", func(s *Settings) *float64 { return &s.MinHours }),
	intKey("min_sessions", "5", "other sessions touched since the last consolidation before a dream may start", func(s *Settings) *int { return &s.MinSessions }),
	intKey("max_turns", "25", "model round trips per dream", func(s *Settings) *int { return &s.MaxTurns }),
	int64Key("max_tokens", "400000", "total tokens (input + output) per dream", func(s *Settings) *int64 { return &s.MaxTokens }),
	durationKey("timeout", "10m", "wall-clock limit per dream (Go duration or seconds)", func(s *Settings) *time.Duration { return &s.Timeout }),
	stringKey("provider", "", "anthropic, openai or offline; empty picks from the API keys set", false, func(s *Settings) *string { return &s.Provider }),
	stringKey("model", "", "model name; empty uses the provider's default", false, func(s *Settings) *string { return &s.Model }),
	stringKey("base_url", "", "base URL of an OpenAI-compatible or Anthropic-compatible server", false, func(s *Settings) *string { return &s.BaseURL }),
	stringKey("host", "", "agent whose layout locates memory and transcripts (claude, codex, gemini, nanobot, codebot, dir)", false, func(s *Settings) *string { return &s.Host }),
	stringKey("memory_dir", "", "memory directory (overrides the host's)", true, func(s *Settings) *string { return &s.MemoryDir }),
	stringKey("sessions_dir", "", "transcripts directory counted by the session gate (overrides the host's)", true, func(s *Settings) *string { return &s.SessionsDir }),
	stringKey("repo", "", "repository the memory describes; empty is the current directory", true, func(s *Settings) *string { return &s.Repo }),
	stringKey("state_dir", "$XDG_STATE_HOME/dream or ~/.local/state/dream", "where tasks, telemetry, audit history and journals are kept", true, func(s *Settings) *string { return &s.StateDir }),
	listKey("pinned", "", "facts that must still be in memory after every dream, or it is rolled back (TOML array; env: newline- or ';'-separated)", func(s *Settings) *[]string { return &s.Pinned }),
	floatKey("max_loss", "0.2", "share of memory units or bytes a model dream may lose without a trace before it is held for review", func(s *Settings) *float64 { return &s.MaxLoss }),
	intKey("max_untraced_deletions", "3", "facts a model dream may delete without a trace elsewhere before it is held for review", func(s *Settings) *int { return &s.MaxUntracedDeletions }),
	boolKey("review", "false", "stage a dream's changes for review instead of committing them", func(s *Settings) *bool { return &s.Review }),
	lockBackendKey(),
	listKey("etcd_endpoints", "", "etcd client URLs for lock = etcd (TOML array; env: newline- or ';'-separated)", func(s *Settings) *[]string { return &s.EtcdEndpoints }),
	stringKey("etcd_ca_cert", "", "PEM file of the CA that signs the etcd servers (TLS)", true, func(s *Settings) *string { return &s.EtcdCACert }),
	stringKey("etcd_cert", "", "PEM client certificate for etcd (TLS, with etcd_key)", true, func(s *Settings) *string { return &s.EtcdCert }),
	stringKey("etcd_key", "", "PEM client key for etcd (TLS, with etcd_cert)", true, func(s *Settings) *string { return &s.EtcdKey }),
	stringKey("etcd_username", "", "etcd user, when etcd auth is on", false, func(s *Settings) *string { return &s.EtcdUsername }),
	secretKey("etcd_password", "etcd password (prefer DREAM_ETCD_PASSWORD to a file)", func(s *Settings) *string { return &s.EtcdPassword }),
	stringKey("lock_prefix", "", "etcd key prefix of this memory's lock; empty derives it from the memory's identity", false, func(s *Settings) *string { return &s.LockPrefix }),
	durationKey("lock_ttl", "60s", "etcd lease TTL: how long a crashed holder blocks other machines", func(s *Settings) *time.Duration { return &s.LockTTL }),
	stringKey("sync_remote", "", "git URL the memory history is pulled from before a dream and pushed to after", false, func(s *Settings) *string { return &s.SyncRemote }),
	stringKey("sync_branch", "", "this memory's branch on sync_remote; empty derives it from the memory dir's path under $HOME", false, func(s *Settings) *string { return &s.SyncBranch }),
	boolKey("codex_exec_sessions", "false", "count `codex exec` runs as sessions (Codex's own memory pipeline does not)", func(s *Settings) *bool { return &s.CodexExecSessions }),
	codexOwnerKey(),
}, ceilingSpecs()...)

// Keys returns every setting in display order.
func Keys() []Key {
	out := make([]Key, len(specs))
	for i, s := range specs {
		out[i] = s.Key
	}
	return out
}

// lookup finds a key's spec by name; flags may spell it with dashes.
func lookup(name string) (spec, bool) {
	name = strings.ReplaceAll(name, "-", "_")
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return spec{}, false
}

// scalar returns r's text, refusing a list where one value is expected.
func scalar(r raw, rule error) (string, error) {
	if r.isList || r.bad {
		return "", rule
	}
	return r.text, nil
}

// scalarKey makes a key holding one parsed value. The bool, number and
// duration keys differ only in their rule, parser and printer.
func scalarKey[T any](name, def, help string, rule error, parse func(string) (T, error), format func(T) string, field func(*Settings) *T) spec {
	return spec{
		Key: Key{Name: name, Default: def, Help: help},
		apply: func(s *Settings, r raw, _ string) error {
			t, err := scalar(r, rule)
			if err != nil {
				return err
			}
			v, err := parse(t)
			if err != nil {
				return err
			}
			*field(s) = v
			return nil
		},
		reset:  func(dst, src *Settings) { *field(dst) = *field(src) },
		format: func(s *Settings) string { return format(*field(s)) },
	}
}

func boolKey(name, def, help string, field func(*Settings) *bool) spec {
	return scalarKey(name, def, help, errBool, parseBool, strconv.FormatBool, field)
}

func floatKey(name, def, help string, field func(*Settings) *float64) spec {
	return scalarKey(name, def, help, errFloat, parseFloat, formatFloat, field)
}

func intKey(name, def, help string, field func(*Settings) *int) spec {
	parse := func(t string) (int, error) {
		v, err := parseInt(t)
		if err != nil || v > math.MaxInt {
			return 0, errInt
		}
		return int(v), nil
	}
	return scalarKey(name, def, help, errInt, parse, strconv.Itoa, field)
}

func int64Key(name, def, help string, field func(*Settings) *int64) spec {
	format := func(v int64) string { return strconv.FormatInt(v, 10) }
	return scalarKey(name, def, help, errInt, parseInt, format, field)
}

func durationKey(name, def, help string, field func(*Settings) *time.Duration) spec {
	return scalarKey(name, def, help, errDuration, parseDuration, time.Duration.String, field)
}

// stringKey makes a free-text key. A path key expands a leading "~/" to the
// home directory, because TOML files and quoted env values never see a
// shell's tilde expansion.
func stringKey(name, def, help string, path bool, field func(*Settings) *string) spec {
	return spec{
		Key: Key{Name: name, Default: def, Help: help},
		apply: func(s *Settings, r raw, home string) error {
			t, err := scalar(r, errText)
			if err != nil {
				return err
			}
			t = strings.TrimSpace(t)
			if path {
				t = fsutil.ExpandHome(t, home)
			}
			*field(s) = t
			return nil
		},
		reset:  func(dst, src *Settings) { *field(dst) = *field(src) },
		format: func(s *Settings) string { return *field(s) },
	}
}

func listKey(name, def, help string, field func(*Settings) *[]string) spec {
	return spec{
		Key: Key{Name: name, Default: def, Help: help},
		apply: func(s *Settings, r raw, _ string) error {
			if r.bad {
				return errList
			}
			if !r.isList {
				*field(s) = parseList(r.text)
				return nil
			}
			items := make([]string, 0, len(r.list))
			for _, it := range r.list {
				if it = strings.TrimSpace(it); it != "" {
					items = append(items, it)
				}
			}
			*field(s) = items
			return nil
		},
		reset: func(dst, src *Settings) {
			*field(dst) = append([]string(nil), *field(src)...)
		},
		format: func(s *Settings) string { return strings.Join(*field(s), "; ") },
	}
}
