package offline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A relative date means nothing to the agent that reads it weeks later, so
// each is rewritten to an ISO date computed from the file's time.
//
// Conventions, chosen so that every rewrite is a certain consequence of the
// words and the file time, never a guess:
//   - a day ("yesterday", "3 days ago", "前天") becomes that day, YYYY-MM-DD;
//   - "this morning" becomes "the morning of YYYY-MM-DD";
//   - "last week" becomes "the week of YYYY-MM-DD", the day seven days
//     before, because "last week" names a week and not a day;
//     "N weeks ago" is a day, N×7 days before;
//   - "last month" and "N months ago" become "the month of YYYY-MM", as a
//     day would claim precision the words do not have;
//   - in Chinese, 上周 becomes "YYYY-MM-DD 那周" and 上个月 "YYYY-MM".
//
// Vague phrases ("a few days ago", "recently", "最近") are left alone.
var (
	enDateRE = regexp.MustCompile(`(?i)\b(the day before yesterday|yesterday|today|this (morning|afternoon|evening)|last (week|month)|(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve) (day|week|month)s? ago)\b`)
	zhDateRE = regexp.MustCompile(`大前天|前天|昨天|昨日|今天|上个?星期|上礼拜|上周|上个?月|([0-9]{1,3}|[一二两三四五六七八九十]{1,3}) ?(天|日|周|个星期|星期|个月)前`)
)

var enNumbers = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

// fixDates rewrites relative dates in every file outside code and pins.
func (s *state) fixDates() {
	for _, d := range s.docs {
		fence := d.fences()
		for i := range d.lines {
			l := &d.lines[i]
			if fence[i] || isPinned(l.text) {
				continue
			}
			out, changes := rewriteDates(l.text, d.time)
			if len(changes) == 0 {
				continue
			}
			l.text = out
			for _, c := range changes {
				s.fixes = append(s.fixes, Fix{Kind: KindRelativeDate, File: d.rel, Line: l.orig,
					Detail: fmt.Sprintf("%q → %q (file time %s)", c[0], c[1], d.time.Format("2006-01-02"))})
			}
		}
	}
}

// rewriteDates rewrites the relative dates of one line outside `code spans`
// and returns the pairs (old, new) it replaced.
func rewriteDates(text string, t time.Time) (string, [][2]string) {
	var changes [][2]string
	segs := strings.Split(text, "`")
	// Even segments are outside code spans; text after an unmatched
	// backtick has an odd index and is left as written.
	for k := 0; k < len(segs); k += 2 {
		segs[k] = replaceOutsideLinks(segs[k], t, &changes)
	}
	return strings.Join(segs, "`"), changes
}

// linkRE matches what names a place rather than a time: a markdown link
// destination, an autolink and a bare URL. A "today" inside a path or a URL
// is part of a name; rewriting it would break the link.
var linkRE = regexp.MustCompile(`\]\([^)]*\)|<[^<>\s]+>|(?i)\b(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>]+`)

// replaceOutsideLinks rewrites the dates of s outside links and URLs.
func replaceOutsideLinks(s string, t time.Time, changes *[][2]string) string {
	var out strings.Builder
	last := 0
	for _, loc := range linkRE.FindAllStringIndex(s, -1) {
		out.WriteString(replaceDates(s[last:loc[0]], t, changes))
		out.WriteString(s[loc[0]:loc[1]])
		last = loc[1]
	}
	out.WriteString(replaceDates(s[last:], t, changes))
	return out.String()
}

func replaceDates(s string, t time.Time, changes *[][2]string) string {
	s = enDateRE.ReplaceAllStringFunc(s, func(m string) string {
		r := resolveEnglish(m, t)
		if r == "" {
			return m
		}
		if first, _ := utf8.DecodeRuneInString(m); unicode.IsUpper(first) && strings.HasPrefix(r, "the ") {
			r = "The" + r[3:]
		}
		*changes = append(*changes, [2]string{m, r})
		return r
	})
	var out strings.Builder
	last := 0
	for _, loc := range zhDateRE.FindAllStringSubmatchIndex(s, -1) {
		m := s[loc[0]:loc[1]]
		next, _ := utf8.DecodeRuneInString(s[loc[1]:])
		r := ""
		if !(strings.HasPrefix(m, "上周") && next == '期') { // 上周期: "the previous cycle"
			r = resolveChinese(m, t)
		}
		if r == "" {
			continue
		}
		out.WriteString(s[last:loc[0]])
		out.WriteString(r)
		last = loc[1]
		*changes = append(*changes, [2]string{m, r})
	}
	if last == 0 {
		return s
	}
	out.WriteString(s[last:])
	return out.String()
}

func day(t time.Time, days int) string { return t.AddDate(0, 0, days).Format("2006-01-02") }

// month is the calendar month n months before t; counted from the first of
// the month so that 31 March minus one month is February, not 3 March.
func month(t time.Time, n int) string {
	first := time.Date(t.Year(), t.Month(), 1, 12, 0, 0, 0, t.Location())
	return first.AddDate(0, -n, 0).Format("2006-01")
}

func resolveEnglish(m string, t time.Time) string {
	l := strings.ToLower(collapseSpace(m))
	switch l {
	case "the day before yesterday":
		return day(t, -2)
	case "yesterday":
		return day(t, -1)
	case "today":
		return day(t, 0)
	case "last week":
		return "the week of " + day(t, -7)
	case "last month":
		return "the month of " + month(t, 1)
	}
	if part, ok := strings.CutPrefix(l, "this "); ok {
		return "the " + part + " of " + day(t, 0)
	}
	f := strings.Fields(l) // N unit(s) ago
	if len(f) != 3 {
		return ""
	}
	n, ok := enNumbers[f[0]]
	if !ok {
		v, err := strconv.Atoi(f[0])
		if err != nil {
			return ""
		}
		n = v
	}
	switch strings.TrimSuffix(f[1], "s") {
	case "day":
		return day(t, -n)
	case "week":
		return day(t, -7*n)
	case "month":
		return "the month of " + month(t, n)
	}
	return ""
}

func resolveChinese(m string, t time.Time) string {
	switch m {
	case "大前天":
		return day(t, -3)
	case "前天":
		return day(t, -2)
	case "昨天", "昨日":
		return day(t, -1)
	case "今天":
		return day(t, 0)
	case "上周", "上星期", "上个星期", "上礼拜":
		return day(t, -7) + " 那周"
	case "上月", "上个月":
		return month(t, 1)
	}
	sub := zhDateRE.FindStringSubmatch(m)
	if sub == nil || sub[1] == "" {
		return ""
	}
	n, ok := chineseNumber(sub[1])
	if !ok || n == 0 {
		return ""
	}
	switch sub[2] {
	case "天", "日":
		return day(t, -n)
	case "周", "星期", "个星期":
		return day(t, -7*n)
	case "个月":
		return month(t, n)
	}
	return ""
}

// chineseNumber reads 0–99 written in digits or Chinese numerals.
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
