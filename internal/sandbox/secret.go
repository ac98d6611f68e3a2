package sandbox

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
)

// ErrSecret reports content that looks like it contains a credential.
var ErrSecret = errors.New("content looks like a secret")

// tokenRule recognises a credential by its issuer's fixed shape. These have
// almost no false positives, so any match is refused.
type tokenRule struct {
	kind string
	// hints are literals one of which every match contains; a text with
	// none of them is not searched (Go's regexp costs microseconds per
	// pattern per KiB, and most memory text holds no credential at all).
	hints []string
	re    *regexp.Regexp
	// random, when set, also requires the match to look machine-generated;
	// used where the prefix alone ("sk-") occurs in ordinary prose.
	random bool
}

// valueRule finds a credential by its context rather than its shape (the
// password in a URL's user info, a bearer token). Group 1 is the value.
type valueRule struct {
	kind string
	// hints are lower-case literals one of which every match contains,
	// letter case ignored.
	hints []string
	re    *regexp.Regexp
	// ok decides whether the value is a literal secret.
	ok func(string) bool
}

// secretRules is every compiled pattern of the guard. It is built on first
// use, not at package init: most dream invocations (the per-turn hook, the
// gate, status) never check a secret, and compiling some thirty regexps at
// process start would tax every one of them.
type secretRules struct {
	tokens []tokenRule
	values []valueRule
	// assign finds "NAME = value" and "name: value" where the name ends in
	// a credential word. Group 1 is the name, group 2 the word, group 3 the
	// value.
	assign *regexp.Regexp
}

// assignHints are the lower-case stems every credential word of assign
// contains.
var assignHints = []string{"key", "secret", "token", "pass", "pwd", "credential"}

// containsAny reports whether s contains one of the literals.
func containsAny(s string, lits []string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

var rules = sync.OnceValue(compileSecretRules)

func compileSecretRules() *secretRules {
	return &secretRules{
		tokens: []tokenRule{
			{kind: "PEM private key", hints: []string{"-----BEGIN"}, re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
			{kind: "AWS access key id", hints: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)},
			{kind: "GitHub token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`)},
			{kind: "GitHub token", hints: []string{"github_pat_"}, re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}\b`)},
			{kind: "GitLab token", hints: []string{"glpat-"}, re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`)},
			{kind: "Slack token", hints: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
			{kind: "Anthropic API key", hints: []string{"sk-ant-"}, re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{20,}`)},
			{kind: "OpenAI API key", hints: []string{"sk-"}, re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`), random: true},
			{kind: "Google API key", hints: []string{"AIza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
			{kind: "Stripe key", hints: []string{"k_live_", "k_test_"}, re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}`)},
			{kind: "Hugging Face token", hints: []string{"hf_"}, re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}\b`), random: true},
			{kind: "npm token", hints: []string{"npm_"}, re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
			{kind: "Slack token", hints: []string{"xapp-"}, re: regexp.MustCompile(`\bxapp-[0-9]-[A-Za-z0-9-]{20,}`)},
			{kind: "JSON Web Token", hints: []string{"eyJ"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)},
			{kind: "SendGrid key", hints: []string{"SG."}, re: regexp.MustCompile(`\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b`)},
			{kind: "DigitalOcean token", hints: []string{"_v1_"}, re: regexp.MustCompile(`\bdo[por]_v1_[a-f0-9]{64}\b`)},
			{kind: "Telegram bot token", hints: []string{":AA"}, re: regexp.MustCompile(`\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b`)},
			// Webhook URLs are credentials: whoever has one can post as the
			// integration. Shapes from each service's documentation.
			{kind: "Slack webhook URL", hints: []string{"hooks.slack.com"}, re: regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}`)},
			{kind: "Discord webhook URL", hints: []string{"discord"}, re: regexp.MustCompile(`https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_\-]{20,}`)},
			{kind: "Microsoft Teams webhook URL", hints: []string{".webhook.office.com"}, re: regexp.MustCompile(`https://[A-Za-z0-9\-]+\.webhook\.office\.com/webhookb2/[^\s"'<>]{20,}`)},
			{kind: "Google Chat webhook URL", hints: []string{"chat.googleapis.com"}, re: regexp.MustCompile(`https://chat\.googleapis\.com/v1/spaces/[^\s/]+/messages\?[^\s"'<>]*token=[A-Za-z0-9_%\-]{16,}`)},
		},
		values: []valueRule{
			// A connection string's password is a secret whatever its
			// entropy: "postgres://app:hunter22@db" logs anyone in.
			{kind: "password in a URL", hints: []string{"://"}, re: regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]*:([^\s/@]+)@`), ok: looksLikeURLPassword},
			{kind: "bearer token", hints: []string{"bearer"}, re: regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)`), ok: looksLikeSecretValue},
			{kind: "signature in a URL", hints: []string{"sig"}, re: regexp.MustCompile(`(?i)[?&](?:x-amz-signature|sig|signature)=([A-Za-z0-9%+/_\-]{16,})`), ok: looksRandom},
		},
		assign: regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_])([A-Za-z0-9_.\-]*?(` +
			`api[_\-]?key|apikey|secret(?:[_\-]?(?:access[_\-]?)?key)?|token|` +
			`pass(?:word|wd|phrase)?|pwd|access[_\-]?key(?:[_\-]?id)?|auth[_\-]?key|private[_\-]?key|` +
			`client[_\-]?secret|credentials?|account[_\-]?key|signing[_\-]?key|encryption[_\-]?key))` +
			`["']?[ \t]*(?::=|=>|=|:)[ \t]*["'` + "`" + `]?([^\s"'` + "`" + `,;]+)`),
	}
}

