package evidence

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Shown is one thing the model was shown from outside the memory: the
// result of a tool call on a transcript or a repository file.
type Shown struct {
	// Tool is the tool that showed it: "read" shows one file, Source;
	// "grep" shows lines of many, each as "path:line:text"; "glob" and
	// "ls" list paths under Source.
	Tool string `json:"tool"`
	// Source is the path read or searched.
	Source string `json:"source"`
	Text   string `json:"text"`
}

// Contradiction is a value the dream's own checks found untrue: a path or
// name a memory states that the repository no longer has (a drift lead).
type Contradiction struct {
	Value string `json:"value"`
	Why   string `json:"why"`
}

// Citation is the model's own account of the evidence for a change, as it
// gave it in an edit or write call: the memory file changed, the file it
// cites and the words it quotes from it. A citation is checked, never
// trusted: it counts only when the quote is in what a tool showed the model
// from that file.
type Citation struct {
	File   string `json:"file"`
	Source string `json:"source"`
	Quote  string `json:"quote"`
}

// Corpus is everything a dream's model was shown from outside the memory.
type Corpus struct {
	shown     []Shown
	contra    map[string]Contradiction
	citations []Citation
}

// NewCorpus holds what the model was shown, what the checks contradicted
// and the model's citations (only those whose quote is in shown are kept).
func NewCorpus(shown []Shown, contradictions []Contradiction, citations []Citation) *Corpus {
	c := &Corpus{shown: shown, contra: map[string]Contradiction{}}
	for _, x := range contradictions {
		c.contra[strings.ToLower(x.Value)] = x
	}
	for _, ct := range citations {
		if c.Quoted(ct.Source, ct.Quote) {
			c.citations = append(c.citations, ct)
		}
	}
	return c
}

// Quoted reports whether quote (spaces collapsed) is in something shown
// from source.
func (c *Corpus) Quoted(source, quote string) bool { return Quoted(c.shown, source, quote) }

