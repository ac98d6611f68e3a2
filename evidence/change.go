package evidence

import "strings"

// Change is what a rewrite of one unit did to its values.
type Change struct {
	// Removed are values of the old text the new one no longer states,
	// Added values of the new text the old one did not state. A change of
	// value has both: a rewrite that only adds a value (a resolved date, a
	// detail) or only drops one is not a changed value.
	Removed []Value `json:"removed,omitempty"`
	Added   []Value `json:"added,omitempty"`
	// Negation is set when one text is negated and the other is not
	// ("always" ↔ "never", "do" ↔ "don't").
	Negation bool `json:"negation,omitempty"`
}

// Changed reports whether the rewrite changed a value or the polarity.
func (c Change) Changed() bool { return len(c.Removed) > 0 && len(c.Added) > 0 || c.Negation }

// Compare says what rewriting old into new did to the values.
func Compare(old, new string) Change {
	ot, nt := tokens(old), tokens(new)
	var c Change
	c.Removed = missing(ot, nt)
	c.Added = missing(nt, ot)
	if len(c.Removed) == 0 || len(c.Added) == 0 {
		c.Removed, c.Added = nil, nil
	}
	// A denial or an absolute ("never", "always", "must") the rewrite
	// drops turns or weakens what the memory says, however the rest is
	// worded ("Never commit .env" → "Commit .env files to the repo";
	// "never deploy on Fridays" → "avoid deploying on Fridays"); a denial
	// it adds does only when the statement is the same one, not a new
	// statement beside it ("short" → "short; no emoji").
	// Counted, not merely present: a paragraph keeps its other "never"
	// when one sentence's is weakened to "avoid".
	op, np := polarityOf(ot), polarityOf(nt)
	c.Negation = op.neg > np.neg || op.abs > np.abs || np.neg > op.neg && sameStatement(old, new)
	return c
}

// polarity counts a text's polarity words: its denials (negators) and its
// absolutes ("always", "never", "must").
type polarity struct{ neg, abs int }

// absolutes leave no exception; dropping one weakens a rule.
var absolutes = map[string]bool{"always": true, "never": true, "must": true, "mustn't": true, "总是": true, "从不": true, "必须": true}

func polarityOf(ts []token) polarity {
	var p polarity
	for _, t := range ts {
		w := strings.ReplaceAll(strings.ToLower(t.text), "’", "'")
		if negators[w] || strings.HasSuffix(w, "n't") {
			p.neg++
		}
		if absolutes[w] {
			p.abs++
		}
	}
	return p
}

// sameStatement reports whether two texts say the same words, polarity
// aside: "Always run migrations first" and "Never run migrations first"
// are one statement turned around, while "Replies short" and "Replies
// short; no emoji" add a statement rather than negate one.
func sameStatement(old, new string) bool {
	a, b := map[string]bool{}, map[string]bool{}
	for _, w := range words(old) {
		a[w] = true
	}
	for _, w := range words(new) {
		b[w] = true
	}
	differ, all := 0, len(a)
	for w := range a {
		if !b[w] {
			differ++
		}
	}
	for w := range b {
		if !a[w] {
			differ++
			all++
		}
	}
	return all > 0 && differ <= all/5
}

// missing are the values of a that b states in no form: neither as a value
// nor as a plain word ("Deploy" at a sentence's start and "deploy" later
// are one word).
func missing(a, b []token) []Value {
	have := map[string]bool{}
	for _, t := range b {
		have[valueKey(t.text)] = true
	}
	var out []Value
	seen := map[string]bool{}
	for _, t := range a {
		k := valueKey(t.text)
		if t.value == "" || have[k] || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, Value{Text: t.text, Kind: t.value})
	}
	return out
}

// negators turn a statement into its opposite.
var negators = map[string]bool{
	"not": true, "no": true, "never": true, "cannot": true, "without": true, "nothing": true, "none": true,
	"don't": true, "doesn't": true, "didn't": true, "isn't": true, "aren't": true, "wasn't": true, "weren't": true,
	"won't": true, "can't": true, "couldn't": true, "shouldn't": true, "mustn't": true, "needn't": true, "hasn't": true, "haven't": true,
	"dont": true, "doesnt": true, "isnt": true, "cant": true, "wont": true, "shouldnt": true,
	"disabled": true, "disable": true, "forbidden": true, "avoid": true,
	// The affirmatives a negation replaces: polarity words, never content.
	"always": false, "must": false, "should": false, "do": false, "does": false, "enabled": false, "enable": false,
	"不": true, "不要": true, "不能": true, "别": true, "禁止": true, "从不": true, "没有": true,
}

// negated reports whether a text says no: it holds a negator.
func negated(ts []token) bool {
	for _, t := range ts {
		w := strings.ReplaceAll(strings.ToLower(t.text), "’", "'")
		if negators[w] || strings.HasSuffix(w, "n't") {
			return true
		}
	}
	return false
}

// words are the lowercase prose words of a text of three letters or more,
// for matching a negated statement against what a transcript says.
func words(text string) []string {
	var out []string
	for _, t := range tokens(text) {
		w := strings.ToLower(t.text)
		if _, polar := negators[w]; len([]rune(w)) >= 3 && !polar {
			out = append(out, w)
		}
	}
	return out
}
