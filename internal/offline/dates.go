package offline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dreamkit/dream/internal/memory"
)

// A relative date ("yesterday", "上周") means nothing to the agent that reads
// it weeks later, but it may be rewritten only when the day its line was
// written is known: the file's modification time is the time of its last
// append (or of a copy), not of this line. So the anchor is, in order, a
// dated heading above the line, then the Provenance (the transcript call
// that wrote the line, a one-day audit window). Without one the phrase is a
// lead.
//
// A phrase is a date only in prose, as a whole word (for CJK: opening a
// clause, after punctuation, the line start or a non-CJK character, so
// 目前天津 and 提前天数 hold no 前天), and not when it is a name ("The Today screen", Today.tsx),
// a label ("Today:", "Yesterday, Today, Blockers"), quoted, possessive, or
// about recurring time ("the last week of every quarter", "older than 30
// days ago").

// datePatterns are compiled on first use, once per process.
var datePatterns = sync.OnceValue(func() struct{ en, zh, headingDate *regexp.Regexp } {
	num := `\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve`
	wd := `monday|tuesday|wednesday|thursday|friday|saturday|sunday`
	return struct{ en, zh, headingDate *regexp.Regexp }{
		en:          regexp.MustCompile(`(?i)\b(?:the day before yesterday|the day after tomorrow|yesterday|today|tomorrow|tonight|last night|this (?:morning|afternoon|evening|week|month|year)|(?:last|next) (?:week|month|year)|last (?:` + wd + `)|(?:` + num + `) (?:day|week|month|year)s? ago)\b`),
		zh:          regexp.MustCompile(`大前天|前天|昨天|昨日|昨晚|今天|今日|今晚|今早|明天|后天|本周|这周|上个?星期|上礼拜|上周|下周|本月|上个?月|下个?月|今年|去年|明年|(?:[0-9]{1,3}|[一二两三四五六七八九十]{1,3}) ?(?:天|周|个星期|个月|年)前`),
		headingDate: regexp.MustCompile(`(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})|(\d{4})年(\d{1,2})月(\d{1,2})日`),
	}
})

// Provenance knows when lines were written.
type Provenance interface {
	// WrittenOn returns the day on which the line (its text, trimmed) of
	// the memory file rel was written, when that day is known exactly.
	WrittenOn(rel, line string) (time.Time, bool)
}

// KindUndatedRelativeDate is the lead for a relative date with no anchor.
const KindUndatedRelativeDate = "undated_relative_date"

func (s *state) fixDatesIn(f *file) {
	p := datePatterns()
	d := f.doc
	if len(d.Prose) == 0 || !mayHoldDates(d.Src) {
		return // no cue word and no ideograph anywhere in the file
	}
	edit := s.roles.mayEdit(f.rel)
	blocks := s.roles.blocks(f)
	{
		for _, run := range d.Prose {
			seg := string(d.Src[run.Start:run.End])
			u := d.Units[run.Unit]
			for _, m := range findPhrases(p.en, p.zh, seg) {
				ms, me := run.Start+m[0], run.Start+m[1]
				phrase := string(d.Src[ms:me])
				if !isDatePhrase(d, u, ms, me, phrase) {
					continue
				}
				anchor, ok := s.anchor(f, u, ms)
				if !ok {
					s.lead(f, KindUndatedRelativeDate, ms, fmt.Sprintf("%q: the day this line was written is unknown (no dated heading, transcript call or one-day audit window)", phrase))
					continue
				}
				r, ok := resolve(phrase, anchor)
				if !ok {
					continue
				}
				r = phrase2prose(d, u, ms, phrase, r)
				if !edit || blocks.refused || blocks.inHeader(ms, me) || d.PinnedLine(ms) || !f.splice(ms, me, r) {
					continue
				}
				s.fix(f, KindRelativeDate, ms, me, fmt.Sprintf("%q → %q (written %s)", phrase, r, anchor.Format("2006-01-02")))
			}
		}
	}
}

// mayHoldDates is a filter over a whole file, run once: a relative date
// needs one of the English cue words or an ideograph, and most memory
// files hold neither, so their prose is never matched run by run.
func mayHoldDates(src []byte) bool {
	for _, c := range src {
		if c >= 0x80 {
			return true // possibly CJK: let the runs decide
		}
	}
	return hasASCIICue(src)
}

