package offline

import (
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// driftRE are the matchers of mentions, compiled on first use.
type driftREs struct {
	codeSpan, linkTarget, url, bareFile, ident, fileName, lineSuffix *regexp.Regexp
}

var driftPatterns = sync.OnceValue(func() driftREs {
	return driftREs{
		codeSpan:   regexp.MustCompile("`([^`\n]+)`"),
		linkTarget: regexp.MustCompile(`\]\([^)]*\)`),
		url:        regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+`),
		bareFile:   regexp.MustCompile(`(?:^|[\s(\["'])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(?:` + strings.ReplaceAll(sourceExts, " ", "|") + `))(?:$|[\s)\]"',.;:!?])`),
		ident:      regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$`),
		fileName:   regexp.MustCompile(`^[A-Za-z0-9_.-]+\.[A-Za-z0-9]{1,8}$`),
		lineSuffix: regexp.MustCompile(`:\d+(?::\d+)?$`),
	}
})

// driftSuspects lists the paths, file names and identifiers memory names
// that the repository does not contain. Only what is clearly code is
// checked: a path or file name, or an identifier in a code span that looks
// like one (camelCase, snake_case, qualified or called) — `make` or `Redis`
// are words, not symbols, and would only be noise.
//
// The list is sorted by file and line and capped at maxLeads, so files are
// visited in path order and the walk stops at the cap.
func driftSuspects(s *state, repo *repoIndex) []Suspect {
	order := make([]*file, 0, len(s.files))
	for _, f := range s.files {
		if f.sum != nil {
			order = append(order, f)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].rel < order[j].rel })
	var out []Suspect
	for _, f := range order {
		seen := map[string]bool{}
		for _, m := range f.sum.Mentions {
			sus := Suspect{Mention: m.Mention, Kind: m.Kind}
			if seen[m.Mention] || s.exists(m.Mention) || !missing(repo, sus) {
				continue
			}
			seen[m.Mention] = true
			sus.File, sus.Line = f.rel, int(m.Line)
			if out = append(out, sus); len(out) == maxLeads {
				return out
			}
		}
	}
	return out
}

// mentions extracts what a line names, in order of appearance.
func mentions(text string) []Suspect {
	var out []Suspect
	hasCode, hasExt := strings.IndexByte(text, '`') >= 0, dotLetter(text)
	if !hasCode && !hasExt {
		return nil // no code span and no ".ext": nothing for the patterns
	}
	if hasCode {
		for _, m := range driftPatterns().codeSpan.FindAllStringSubmatch(text, -1) {
			if s, ok := classify(strings.TrimSpace(m[1])); ok {
				out = append(out, s)
			}
		}
	}
	if !hasExt {
		return out
	}
	// Each pattern runs only where it can match: every code span holds a
	// backquote, every link target "](", every URL "://", and every bare
	// file name a source extension after a dot (hasSourceExt). The URL and
	// file patterns have no literal prefix for the matcher to search for,
	// and scanning all prose with them was most of the mentions' cost.
	prose := text
	if hasCode {
		prose = driftPatterns().codeSpan.ReplaceAllString(prose, " ")
	}
	if strings.Contains(prose, "](") {
		prose = driftPatterns().linkTarget.ReplaceAllString(prose, "]")
	}
	if strings.Contains(prose, "://") {
		prose = driftPatterns().url.ReplaceAllString(prose, " ")
	}
	if !hasSourceExt(prose) {
		return out
	}
	for _, m := range driftPatterns().bareFile.FindAllStringSubmatch(prose, -1) {
		if s, ok := classify(m[1]); ok {
			out = append(out, s)
		}
	}
	return out
}

// sourceExtSet is sourceExts as a set, built on first use.
var sourceExtSet = sync.OnceValue(func() map[string]bool { return extSet("", sourceExts) })

// hasSourceExt reports a '.' followed by one of sourceExts, whole (the
// letters and digits after the dot are exactly the extension) and followed
// by the end or a character the bareFile pattern ends a name on. Every
// bareFile match has one: its extension is letters and digits, and the
// character after it is not.
func hasSourceExt(s string) bool {
	for i := strings.IndexByte(s, '.'); i >= 0; {
		j := i + 1
		for j < len(s) && isASCIIAlnum(s[j]) {
			j++
		}
		if j > i+1 && (j == len(s) || endsBareFile(s[j])) && sourceExtSet()[s[i+1:j]] {
			return true
		}
		next := strings.IndexByte(s[j:], '.')
		if next < 0 {
			return false
		}
		i = j + next
	}
	return false
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// endsBareFile is the bareFile pattern's closing class, [\s)\]"',.;:!?],
// with \s as Go's regexp spells it: [\t\n\f\r ].
func endsBareFile(c byte) bool {
	switch c {
	case '\t', '\n', '\f', '\r', ' ', ')', ']', '"', '\'', ',', '.', ';', ':', '!', '?':
		return true
	}
	return false
}

// dotLetter reports a '.' followed by an ASCII letter, which every bare file
// name has (name.ext); the replacements before the bareFile match insert
// neither, so text without one yields no bare file name.
func dotLetter(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if c := s[i+1] | 0x20; s[i] == '.' && c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// classify decides what a mention is, or that it is none of our business.
func classify(c string) (Suspect, bool) {
	if c == "" || strings.ContainsAny(c, " \t*?{}[]<>$%~|=,;\"'") || strings.Contains(c, "://") || strings.HasPrefix(c, "-") {
		return Suspect{}, false
	}
	c = driftPatterns().lineSuffix.ReplaceAllString(c, "")
	if strings.Contains(c, "/") {
		if strings.HasPrefix(c, "/") || strings.Contains(c, "@") {
			return Suspect{}, false // absolute, or a module@version: not in the repo
		}
		c = strings.TrimSuffix(strings.TrimPrefix(c, "./"), "/")
		c = path.Clean(c)
		if c == "." || strings.HasPrefix(c, "..") || strings.HasPrefix(c, "/") {
			return Suspect{}, false
		}
		return Suspect{Mention: c, Kind: "path"}, true
	}
	if driftPatterns().fileName.MatchString(c) && fileExts()[strings.ToLower(strings.TrimPrefix(path.Ext(c), "."))] {
		return Suspect{Mention: c, Kind: "file"}, true
	}
	if driftPatterns().ident.MatchString(c) && symbolLike(c) {
		return Suspect{Mention: c, Kind: "identifier"}, true
	}
	return Suspect{}, false
}

// fileExts are the extensions that make a dotted name a file name rather
// than a qualified identifier (`config.yaml` versus `config.Load`).
var fileExts = sync.OnceValue(func() map[string]bool {
	return extSet("", sourceExts+" yaml yml toml json ini cfg conf lock txt md html css scss sum mod xml csv env")
})

// symbolLike keeps identifiers that can only be code.
func symbolLike(c string) bool {
	last := lastSegment(c)
	if len(last) < 4 && !strings.HasSuffix(c, "()") {
		return false
	}
	if strings.HasSuffix(c, "()") || strings.Contains(c, ".") || strings.Contains(c, "::") || strings.Contains(last, "_") {
		return true
	}
	for _, r := range last[1:] {
		if r >= 'A' && r <= 'Z' {
			return true
		}
	}
	return false
}

func lastSegment(c string) string {
	c = strings.TrimSuffix(c, "()")
	if i := strings.LastIndexAny(c, ".:"); i >= 0 {
		c = c[i+1:]
	}
	return c
}

// missing reports whether the repository certainly lacks the mention.
func missing(repo *repoIndex, m Suspect) bool {
	switch m.Kind {
	case "path":
		return !repo.truncated && !repo.hasPath(m.Mention)
	case "file":
		return !repo.truncated && len(repo.byBase[m.Mention]) == 0
	case "identifier":
		last := lastSegment(m.Mention)
		return !repo.wordsTruncated && !repo.words[last] && len(repo.byBase[m.Mention]) == 0
	}
	return false
}