// Quoted reports whether quote (spaces collapsed) is in what shown holds of
// the file source: a read of it, or a grep line from it.
func Quoted(shown []Shown, source, quote string) bool {
	q := collapse(quote)
	if q == "" {
		return false
	}
	for _, s := range shown {
		switch {
		case s.Tool == "read" && s.Source == source:
			if strings.Contains(collapse(s.Text), q) {
				return true
			}
		case s.Tool == "grep":
			for _, line := range strings.Split(s.Text, "\n") {
				if rest, ok := strings.CutPrefix(line, source+":"); ok && strings.Contains(collapse(rest), q) {
					return true
				}
			}
		}
	}
	return false
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// Support is where a change's evidence was found.
type Support struct {
	Source string `json:"source"`
	Quote  string `json:"quote"`
	// By says which rule: "cited" (the model's citation, checked),
	// "shown" (the new value is in a tool result), "contradicted" (the
	// old value is untrue), "dated heading" (a date set to its section's).
	By string `json:"by"`
}

// Judge decides whether a rewrite of old into new in memory file file, whose
// old text stood under the headings path, is supported. A change that is
// not a changed value or polarity needs no support (ok, zero Support).
func (c *Corpus) Judge(file, old, new string, path []string) (Change, Support, bool) {
	ch := Compare(old, new)
	if !ch.Changed() {
		return ch, Support{}, true
	}
	if ch.Negation {
		s, ok := c.statement(file, new)
		return ch, s, ok
	}
	if s, ok := c.cited(file, ch.Added); ok {
		return ch, s, true
	}
	if s, ok := c.find(ch.Added); ok {
		return ch, s, true
	}
	if s, ok := c.Contradicted(ch.Removed); ok {
		return ch, s, true
	}
	if s, ok := datedHeading(ch, path); ok {
		return ch, s, true
	}
	return ch, Support{}, false
}

// cited is a checked citation on file that states every value.
func (c *Corpus) cited(file string, vs []Value) (Support, bool) {
	for _, ct := range c.citations {
		if ct.File != file {
			continue
		}
		all := true
		for _, v := range vs {
			if indexToken(ct.Quote, v.Text) < 0 {
				all = false
				break
			}
		}
		if all {
			return Support{Source: ct.Source, Quote: clip(collapse(ct.Quote), 200), By: "cited"}, true
		}
	}
	return Support{}, false
}

// find looks for every value in one thing shown.
func (c *Corpus) find(vs []Value) (Support, bool) {
	for _, s := range c.shown {
		at := -1
		for _, v := range vs {
			i := indexToken(s.Text, v.Text)
			if i < 0 {
				at = -1
				break
			}
			if at < 0 {
				at = i
			}
		}
		if at >= 0 {
			return Support{Source: s.Source, Quote: around(s.Text, at), By: "shown"}, true
		}
	}
	return Support{}, false
}

// Contradicted reports whether the checks found every value untrue.
func (c *Corpus) Contradicted(vs []Value) (Support, bool) {
	if len(vs) == 0 {
		return Support{}, false
	}
	var why []string
	for _, v := range vs {
		x, ok := c.contra[v.key()]
		if !ok {
			return Support{}, false
		}
		why = append(why, x.Why)
	}
	return Support{Source: "drift check", Quote: strings.Join(why, "; "), By: "contradicted"}, true
}

// statement finds a negated or affirmed statement in what was shown (or a
// checked citation) that says what new says: the same polarity and most of
// its words, within one sentence.
func (c *Corpus) statement(file, new string) (Support, bool) {
	want := negated(tokens(new))
	ws := words(new)
	if len(ws) == 0 {
		return Support{}, false
	}
	match := func(text string) (string, bool) {
		for _, sent := range sentences(text) {
			if negated(tokens(sent)) != want {
				continue
			}
			have := map[string]bool{}
			for _, w := range words(sent) {
				have[w] = true
			}
			n := 0
			for _, w := range ws {
				if have[w] {
					n++
				}
			}
			if float64(n) >= 0.6*float64(len(ws)) {
				return sent, true
			}
		}
		return "", false
	}
	for _, ct := range c.citations {
		if ct.File == file {
			if s, ok := match(ct.Quote); ok {
				return Support{Source: ct.Source, Quote: clip(collapse(s), 200), By: "cited"}, true
			}
		}
	}
	for _, s := range c.shown {
		if q, ok := match(s.Text); ok {
			return Support{Source: s.Source, Quote: clip(collapse(q), 200), By: "shown"}, true
		}
	}
	return Support{}, false
}

// sentences splits text where a statement ends: a sentence mark, a line
// break, or a JSON string's quote (transcripts are JSONL).
func sentences(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return r == '.' || r == '!' || r == '?' || r == '\n' || r == '"' || r == '。' || r == ';'
	})
}

// datedHeading supports dates set to the date of the section the unit stood
// in: "## 2026-03-02" over "- Migrated on 2026-03-20" makes 2026-03-02 the
// date the line was written under.
func datedHeading(ch Change, path []string) (Support, bool) {
	if len(path) == 0 {
		return Support{}, false
	}
	dates := map[string]string{}
	for _, h := range path {
		for _, v := range Values(h) {
			if v.Kind == KindDate {
				dates[v.Text[:10]] = h
			}
		}
	}
	var heading string
	for _, v := range ch.Added {
		h, ok := dates[v.Text]
		if v.Kind != KindDate || !ok {
			return Support{}, false
		}
		heading = h
	}
	for _, v := range ch.Removed {
		if v.Kind != KindDate {
			return Support{}, false
		}
	}
	return Support{Source: "the unit's heading", Quote: heading, By: "dated heading"}, true
}

// indexToken finds v in text as a whole token: not inside a longer number,
// word or path ("8081" is not in "18081"), case folded.
func indexToken(text, v string) int {
	if v == "" {
		return -1
	}
	lt, lv := strings.ToLower(text), strings.ToLower(v)
	for off := 0; ; {
		i := strings.Index(lt[off:], lv)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(lt[:i])
		after, _ := utf8.DecodeRuneInString(lt[i+len(lv):])
		if !inToken(before) && !inToken(after) {
			return i
		}
		off = i + 1
	}
}

// inToken: a letter or digit continues a token; anything else (also the
// emphasis marks a value was read without) ends it.
func inToken(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// around is the text near offset i, on one line, for a report.
func around(text string, i int) string {
	start := max(0, i-80)
	end := min(len(text), i+120)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	s := collapse(text[start:end])
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
