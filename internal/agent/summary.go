package agent

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dreamkit/dream/llm"
)

// Summary lengths: a turn summary is kept in a task entry's last-30 list and
// shown one per line, so it must stay short.
const (
	maxSummaryRunes = 160
	maxValueRunes   = 60
)

// oneLine collapses all whitespace runs to single spaces and cuts s to n
// runes, marking a cut with an ellipsis.
func oneLine(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	out := b.String()
	if utf8.RuneCountInString(out) <= n {
		return out
	}
	r := []rune(out)
	return string(r[:n-1]) + "…"
}

// turnSummary describes an assistant turn in one line: its text when it has
// some, else the list of its tool calls.
func turnSummary(resp *llm.Response) string {
	if t := oneLine(resp.Text(), maxSummaryRunes); t != "" {
		return t
	}
	calls := resp.ToolCalls()
	if len(calls) == 0 {
		return "(empty turn)"
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.Name + "(" + inputSummary(c.Input) + ")"
	}
	return oneLine(strings.Join(parts, ", "), maxSummaryRunes)
}

// leadingKeys are shown first in an input summary: they say what a call
// is about. Bulky fields (content, old_string, new_string) show their size.
var leadingKeys = []string{"file_path", "path", "pattern", "glob"}

// inputSummary renders a tool input as short key=value pairs.
func inputSummary(input json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(input, &m); err != nil || m == nil {
		return oneLine(string(input), maxValueRunes)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		for i, l := range leadingKeys {
			if k == l {
				return i
			}
		}
		return len(leadingKeys)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank(keys[i]), rank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+valueSummary(k, m[k]))
	}
	return oneLine(strings.Join(parts, " "), maxSummaryRunes)
}

func valueSummary(key string, v any) string {
	switch x := v.(type) {
	case string:
		switch key {
		case "content", "old_string", "new_string":
			return fmt.Sprintf("<%d bytes>", len(x))
		}
		return oneLine(x, maxValueRunes)
	case nil:
		return "null"
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return "?"
		}
		return oneLine(string(b), maxValueRunes)
	}
}
