package sandbox

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// ErrSecret reports content that looks like it contains a credential.
var ErrSecret = errors.New("content looks like a secret")

// tokenRule recognises a credential by its issuer's fixed shape. These have
// almost no false positives, so any match is refused.
type tokenRule struct {
	kind string
	re   *regexp.Regexp
	// random, when set, also requires the match to look machine-generated;
	// used where the prefix alone ("sk-") occurs in ordinary prose.
	random bool
}

var tokenRules = []tokenRule{
	{kind: "PEM private key", re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
	{kind: "AWS access key id", re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{kind: "GitHub token", re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`)},
	{kind: "GitHub token", re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}\b`)},
	{kind: "GitLab token", re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`)},
	{kind: "Slack token", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{kind: "Anthropic API key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{20,}`)},
	{kind: "OpenAI API key", re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`), random: true},
	{kind: "Google API key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
	{kind: "Stripe key", re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}`)},
	{kind: "Hugging Face token", re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}\b`), random: true},
	{kind: "npm token", re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{kind: "Slack token", re: regexp.MustCompile(`\bxapp-[0-9]-[A-Za-z0-9-]{20,}`)},
	{kind: "JSON Web Token", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)},
}

// assignRe finds "NAME = value" and "name: value" where the name says it holds
// a credential. Group 1 is the name, group 2 the value.
var assignRe = regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_])([A-Za-z0-9_.\-]*(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|token|passw(?:or)?d|passwd|pwd|access[_\-]?key|auth[_\-]?key|private[_\-]?key|client[_\-]?secret))["']?[ \t]*(?::=|=|:)[ \t]*["'` + "`" + `]?([^\s"'` + "`" + `,;]+)`)

// valueRules find a credential by its context rather than its shape: the
// password in a URL's user info and a bearer token. Group 1 is the value,
// which must look like a secret (see looksLikeSecretValue).
var valueRules = []struct {
	kind string
	re   *regexp.Regexp
}{
	{kind: "password in a URL", re: regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]+:([^\s/@]+)@`)},
	{kind: "bearer token", re: regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)`)},
}

// placeholderWords mark a value someone wrote to be replaced, not a secret.
var placeholderWords = []string{
	"xxx", "***", "...", "your", "example", "changeme", "change_me", "placeholder",
	"dummy", "redacted", "todo", "replace", "secret_here", "token_here", "fixme",
	"sample", "fake", "test123", "<", ">", "${", "$(", "{{", "%(", "os.getenv", "process.env",
	"env[", "getenv", "environ",
}

// identRe matches a value that is a reference, not a literal: a variable or
// constant name, possibly dotted (settings.SECRET_KEY, os.environ.TOKEN).
var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$`)

// finding is one suspected secret. value is kept only to tell old secrets from
// new ones and is never shown.
type finding struct {
	kind  string
	line  int
	value string
}

// CheckSecret refuses content that would store a credential: issuer-shaped
// tokens (AWS, GitHub, GitLab, Slack, OpenAI, Anthropic, Google, Stripe,
// Hugging Face, npm, JWT), PEM private keys, passwords in URLs, bearer
// tokens, and assignments such as API_KEY=... whose value looks random rather
// than a placeholder. The error names the kind and line and never the secret.
func CheckSecret(content string) error {
	return CheckSecretAdded("", content)
}

// CheckSecretAdded is CheckSecret for a change: it refuses only secrets in
// after that were not already in before, so that an edit elsewhere in a file
// the user once pasted a key into is not blocked forever, while copying that
// key somewhere new still is.
func CheckSecretAdded(before, after string) error {
	found := findSecrets(after)
	if len(found) == 0 {
		return nil
	}
	old := make(map[string]int)
	for _, f := range findSecrets(before) {
		old[f.value]++
	}
	for _, f := range found {
		if old[f.value] > 0 {
			old[f.value]--
			continue
		}
		return fmt.Errorf("%w (%s) on line %d: memory must never store credentials; name where the secret lives (an environment variable, a vault path) instead of its value",
			ErrSecret, f.kind, f.line)
	}
	return nil
}

// findSecrets returns every suspected secret in content, in order of position.
func findSecrets(content string) []finding {
	var out []finding
	taken := make(map[int]bool) // start offsets already reported by a token rule
	for _, rule := range tokenRules {
		for _, loc := range rule.re.FindAllStringIndex(content, -1) {
			v := content[loc[0]:loc[1]]
			if taken[loc[0]] || (rule.random && !looksRandom(v[3:])) {
				continue
			}
			taken[loc[0]] = true
			out = append(out, finding{kind: rule.kind, line: lineAt(content, loc[0]), value: v})
		}
	}
	for _, rule := range valueRules {
		for _, m := range rule.re.FindAllStringSubmatchIndex(content, -1) {
			v := content[m[2]:m[3]]
			if taken[m[2]] || !looksLikeSecretValue(v) {
				continue
			}
			taken[m[2]] = true
			out = append(out, finding{kind: rule.kind, line: lineAt(content, m[2]), value: v})
		}
	}
	for _, m := range assignRe.FindAllStringSubmatchIndex(content, -1) {
		name := content[m[2]:m[3]]
		v := content[m[4]:m[5]]
		if taken[m[4]] || !looksLikeSecretValue(v) {
			continue
		}
		out = append(out, finding{kind: "value of " + name, line: lineAt(content, m[4]), value: v})
	}
	return out
}

// lineAt is the 1-based line number of byte offset i.
func lineAt(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// looksLikeSecretValue tells a literal credential from the placeholders,
// references and prose that follow "token:" in ordinary notes.
func looksLikeSecretValue(v string) bool {
	if len(v) < 8 {
		return false
	}
	low := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(low, w) {
			return false
		}
	}
	if strings.HasPrefix(v, "$") || identRe.MatchString(v) && !hasDigit(v) {
		return false
	}
	return looksRandom(v)
}

// looksRandom reports whether v has the character mix and entropy of a
// generated string rather than a word: at least two character classes
// including a digit, or three classes, and no long runs of one character.
func looksRandom(v string) bool {
	if len(v) < 8 {
		return false
	}
	var lower, upper, digit, other bool
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	classes := 0
	for _, b := range []bool{lower, upper, digit, other} {
		if b {
			classes++
		}
	}
	if classes < 2 || (classes == 2 && !digit) {
		return false
	}
	return entropy(v) >= 3.0
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