// findPhrases returns the match ranges of both patterns in seg, in order:
// each pattern's FindAllStringIndex, run only where a cheap filter says it
// can match at all (FuzzFindPhrases holds this to the patterns alone).
func findPhrases(en, zh *regexp.Regexp, seg string) [][]int {
	var out [][]int
	if hasEnglishCue(seg) {
		out = append(out, en.FindAllStringIndex(seg, -1)...)
	}
	if hasChineseCue(seg) {
		out = append(out, zh.FindAllStringIndex(seg, -1)...)
	}
	return out
}

// enCues are words every English phrase contains one of: a cheap filter
// that spares the regular expression most of the prose.
var enCues = []string{"yesterday", "today", "tomorrow", "tonight", "last", "this", "next", "ago"}

func hasEnglishCue(s string) bool {
	if isASCII(s) {
		return hasASCIICue(s)
	}
	l := strings.ToLower(s)
	if strings.Contains(l, "ſ") {
		// The pattern is case-insensitive, and U+017F (long s) folds to
		// s there, though ToLower keeps it: "yeſterday" is a match. It is
		// the only letter outside ASCII that folds to one of the cues'
		// (the Kelvin sign, the other one that folds into ASCII, is
		// lowered to k already).
		l = strings.ReplaceAll(l, "ſ", "s")
	}
	for _, c := range enCues {
		if strings.Contains(l, c) {
			return true
		}
	}
	return false
}

// hasASCIICue is hasEnglishCue of an ASCII string, without lowering a
// copy of it: each cue is looked for from each place where its first
// letter stands, in either case.
func hasASCIICue[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20 // lower case, for a letter
		if c != 'y' && c != 't' && c != 'l' && c != 'n' && c != 'a' {
			continue
		}
		for _, cue := range enCues {
			if cue[0] == c && len(s)-i >= len(cue) && equalFoldASCII(s[i:i+len(cue)], cue) {
				return true
			}
		}
	}
	return false
}

