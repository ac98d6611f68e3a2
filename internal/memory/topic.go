package memory

import (
	"strings"
)

// ParseTopic parses a topic file. path is recorded as given. It never fails:
// a file without a closed "---" block at its very start has Frontmatter false
// and its whole text as Body.
func ParseTopic(path string, data []byte) Topic {
	t := Topic{Path: path, Raw: data, Body: string(data), BodyLine: 1}
	text := strings.TrimPrefix(string(data), "\ufeff")
	bom := len(data) - len(text)
	first, rest, ok := cutLine(text)
	if !ok || strings.TrimRight(first, " \t\r") != "---" {
		return t
	}
	var block []string
	consumed := len(text) - len(rest)
	for line := 2; ; line++ {
		l, r, more := cutLine(rest)
		if !more && l == "" {
			return t // unterminated: not a frontmatter
		}
		consumed += len(rest) - len(r)
		rest = r
		trimmed := strings.TrimRight(l, " \t\r")
		if trimmed == "---" || trimmed == "..." {
			t.Frontmatter = true
			t.Fields = parseFields(block)
			t.Name = t.Fields["name"]
			t.Description = t.Fields["description"]
			t.Type = t.Fields["type"]
			t.Body = string(data[bom+consumed:])
			t.BodyLine = line + 1
			return t
		}
		block = append(block, strings.TrimSuffix(l, "\r"))
		if !more {
			return t
		}
	}
}

// cutLine returns the first line of s (without "\n"), the remainder, and
// whether a "\n" was found.
func cutLine(s string) (line, rest string, found bool) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// parseFields reads the flat "key: value" subset of YAML that memory
// frontmatter uses. Quoted values are unquoted; a "|" or ">" block scalar,
// or an empty value followed by indented lines, collects those lines. Lines
// it cannot read are skipped rather than rejected.
func parseFields(block []string) map[string]string {
	fields := map[string]string{}
	for i := 0; i < len(block); i++ {
		l := block[i]
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(l, ":")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			continue
		}
		val = strings.TrimSpace(val)
		if val == "" || val == "|" || val == ">" || val == "|-" || val == ">-" {
			var parts []string
			for i+1 < len(block) && (strings.HasPrefix(block[i+1], " ") || strings.HasPrefix(block[i+1], "\t")) {
				i++
				parts = append(parts, strings.TrimSpace(block[i]))
			}
			sep := " "
			if strings.HasPrefix(val, "|") {
				sep = "\n"
			}
			val = strings.Join(parts, sep)
		} else {
			val = unquote(stripComment(val))
		}
		fields[strings.ToLower(key)] = val
	}
	return fields
}

// stripComment removes a trailing " # comment" from an unquoted value.
func stripComment(v string) string {
	if v == "" || v[0] == '"' || v[0] == '\'' {
		return v
	}
	if i := strings.Index(v, " #"); i >= 0 {
		return strings.TrimSpace(v[:i])
	}
	return v
}

// unquote removes matching YAML quotes; in a single-quoted value a doubled
// quote is one quote, in a double-quoted one the common escapes are honoured.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		r := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n", `\t`, "\t")
		return r.Replace(v[1 : len(v)-1])
	}
	return v
}

// Heading returns the text of the first markdown heading of the body, or "".
func (t *Topic) Heading() string {
	inFence := false
	for _, l := range SplitLines(t.Body) {
		s := strings.TrimSpace(l)
		if strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") {
			inFence = !inFence
			continue
		}
		if !inFence && strings.HasPrefix(s, "#") {
			h := strings.TrimSpace(strings.TrimLeft(s, "#"))
			if h != "" {
				return h
			}
		}
	}
	return ""
}
