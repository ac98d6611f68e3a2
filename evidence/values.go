// Package evidence decides whether a model's change to a specific value in
// memory is backed by something the model was shown. A dream that rewrites
// "Port: 8082" to "Port: 8081", re-dates a heading or turns "always" into
// "never" changes what the memory says about the world; such a change lands
// only when this dream's evidence supports it: the new value appears in a
// transcript or repository file a tool showed the model, or the old value is
// contradicted there (a path the repository no longer has). Everything else
// in a dream is judged by the loss guard; this package judges only values.
//
// Values are found by their shape, not by understanding the sentence: a
// token with a digit (a number, port, date, version), a URL, a path, an
// identifier (snake_case, camelCase, a dotted or namespaced name, a code
// span) or a capitalised name in mid-sentence. Plain lowercase words are
// prose: rewording them is the consolidation's job.
package evidence

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Kinds of Value.
const (
	KindNumber     = "number"
	KindDate       = "date"
	KindVersion    = "version"
	KindURL        = "url"
	KindPath       = "path"
	KindIdentifier = "identifier"
	KindName       = "name"
)

// Value is one specific value a text states.
type Value struct {
	Text string `json:"text"`
	Kind string `json:"kind"`
}

// key is how two values are compared: case does not make a port or a name
// another one, nor the spelling of a quantity's unit ("15 minutes", "15
// min" and "15-minute" are one; "15 hours" is another).
func (v Value) key() string { return valueKey(v.Text) }

// valueKey is the key of a value's text (see Value.key).
func valueKey(text string) string {
	lower := strings.ToLower(text)
	n := 0
	for n < len(lower) && (lower[n] >= '0' && lower[n] <= '9' || lower[n] == '.' && n > 0) {
		n++
	}
	if n == 0 || n == len(lower) {
		return lower
	}
	unit := strings.TrimLeft(lower[n:], " -")
	if c, ok := units()[unit]; ok {
		return strings.TrimRight(lower[:n], ".") + " " + c
	}
	return lower
}

// units are the words a quantity's number is read with, by their
// canonical spelling: "30 days" is one value, and "30 hours" another.
// Built on first use, not at package init: every dream process links this
// package, and init work is paid before `dream hook` and `dream maybe`
// answer (cmd/dream/internal/early), which never read a value.
var units = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for canon, spellings := range map[string]string{
		"ms":  "ms msec msecs millisecond milliseconds",
		"s":   "s sec secs second seconds 秒",
		"min": "min mins minute minutes 分钟",
		"h":   "h hr hrs hour hours 小时",
		"d":   "d day days 天",
		"wk":  "wk wks week weeks 周",
		"mo":  "month months 个月",
		"yr":  "yr yrs year years 年",
		"b":   "b byte bytes",
		"kb":  "kb kib",
		"mb":  "mb mib",
		"gb":  "gb gib",
		"tb":  "tb tib",
		"%":   "% percent",
		"x":   "x times",
	} {
		for _, w := range strings.Fields(spellings) {
			m[w] = canon
		}
	}
	return m
})

// withUnits joins each plain number to the unit word after it ("30" and
// "days" are the one value "30 days"), so that a rewrite to "30 hours"
// changes a value rather than a word of prose.
func withUnits(ts []token) []token {
	out := ts[:0]
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		if t.value == KindNumber && isDecimal(t.text) && i+1 < len(ts) && ts[i+1].value == "" {
			if _, ok := units()[ts[i+1].text]; ok {
				t.text += " " + ts[i+1].text
				i++
			}
		}
		out = append(out, t)
	}
	return out
}

// isDecimal matches 30 and 1.5.
func isDecimal(s string) bool {
	whole, frac, dot := strings.Cut(s, ".")
	return isDigits(whole) && (!dot || isDigits(frac))
}

// token is one word of a text, with what it is.
type token struct {
	text  string
	value string // the Value kind, "" for prose
	start bool   // the first word of a sentence
}

// Values are the specific values of text (a memory unit's Markdown), in
// order, each once.
func Values(text string) []Value {
	var out []Value
	seen := map[string]bool{}
	for _, t := range tokens(text) {
		if t.value == "" {
			continue
		}
		v := Value{Text: t.text, Kind: t.value}
		if !seen[v.key()] {
			seen[v.key()] = true
			out = append(out, v)
		}
	}
	return out
}

// tokens splits a unit's text into words: list and heading markers and
// emphasis dropped, code spans and link destinations kept whole, a number
// and its unit one value.
func tokens(text string) []token { return withUnits(rawTokens(text)) }

// rawTokens is tokens before a number is joined to its unit.
func rawTokens(text string) []token {
	var out []token
	start := true
	for _, line := range strings.Split(text, "\n") {
		line = stripMarker(line)
		start = true
		for len(line) > 0 {
			line = strings.TrimLeftFunc(line, unicode.IsSpace)
			if line == "" {
				break
			}
			if line[0] == '`' {
				// A code span is one value, whatever it holds.
				if end := strings.IndexByte(line[1:], '`'); end > 0 {
					code := strings.TrimSpace(line[1 : 1+end])
					if code != "" {
						out = append(out, token{text: code, value: codeKind(code), start: start})
					}
					line = line[end+2:]
					start = false
					continue
				}
			}
			n := strings.IndexFunc(line, unicode.IsSpace)
			if n < 0 {
				n = len(line)
			}
			word := line[:n]
			line = line[n:]
			for _, w := range splitLink(word) {
				t := classify(w, start)
				if t.text != "" {
					out = append(out, t)
				}
				start = false
			}
			if endsSentence(word) {
				start = true
			}
		}
	}
	return out
}

