package hookinstall

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/dreamkit/dream/internal/fsutil"
)

// Codex runs a hook from hooks.json only once the user has trusted it: its
// trust flow (/hooks in the UI) records, in config.toml,
//
//	[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// and a hook whose current hash differs ("modified") or that has none
// ("untrusted") is dropped; under `codex exec` without a word. The hash is
// of the hook's normalized identity, not of the file's text
// (codex-rs/hooks discovery.rs command_hook_hash and config fingerprint.rs
// version_for_toml): the JSON object {"event_name": <snake_case event>,
// "hooks": [<the handler with timeout defaulted to 600 and async to
// false>]}, keys sorted at every level, serialised compactly by
// serde_json, SHA-256. Verified against Codex 0.171.0 by running it: its
// app-server's hooks/list reports the same currentHash, and the hook
// fires under `codex exec` and the interactive UI once the entry is there.

// CodexHook is dream's hook as Codex's trust knows it.
type CodexHook struct {
	// Key is the hooks.state key: Codex's path of hooks.json (CODEX_HOME
	// with its symbolic links resolved, or $HOME/.codex as written), the
	// snake_case event and the handler's position.
	Key string
	// Hash is "sha256:<hex>" of the hook's normalized identity.
	Hash string
}

// codexTimeout is the timeout Codex gives a handler that sets none.
const codexTimeout = 600

// CodexHookOf finds dream's handler for t.Event in hooks.json (src) and
// returns its trust key, with hooksPath as Codex names the file, and the
// hash Codex computes for it. ok is false when dream's hook is not there.
// A handler carrying fields dream does not write (async, statusMessage, a
// matcher) is refused: its identity is Codex's to compute, through /hooks.
func CodexHookOf(t Target, src []byte, hooksPath string) (h CodexHook, ok bool, err error) {
	root, err := parse(t, src)
	if err != nil || root == nil {
		return CodexHook{}, false, err
	}
	o, found := findOurs(root.Get("hooks").Get(t.Event))
	if !found {
		return CodexHook{}, false, nil
	}
	group := root.Get("hooks").Get(t.Event).Items[o.group]
	for _, m := range group.Members {
		if m.Key != "hooks" {
			return CodexHook{}, false, refuse(t, "dream's %s hook's group sets %q: trust it in Codex (/hooks) instead", t.Event, m.Key)
		}
	}
	command, _ := o.handler.Get("command").Text()
	timeout := codexTimeout
	for _, m := range o.handler.Members {
		switch m.Key {
		case "type", "command":
		case "timeout":
			n, err := strconv.ParseUint(string(src[m.Value.Start:m.Value.End]), 10, 32)
			if err != nil {
				return CodexHook{}, false, refuse(t, "dream's %s hook's timeout is not a whole number of seconds; fix it, or trust the hook in Codex (/hooks)", t.Event)
			}
			timeout = max(int(n), 1)
		default:
			return CodexHook{}, false, refuse(t, "dream's %s hook sets %q: trust it in Codex (/hooks) instead", t.Event, m.Key)
		}
	}
	event := snakeCase(t.Event)
	identity := `{"event_name":` + serdeQuote(event) + `,"hooks":[{"async":false,"command":` + serdeQuote(command) +
		`,"timeout":` + strconv.Itoa(timeout) + `,"type":"command"}]}`
	sum := sha256.Sum256([]byte(identity))
	return CodexHook{
		Key:  fmt.Sprintf("%s:%s:%d:%d", hooksPath, event, o.group, o.index),
		Hash: "sha256:" + hex.EncodeToString(sum[:]),
	}, true, nil
}