// equalFoldASCII reports whether s is lower, an ASCII word, in any case.
func equalFoldASCII[T string | []byte](s T, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// zhCues are characters every match of the Chinese pattern holds one of
// (天 日 晚 早 for the days and times, 周 期 拜 for the weeks, 月 for the
// months, 年 for the years: each alternative ends in one, or, for "N 天前"
// and the like, holds one before its 前). Most Chinese prose holds none,
// and is then never matched.
const zhCues = "天日晚早周期拜月年"

func hasChineseCue(s string) bool { return strings.ContainsAny(s, zhCues) }

// anchor is the day the line at off was written.
func (s *state) anchor(f *file, u memory.Unit, off int) (time.Time, bool) {
	for i := len(u.Path) - 1; i >= 0; i-- {
		if t, ok := headingDate(u.Path[i]); ok {
			return t, true
		}
	}
	if s.opts.Provenance != nil {
		d := f.doc
		line := strings.TrimSpace(string(d.Src[d.LineStart(off):d.LineEnd(off)]))
		if t, ok := s.opts.Provenance.WrittenOn(f.rel, line); ok {
			return day0(t), true
		}
	}
	return time.Time{}, false
}

// headingDate reads a full date written in a heading.
func headingDate(h string) (time.Time, bool) {
	if !hasDigit(h) {
		return time.Time{}, false // both forms start with four ASCII digits (\d is ASCII)
	}
	m := datePatterns().headingDate.FindStringSubmatch(h)
	if m == nil {
		return time.Time{}, false
	}
	y, mo, dd := m[1], m[2], m[3]
	if y == "" {
		y, mo, dd = m[4], m[5], m[6]
	}
	yi, _ := strconv.Atoi(y)
	mi, _ := strconv.Atoi(mo)
	di, _ := strconv.Atoi(dd)
	t := time.Date(yi, time.Month(mi), di, 12, 0, 0, 0, time.UTC)
	if t.Month() != time.Month(mi) || t.Day() != di {
		return time.Time{}, false
	}
	return t, true
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func day0(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 12, 0, 0, 0, time.UTC)
}

// recurringWords mark a sentence about recurring or relative spans of time,
// in which a date word names no day.
var recurringWords = []string{"every", "each", "older than", "newer than", "within", "whenever", "每"}

// isDatePhrase applies the rules that tell a date from a name, a label, a
// quotation or a rule.
func isDatePhrase(d *memory.Doc, u memory.Unit, ms, me int, phrase string) bool {
	src := d.Src
	before, _ := utf8.DecodeLastRune(src[:ms])
	after, _ := utf8.DecodeRune(src[me:])
	first, _ := utf8.DecodeRuneInString(phrase)
	if memory.IsCJK(first) {
		// CJK has no spaces: the phrase must open a clause (after the line
		// start, punctuation or a non-CJK character), or it is the middle
		// of a word: 目前天津 holds no 前天, 提前天数 none either.
		if ms > d.LineStart(ms) && memory.IsCJK(before) {
			return false
		}
	} else {
		// Part of a file name, path, identifier or URL.
		if strings.ContainsRune("/._-\\@#", before) || strings.ContainsRune("/_-\\@", after) {
			return false
		}
		if after == '.' && me+1 < len(src) {
			if n, _ := utf8.DecodeRune(src[me+1:]); unicode.IsLetter(n) || unicode.IsDigit(n) {
				return false
			}
		}
		if after == '\'' || after == '’' { // yesterday's: a possessive reads badly as a date
			return false
		}
		if unicode.IsUpper(first) && !sentenceStart(d, u, ms) {
			return false // a name: "The Today screen"
		}
	}
	if after == ':' || after == '：' {
		return false // a label: "Today: …"
	}
	line := string(src[d.LineStart(ms):d.LineEnd(ms)])
	if isTemplateLine(line) {
		return false
	}
	sent := strings.ToLower(sentenceAround(string(src[u.Start:u.End]), ms-u.Start, me-u.Start))
	for _, w := range recurringWords {
		if strings.Contains(sent, w) {
			return false
		}
	}
	rest := strings.ToLower(string(src[me:min(len(src), me+4)]))
	if strings.HasPrefix(rest, " of ") {
		return false // "the last week of the quarter"
	}
	return !insideQuotes(string(src[u.Start:ms]))
}

// sentenceStart reports whether ms begins a sentence of its unit.
func sentenceStart(d *memory.Doc, u memory.Unit, ms int) bool {
	i := ms
	for i > u.Start {
		r, n := utf8.DecodeLastRune(d.Src[:i])
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			i -= n
			continue
		}
		if strings.ContainsRune(".!?。！？", r) {
			return true
		}
		// Only list markers (and a task box) between the line start and here.
		ls := d.LineStart(i - 1)
		head := strings.TrimSpace(string(d.Src[ls:i]))
		head = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(head, "[ ]"), "[x]"))
		return ls == u.Start && isMarkerOnly(head)
	}
	return true
}

func isMarkerOnly(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range []string{"[ ]", "[x]", "[X]"} {
		s = strings.TrimSpace(strings.TrimSuffix(s, p))
	}
	if s == "" || s == "-" || s == "*" || s == "+" || s == ">" {
		return true
	}
	if t := strings.TrimRight(s, ".)"); t != s && t != "" {
		_, err := strconv.Atoi(t)
		return err == nil
	}
	return false
}

// isTemplateLine spots a line listing date words as labels ("Yesterday,
// Today, Blockers"; "today / tomorrow").
func isTemplateLine(line string) bool {
	p := datePatterns()
	ms := p.en.FindAllStringIndex(line, -1)
	for i := 1; i < len(ms); i++ {
		between := strings.TrimSpace(line[ms[i-1][1]:ms[i][0]])
		if between == "," || between == "/" || between == "|" || between == "&" || between == "and" || between == ", and" {
			return true
		}
	}
	return false
}

// sentenceAround is the sentence of text holding [a, b).
func sentenceAround(text string, a, b int) string {
	start := strings.LastIndexAny(text[:a], ".!?;。！？；\n") + 1
	if i := strings.LastIndex(text[:a], "\n\n"); i+2 > start {
		start = i + 2
	}
	end := len(text)
	if j := strings.IndexAny(text[b:], ".!?;。！？；"); j >= 0 {
		end = b + j
	}
	return text[start:end]
}

// insideQuotes reports whether text ends inside a quotation.
func insideQuotes(text string) bool {
	if strings.Count(text, `"`)%2 == 1 {
		return true
	}
	for _, q := range [][2]string{{"“", "”"}, {"「", "」"}, {"『", "』"}, {"‘", "’"}} {
		if strings.LastIndex(text, q[0]) > strings.LastIndex(text, q[1]) {
			return true
		}
	}
	return false
}