// stripMarker drops a line's list marker, heading hashes, quote markers and
// table pipes: the word after them starts a sentence.
func stripMarker(line string) string {
	line = strings.TrimSpace(line)
	for {
		switch {
		case strings.HasPrefix(line, ">"):
			line = strings.TrimSpace(line[1:])
			continue
		case strings.HasPrefix(line, "#"):
			line = strings.TrimSpace(strings.TrimLeft(line, "#"))
		case len(line) >= 2 && strings.ContainsRune("-*+", rune(line[0])) && line[1] == ' ':
			line = strings.TrimSpace(line[2:])
			continue
		case strings.HasPrefix(line, "|"):
			line = strings.ReplaceAll(line, "|", " ")
		default:
			if i := strings.IndexAny(line, ".)"); i > 0 && i <= 4 && isDigits(line[:i]) && i+1 < len(line) && line[i+1] == ' ' {
				line = strings.TrimSpace(line[i+1:])
				continue
			}
		}
		return line
	}
}

// splitLink turns "[Title](target)" into the title's words and the target.
func splitLink(word string) []string {
	if i := strings.Index(word, "]("); i >= 0 {
		end := strings.LastIndexByte(word, ')')
		if end > i+2 {
			return []string{word[:i+1], word[i+2 : end], word[end+1:]}
		}
	}
	return []string{word}
}

func endsSentence(word string) bool {
	w := strings.TrimRight(word, `"')]*_`)
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "!") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, ":")
}

// trimWord drops the punctuation and emphasis around a word.
func trimWord(w string) string {
	w = strings.TrimLeft(w, `([{"'*_~<「『“‘`)
	w = strings.TrimRight(w, `)]}"'*_~>,;:!?。，；：」』”’`)
	// A final period is punctuation unless the word is a number or version
	// ("1.26." is "1.26").
	return strings.TrimRight(w, ".")
}

// classify says what one word is.
func classify(raw string, start bool) token {
	w := trimWord(raw)
	t := token{text: w, start: start}
	if w == "" {
		return t
	}
	lower := strings.ToLower(w)
	switch {
	case strings.Contains(w, "://"):
		t.value = KindURL
	case isDate(w):
		t.value = KindDate
	case hasDigit(w):
		t.value = KindNumber
		if isVersion(w) {
			t.value = KindVersion
		}
	case strings.Contains(w, "/") && len(w) > 1 || hasExtension(w):
		t.value = KindPath
	case isIdentifier(w):
		t.value = KindIdentifier
	case !start && isName(w):
		t.value = KindName
	case isAllCaps(w) && utf8.RuneCountInString(w) > 1:
		t.value = KindName // an acronym or an environment variable, anywhere
	}
	if t.value == "" {
		t.text = lower
	}
	return t
}

func codeKind(code string) string {
	switch {
	case strings.Contains(code, "://"):
		return KindURL
	case strings.Contains(code, "/") || hasExtension(code):
		return KindPath
	}
	return KindIdentifier
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// isDate matches YYYY-MM-DD and YYYY/MM/DD, with anything after the day
// ("2026-03-02T10:00").
func isDate(w string) bool {
	if len(w) < 10 || !isDigits(w[:4]) || !isDigits(w[5:7]) || !isDigits(w[8:10]) {
		return false
	}
	return (w[4] == '-' && w[7] == '-') || (w[4] == '/' && w[7] == '/')
}

// isVersion matches v1, v1.2, 1.2.3, go1.26 and the like.
func isVersion(w string) bool {
	w = strings.TrimPrefix(strings.ToLower(w), "v")
	w = strings.TrimPrefix(w, "go")
	parts := strings.Split(w, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if !isDigits(p) {
			return false
		}
	}
	return true
}

// hasExtension matches "deploy.sh", "go.mod", "MEMORY.md": a dot between
// letters, not a sentence's end.
func hasExtension(w string) bool {
	i := strings.LastIndexByte(w, '.')
	if i <= 0 || i == len(w)-1 {
		return false
	}
	ext := w[i+1:]
	if len(ext) > 5 {
		return false
	}
	for _, r := range ext {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// isIdentifier matches snake_case, camelCase, pkg.Func, a::b, f() and
// kebab-case with a digit or more than one dash.
func isIdentifier(w string) bool {
	if strings.ContainsAny(w, "_()") || strings.Contains(w, "::") || strings.Contains(w, "=") {
		return true
	}
	prevLower := false
	for i, r := range w {
		if i > 0 && unicode.IsUpper(r) && prevLower {
			return true // camelCase, PagerDuty
		}
		prevLower = unicode.IsLower(r)
	}
	return strings.Count(w, ".") > 0 && !strings.HasSuffix(w, ".")
}

// isName matches a capitalised word: "Alice", "Loki", "Postgres".
func isName(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) && w != "I"
}

func isAllCaps(w string) bool {
	letters := 0
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters > 0
}

// Skeleton is text's words in order with each value replaced by its kind
// ("<number>", "<date>", ...), lowercased, punctuation dropped: two
// statements of the same thing with different values have one skeleton.
func Skeleton(text string) []string {
	var out []string
	for _, t := range tokens(text) {
		switch {
		case t.value != "":
			out = append(out, "<"+t.value+">")
		case strings.IndexFunc(t.text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0:
			w := t.text
			if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
				w = w[:len(w)-1] // "services" and "service" are one word here
			}
			out = append(out, w)
		}
	}
	return out
}