// snakeCase is Codex's label for an event: "Stop" is "stop",
// "PreToolUse" "pre_tool_use".
func snakeCase(event string) string {
	var b strings.Builder
	for i, r := range event {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// serdeQuote is s as serde_json writes a string: '"' and '\' escaped, the
// control characters as \b \f \n \r \t or \u00xx, everything else (DEL,
// non-ASCII, U+2028) as it is.
func serdeQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Codex trust states of a hook, as its /hooks lists them.
const (
	CodexTrusted   = "trusted"
	CodexModified  = "modified" // trusted once, with another hash
	CodexUntrusted = "untrusted"
	CodexDisabled  = "disabled" // enabled = false: the user switched it off
)

// codexState is the part of config.toml the trust lives in.
type codexState struct {
	Hooks struct {
		State map[string]struct {
			Enabled     *bool   `toml:"enabled"`
			TrustedHash *string `toml:"trusted_hash"`
		} `toml:"state"`
	} `toml:"hooks"`
}

// CodexTrustState says how Codex sees h with the config.toml bytes src.
func CodexTrustState(src []byte, h CodexHook) (string, error) {
	var cfg codexState
	if _, err := toml.Decode(string(src), &cfg); err != nil {
		return "", err
	}
	st, ok := cfg.Hooks.State[h.Key]
	switch {
	case ok && st.Enabled != nil && !*st.Enabled:
		return CodexDisabled, nil
	case !ok || st.TrustedHash == nil:
		return CodexUntrusted, nil
	case *st.TrustedHash == h.Hash:
		return CodexTrusted, nil
	}
	return CodexModified, nil
}

// inlineHooksState finds hooks or hooks.state written as an inline table
// ("hooks = {", "state = {" in [hooks], "hooks.state = {"); a "state = {"
// in another table is taken for one too, which only costs the /hooks way.
var inlineHooksState = regexp.MustCompile(`(?m)^[ \t]*(hooks|state|hooks[ \t]*\.[ \t]*state)[ \t]*=[ \t]*\{`)

// codexTrustBlock is the table dream appends for h, as Codex's own trust
// flow writes it.
func codexTrustBlock(h CodexHook) string {
	return "[hooks.state." + tomlQuote(h.Key) + "]\ntrusted_hash = " + tomlQuote(h.Hash) + "\n"
}

// tomlQuote is s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TrustCodex returns config.toml (src, nil when absent) with h trusted,
// and whether it changed: dream's table appended at the end, or the
// trusted_hash of a table dream appended before replaced (the hook's
// command changed: the binary moved). The result is checked by decoding
// it: h must come out trusted and every other setting exactly as before,
// or src is left as it is with an error that says to trust the hook in
// Codex (/hooks). A hook the user disabled in Codex is left disabled.
func TrustCodex(src []byte, h CodexHook) ([]byte, bool, error) {
	t := Target{Agent: "codex", Path: "config.toml"}
	state, err := CodexTrustState(src, h)
	if err != nil {
		return nil, false, refuse(t, "Codex's config.toml does not parse (%v); fix it, then run dream init codex again", err)
	}
	var out []byte
	switch state {
	case CodexTrusted:
		return src, false, nil
	case CodexDisabled:
		return nil, false, refuse(t, "dream's hook is disabled in Codex (enabled = false under [hooks.state.%s]); enable it in Codex's /hooks", tomlQuote(h.Key))
	case CodexUntrusted:
		if inlineHooksState.Match(src) {
			// An inline table cannot take the [hooks.state."..."] table
			// appended after it: Codex would refuse to start (the decoder
			// here is more lenient than Codex's).
			return nil, false, refuse(t, "Codex's config.toml sets hooks or hooks.state as an inline table, which dream cannot add to safely; trust dream's hook in Codex (/hooks)")
		}
		out = append([]byte(nil), src...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = append(out, codexTrustBlock(h)...)
	case CodexModified:
		header := "[hooks.state." + tomlQuote(h.Key) + "]\n"
		i := bytes.Index(src, []byte(header))
		line := "trusted_hash = "
		j := -1
		if i >= 0 {
			j = bytes.Index(src[i+len(header):], []byte(line))
		}
		if j != 0 {
			return nil, false, refuse(t, "Codex's config.toml trusts another version of dream's hook in a form dream did not write; trust this one in Codex (/hooks)")
		}
		start := i + len(header) + len(line)
		end := start + bytes.IndexByte(src[start:], '\n')
		if end < start {
			end = len(src)
		}
		out = append(append(append([]byte(nil), src[:start]...), tomlQuote(h.Hash)...), src[end:]...)
	}
	if err := checkCodexTrust(src, out, h, CodexTrusted); err != nil {
		return nil, false, refuse(t, "%v; trust dream's hook in Codex (/hooks) instead", err)
	}
	return out, true, nil
}

// UntrustCodex returns config.toml without the table dream appended for h,
// and whether it changed. A trust dream did not write in that form is
// left to the user (Codex ignores it once the hook is gone).
func UntrustCodex(src []byte, h CodexHook) ([]byte, bool, error) {
	block := []byte(codexTrustBlock(h))
	i := bytes.Index(src, block)
	if i < 0 {
		return src, false, nil
	}
	from := i
	if from >= 2 && src[from-1] == '\n' && src[from-2] == '\n' {
		from-- // the blank line TrustCodex put before it
	}
	out := append(append([]byte(nil), src[:from]...), src[i+len(block):]...)
	if err := checkCodexTrust(src, out, h, CodexUntrusted); err != nil {
		return src, false, nil
	}
	return out, true, nil
}

// checkCodexTrust decodes before and after: h must be in state want after,
// and nothing else may differ.
func checkCodexTrust(before, after []byte, h CodexHook, want string) error {
	if got, err := CodexTrustState(after, h); err != nil || got != want {
		return fmt.Errorf("the edited config.toml would not load in Codex as intended (%s, %v)", got, err)
	}
	var b, a map[string]any
	if _, err := toml.Decode(string(before), &b); err != nil {
		return err
	}
	if _, err := toml.Decode(string(after), &a); err != nil {
		return err
	}
	for _, m := range []map[string]any{b, a} {
		if hooks, ok := m["hooks"].(map[string]any); ok {
			if state, ok := hooks["state"].(map[string]any); ok {
				delete(state, h.Key)
				if len(state) == 0 {
					delete(hooks, "state")
				}
			}
			if len(hooks) == 0 {
				delete(m, "hooks")
			}
		}
	}
	if !reflect.DeepEqual(a, b) {
		return errors.New("the edit would change other settings in config.toml")
	}
	return nil
}

// CodexTrustFile records trust for h in config.toml at path (TrustCodex),
// or takes dream's record out (UntrustCodex) when remove; unless dry it
// writes the result atomically with the file's permissions (0600 for a
// new file). Symbolic links are followed, as for the settings files.
func CodexTrustFile(path string, h CodexHook, remove, dry bool) (Result, error) {
	real, before, existed, err := read(path)
	if err != nil {
		return Result{}, err
	}
	var after []byte
	var changed bool
	if remove {
		after, changed, err = UntrustCodex(before, h)
	} else {
		after, changed, err = TrustCodex(before, h)
	}
	if err != nil {
		return Result{Path: real}, err
	}
	res := Result{Path: real, Before: before, After: after, Existed: existed, Changed: changed}
	if !changed || dry {
		return res, nil
	}
	perm := fs.FileMode(0o600)
	if info, err := os.Stat(real); err == nil {
		perm = info.Mode().Perm()
	}
	if err := fsutil.WriteFileAtomic(real, after, perm, true); err != nil {
		return res, fmt.Errorf("writing %s: %w", real, err)
	}
	return res, nil
}