// dateForm is what a phrase resolves to: a day, or a span named by a day,
// month or year, written so that it reads as prose.
type dateForm struct {
	text string
	// prep is the preposition a bare use needs ("on", "in"); "" for CJK.
	prep string
}

var enNumbers = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

func ymd(t time.Time) string { return t.Format("2006-01-02") }

func monday(t time.Time) time.Time {
	wd := (int(t.Weekday()) + 6) % 7
	return t.AddDate(0, 0, -wd)
}

func monthOf(t time.Time, n int) string {
	first := time.Date(t.Year(), t.Month(), 1, 12, 0, 0, 0, time.UTC)
	return first.AddDate(0, n, 0).Format("2006-01")
}

// resolve turns a phrase into its date, written as it should read in place.
func resolve(phrase string, a time.Time) (string, bool) {
	f, ok := resolveForm(phrase, a)
	if !ok {
		return "", false
	}
	if f.prep == "" {
		return f.text, true
	}
	return f.prep + " " + f.text, true
}

func resolveForm(phrase string, a time.Time) (dateForm, bool) {
	l := strings.ToLower(collapseSpace(phrase))
	dayF := func(n int) (dateForm, bool) { return dateForm{ymd(a.AddDate(0, 0, n)), "on"}, true }
	weekF := func(n int) (dateForm, bool) {
		return dateForm{"the week of " + ymd(monday(a).AddDate(0, 0, 7*n)), "in"}, true
	}
	switch l {
	case "the day before yesterday":
		return dayF(-2)
	case "yesterday":
		return dayF(-1)
	case "today":
		return dayF(0)
	case "tomorrow":
		return dayF(1)
	case "the day after tomorrow":
		return dayF(2)
	case "tonight":
		return dateForm{"the night of " + ymd(a), "on"}, true
	case "last night":
		return dateForm{"the night of " + ymd(a.AddDate(0, 0, -1)), "on"}, true
	case "this morning", "this afternoon", "this evening":
		return dateForm{"the " + strings.TrimPrefix(l, "this ") + " of " + ymd(a), "on"}, true
	case "this week":
		return weekF(0)
	case "last week":
		return weekF(-1)
	case "next week":
		return weekF(1)
	case "this month":
		return dateForm{monthOf(a, 0), "in"}, true
	case "last month":
		return dateForm{monthOf(a, -1), "in"}, true
	case "next month":
		return dateForm{monthOf(a, 1), "in"}, true
	case "this year":
		return dateForm{strconv.Itoa(a.Year()), "in"}, true
	case "last year":
		return dateForm{strconv.Itoa(a.Year() - 1), "in"}, true
	case "next year":
		return dateForm{strconv.Itoa(a.Year() + 1), "in"}, true
	}
	if wd, ok := strings.CutPrefix(l, "last "); ok {
		for i := 1; i <= 7; i++ {
			if d := a.AddDate(0, 0, -i); strings.ToLower(d.Weekday().String()) == wd {
				return dateForm{ymd(d), "on"}, true
			}
		}
	}
	f := strings.Fields(l)
	if len(f) == 3 && f[2] == "ago" {
		n, ok := number(f[0])
		if !ok {
			return dateForm{}, false
		}
		switch strings.TrimSuffix(f[1], "s") {
		case "day":
			return dayF(-n)
		case "week":
			return weekF(-n)
		case "month":
			return dateForm{monthOf(a, -n), "in"}, true
		case "year":
			return dateForm{strconv.Itoa(a.Year() - n), "in"}, true
		}
		return dateForm{}, false
	}
	return resolveChinese(phrase, a)
}