// identRe matches a value that is a reference, not a literal: a variable or
// constant name, possibly dotted (settings.SECRET_KEY). Compiled on first
// use, like rules.
var identRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$`)
})

// placeholderWords mark a value someone wrote to be replaced, not a secret.
var placeholderWords = []string{
	"xxx", "***", "...", "your", "example", "changeme", "change_me", "placeholder",
	"dummy", "redacted", "todo", "replace", "secret_here", "token_here", "fixme",
	"sample", "fake", "test123", "<", ">", "${", "$(", "{{", "%(", "os.getenv", "process.env",
	"env[", "getenv", "environ",
}

// urlPlaceholders are the user-info passwords of documentation examples
// ("postgres://user:password@localhost").
var urlPlaceholders = []string{"password", "passwd", "pass", "pwd", "secret", "pw", "p", "x"}

// finding is one suspected secret. value is kept only to tell old secrets from
// new ones and is never shown.
type finding struct {
	kind  string
	line  int
	value string
}

// CheckSecret refuses content that would store a credential: issuer-shaped
// tokens (AWS, GitHub, GitLab, Slack, OpenAI, Anthropic, Google, Stripe,
// Hugging Face, npm, SendGrid, DigitalOcean, Telegram, JWT), webhook URLs
// (Slack, Discord, Teams, Google Chat), PEM private keys with or without
// their header, passwords in connection strings, bearer tokens,
// assignments such as DB_PASS=... whose value looks random rather than a
// placeholder, and .env lines such as PASSWORD=... whose value is any
// literal (a passphrase of plain words included). The same checks run on
// the content with line breaks joined (a key wrapped over two lines) and on
// what base64 runs decode to (a key wrapped in base64). The error names the
// kind and line and never the secret.
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

// CheckSecretName refuses a memory file path that itself carries a
// credential (an AWS key id used as a file name): names end up in the index,
// the audit history and every listing, so they leak as surely as content.
func CheckSecretName(rel string) error {
	// Path separators and the extension become line breaks so each part is
	// scanned on its own and "KEY.md" is not one token.
	text := strings.NewReplacer("/", "\n", ".", "\n").Replace(rel)
	for _, f := range findSecrets(text) {
		return fmt.Errorf("%w (%s) in the file name: name memory files after their topic, never after a credential",
			ErrSecret, f.kind)
	}
	return nil
}

// findSecrets returns every suspected secret in content: first what the
// text says as written, then what only shows after joining wrapped lines or
// decoding base64, once per value not already found as written.
func findSecrets(content string) []finding {
	rs := rules()
	var out []finding
	seen := make(map[string]bool)
	add := func(f finding) {
		if !seen[f.value] {
			seen[f.value] = true
			out = append(out, f)
		}
	}
	// Every finding as written counts, repeats included: copying a key a
	// second time is adding it.
	for _, f := range scanText(rs, content, true) {
		seen[f.value] = true
		out = append(out, f)
	}
	if !strings.ContainsAny(content, "\n") && len(base64Runs(content)) == 0 {
		return out
	}
	joined, origin := joinLines(content)
	at := func(i int) int { return lineAt(content, origin(i)) }
	if joined != content {
		// Only issuer shapes: an assignment's value never spans lines, and
		// joining prose would invent "values" out of adjacent words.
		for _, f := range scanTokens(rs, joined) {
			f.line = at(f.offset)
			add(f.finding)
		}
	}
	for _, loc := range base64Runs(joined) {
		run := joined[loc[0]:loc[1]]
		dec := decodeBase64(run)
		if len(dec) < 12 {
			continue
		}
		switch {
		case isPrivateKeyDER(dec):
			add(finding{kind: "private key (PEM body without its header)", line: at(loc[0]), value: run})
		case printable(dec):
			for _, f := range scanText(rs, string(dec), false) {
				add(finding{kind: "base64-encoded " + f.kind, line: at(loc[0]), value: f.value})
			}
		}
	}
	return out
}

// located is a finding with the byte offset it was found at.
type located struct {
	finding
	offset int
}

// scanTokens applies the issuer-shape rules.
func scanTokens(rs *secretRules, content string) []located {
	var out []located
	taken := make(map[int]bool)
	for _, rule := range rs.tokens {
		if !containsAny(content, rule.hints) {
			continue
		}
		for _, loc := range rule.re.FindAllStringIndex(content, -1) {
			v := content[loc[0]:loc[1]]
			if taken[loc[0]] || (rule.random && !looksRandom(v[3:])) {
				continue
			}
			taken[loc[0]] = true
			out = append(out, located{finding{kind: rule.kind, value: v}, loc[0]})
		}
	}
	return out
}

// scanText applies every rule to content as written. withLines computes
// line numbers (decoded text has none of its own).
func scanText(rs *secretRules, content string, withLines bool) []finding {
	line := func(i int) int {
		if !withLines {
			return 0
		}
		return lineAt(content, i)
	}
	var out []finding
	taken := make(map[int]bool) // start offsets already reported
	for _, l := range scanTokens(rs, content) {
		taken[l.offset] = true
		l.line = line(l.offset)
		out = append(out, l.finding)
	}
	lower := strings.ToLower(content)
	for _, rule := range rs.values {
		if !containsAny(lower, rule.hints) {
			continue
		}
		for _, m := range rule.re.FindAllStringSubmatchIndex(content, -1) {
			v := content[m[2]:m[3]]
			if taken[m[2]] || !rule.ok(v) {
				continue
			}
			taken[m[2]] = true
			out = append(out, finding{kind: rule.kind, line: line(m[2]), value: v})
		}
	}
	if !containsAny(lower, assignHints) {
		return out
	}
	for _, m := range rs.assign.FindAllStringSubmatchIndex(content, -1) {
		name, word := content[m[2]:m[3]], content[m[4]:m[5]]
		v := content[m[6]:m[7]]
		if taken[m[6]] || !credentialName(name, word) {
			continue
		}
		ok := looksLikeSecretValue(v)
		if !ok && isPasswordWord(word) {
			ok = looksLikePassword(v)
		}
		if !ok && envLine(content, m[2], m[3], m[6], m[7]) && isEnvSecretWord(word) {
			ok = looksLikeEnvValue(v)
		}
		if !ok {
			continue
		}
		out = append(out, finding{kind: "value of " + name, line: line(m[6]), value: v})
	}
	return out
}

// credentialName reports whether name, which ends in the credential word
// word, really names a credential. "pass" is the only word that ends common
// English (bypass, compass), so it must start a name part: after _, - or .,
// at the start, or as a camel-case "Pass".
func credentialName(name, word string) bool {
	if !strings.EqualFold(word, "pass") {
		return true
	}
	i := len(name) - len(word)
	if i == 0 {
		return true
	}
	prev := name[i-1]
	if prev == '_' || prev == '-' || prev == '.' {
		return true
	}
	return word[0] == 'P' && prev >= 'a' && prev <= 'z'
}

// isPasswordWord reports a credential word that names something a person
// chose, which is a secret even when it is not random-looking.
func isPasswordWord(word string) bool {
	w := strings.ToLower(word)
	return strings.HasPrefix(w, "pass") || w == "pwd"
}

// envLine reports an assignment written as a line of a .env file: the
// whole line is NAME=value (after an optional "export" or list marker),
// NAME in the upper case of environment variables, no space around "=",
// and the value, quoted or not, runs to the end of the line or to a " #"
// comment. There a value is literal: "PASSWORD=correcthorsebatterystaple"
// holds the password itself, where "password = default_password" in code
// names a variable. The offsets are those of the name and the value in
// content.
func envLine(content string, nameStart, nameEnd, valueStart, valueEnd int) bool {
	if content[nameEnd] != '=' {
		return false
	}
	quote := content[nameEnd+1 : valueStart]
	if quote != "" && quote != `"` && quote != "'" {
		return false
	}
	for _, c := range content[nameStart:nameEnd] {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	head := strings.TrimSpace(content[strings.LastIndexByte(content[:nameStart], '\n')+1 : nameStart])
	head = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(head, "-"), "*"), "export"))
	if head != "" {
		return false
	}
	rest, _, _ := strings.Cut(content[valueEnd:], "\n")
	rest = strings.TrimSpace(strings.TrimPrefix(rest, quote))
	return rest == "" || strings.HasPrefix(rest, "#")
}