func number(s string) (int, bool) {
	if n, ok := enNumbers[s]; ok {
		return n, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

func resolveChinese(m string, a time.Time) (dateForm, bool) {
	d := func(n int) (dateForm, bool) { return dateForm{text: ymd(a.AddDate(0, 0, n))}, true }
	wk := func(n int) (dateForm, bool) {
		return dateForm{text: ymd(monday(a).AddDate(0, 0, 7*n)) + " 那周"}, true
	}
	switch m {
	case "大前天":
		return d(-3)
	case "前天":
		return d(-2)
	case "昨天", "昨日":
		return d(-1)
	case "昨晚":
		return dateForm{text: ymd(a.AddDate(0, 0, -1)) + " 晚上"}, true
	case "今天", "今日":
		return d(0)
	case "今晚":
		return dateForm{text: ymd(a) + " 晚上"}, true
	case "今早":
		return dateForm{text: ymd(a) + " 早上"}, true
	case "明天":
		return d(1)
	case "后天":
		return d(2)
	case "本周", "这周":
		return wk(0)
	case "上周", "上星期", "上个星期", "上礼拜":
		return wk(-1)
	case "下周":
		return wk(1)
	case "本月":
		return dateForm{text: monthOf(a, 0)}, true
	case "上月", "上个月":
		return dateForm{text: monthOf(a, -1)}, true
	case "下月", "下个月":
		return dateForm{text: monthOf(a, 1)}, true
	case "今年":
		return dateForm{text: strconv.Itoa(a.Year()) + "年"}, true
	case "去年":
		return dateForm{text: strconv.Itoa(a.Year()-1) + "年"}, true
	case "明年":
		return dateForm{text: strconv.Itoa(a.Year()+1) + "年"}, true
	}
	r := []rune(strings.ReplaceAll(m, " ", ""))
	if len(r) < 3 || r[len(r)-1] != '前' {
		return dateForm{}, false
	}
	body := string(r[:len(r)-1])
	for _, unit := range []string{"个星期", "个月", "天", "周", "年"} {
		numPart, ok := strings.CutSuffix(body, unit)
		if !ok {
			continue
		}
		n, ok := chineseNumber(numPart)
		if !ok || n == 0 {
			return dateForm{}, false
		}
		switch unit {
		case "天":
			return d(-n)
		case "周", "个星期":
			return wk(-n)
		case "个月":
			return dateForm{text: monthOf(a, -n)}, true
		case "年":
			return dateForm{text: strconv.Itoa(a.Year()-n) + "年"}, true
		}
	}
	return dateForm{}, false
}

// chineseNumber reads 1–99 written in digits or Chinese numerals.
func chineseNumber(s string) (int, bool) {
	if v, err := strconv.Atoi(s); err == nil {
		return v, true
	}
	digit := map[rune]int{'一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	r := []rune(s)
	switch {
	case len(r) == 1 && r[0] == '十':
		return 10, true
	case len(r) == 1:
		v, ok := digit[r[0]]
		return v, ok
	case len(r) == 2 && r[0] == '十':
		v, ok := digit[r[1]]
		return 10 + v, ok
	case len(r) == 2 && r[1] == '十':
		v, ok := digit[r[0]]
		return v * 10, ok
	case len(r) == 3 && r[1] == '十':
		a, ok1 := digit[r[0]]
		b, ok2 := digit[r[2]]
		return a*10 + b, ok1 && ok2
	}
	return 0, false
}

// prepositions before which a date stands bare: "since 2026-11-29", not
// "since on 2026-11-29".
var prepositions = []string{"on", "since", "until", "till", "by", "before", "after", "from", "of", "to", "as of", "through", "during", "in", "at", "for", "starting", "around", "until", "between", "and"}

// phrase2prose writes the resolved date so that the sentence still reads:
// "Yesterday we added" → "On 2026-11-29 we added", "added it yesterday" →
// "added it on 2026-11-29", "since yesterday" → "since 2026-11-29".
func phrase2prose(d *memory.Doc, u memory.Unit, ms int, phrase, resolved string) string {
	prep, bare, found := strings.Cut(resolved, " ")
	if !found || !(prep == "on" || prep == "in") {
		return resolved // CJK forms carry no preposition
	}
	prev := strings.ToLower(lastWord(string(d.Src[u.Start:ms])))
	for _, p := range prepositions {
		if prev == p || strings.HasSuffix(strings.ToLower(strings.TrimSpace(string(d.Src[u.Start:ms]))), " "+p) && strings.Contains(p, " ") {
			return bare
		}
	}
	if first, _ := utf8.DecodeRuneInString(phrase); unicode.IsUpper(first) || sentenceStart(d, u, ms) {
		return strings.ToUpper(resolved[:1]) + resolved[1:]
	}
	return resolved
}

func lastWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[len(f)-1], "*_(")
}