// isEnvSecretWord reports the credential words whose .env value is a
// secret even when it is a plain word: passwords, secrets and tokens. A
// KEY may be a sort key or a key file's path, so it needs a random value.
func isEnvSecretWord(word string) bool {
	w := strings.ToLower(word)
	return isPasswordWord(word) || strings.Contains(w, "secret") || w == "token"
}

// envNonSecrets are values a .env line sets a credential name to that say
// something about it rather than being it.
var envNonSecrets = []string{"true", "false", "none", "null", "required", "optional", "disabled", "enabled", "unset", "empty"}

// looksLikeEnvValue tells a literal credential in a .env line from a
// placeholder: six characters at least, not a placeholder word, not a
// reference ($VAR), not a path, not a flag value.
func looksLikeEnvValue(v string) bool {
	if len(v) < 6 || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") || strings.ContainsAny(v, "/\\") {
		return false
	}
	low := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(low, w) {
			return false
		}
	}
	for _, w := range append(envNonSecrets, urlPlaceholders...) {
		if low == w {
			return false
		}
	}
	return true
}

// lineAt is the 1-based line number of byte offset i.
func lineAt(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// looksLikeSecretValue tells a literal credential from the placeholders,
// references and prose that follow "token:" in ordinary notes.
func looksLikeSecretValue(v string) bool {
	if len(v) < 8 || isPlaceholder(v) {
		return false
	}
	return looksRandom(v)
}

// looksLikePassword is the weaker test for a password's value: people pick
// passwords, so "hunter2hunter2" is one though it is not random. It still
// needs eight characters, a digit or a symbol among letters, and is never a
// placeholder or a bare word or reference.
func looksLikePassword(v string) bool {
	if len(v) < 8 || isPlaceholder(v) {
		return false
	}
	var letter, digitOrSym bool
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		default:
			digitOrSym = true
		}
	}
	return letter && digitOrSym && entropy(v) >= 2.5
}

// looksLikeURLPassword accepts any user-info password that is not a
// documentation placeholder: a connection string's password logs in
// whatever it looks like.
func looksLikeURLPassword(v string) bool {
	if len(v) < 4 || isPlaceholder(v) {
		return false
	}
	for _, p := range urlPlaceholders {
		if strings.EqualFold(v, p) {
			return false
		}
	}
	return true
}

// isPlaceholder reports a value that is a stand-in or a reference rather
// than a literal: a placeholder word, a $VAR, a bare identifier.
func isPlaceholder(v string) bool {
	low := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	if strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") {
		return true
	}
	return identRe().MatchString(v) && !hasDigit(v)
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
