package eval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/dreamkit/dream/internal/indexcount"
	"github.com/dreamkit/dream/internal/memory"
	"github.com/dreamkit/dream/internal/sandbox"
)

func (e Expect) validate() error {
	switch e.Kind {
	case KindAbsent, KindPresent, KindMaxCount, KindMinCount:
		if e.Pattern == "" {
			return fmt.Errorf("%s needs a pattern", e.Kind)
		}
		if _, err := regexp.Compile(e.Pattern); err != nil {
			return fmt.Errorf("%s pattern: %w", e.Kind, err)
		}
	case KindIndexMaxLines, KindIndexMaxBytes, KindNoRelativeDates, KindNoDanglingPointers,
		KindAllTopicsIndexed, KindNoSecret, KindUnchanged:
	default:
		return fmt.Errorf("unknown kind %q", e.Kind)
	}
	if e.Max < 0 {
		return fmt.Errorf("max %d < 0", e.Max)
	}
	return nil
}

// String names the expectation for reports.
func (e Expect) String() string {
	s := e.Kind
	if e.Pattern != "" {
		s += " /" + e.Pattern + "/"
	}
	if e.File != "" {
		s += " in " + e.File
	}
	if e.Max > 0 {
		s += fmt.Sprintf(" ≤%d", e.Max)
	}
	return s
}

// snapshot is the memory directory as text, read once per check round.
type snapshot struct {
	dir   *memory.Dir
	files map[string]string // rel → content, every file including non-markdown
	hash  string
}

func takeSnapshot(memDir string) (*snapshot, error) {
	d, err := memory.Load(memDir)
	if err != nil {
		return nil, err
	}
	files, err := readTree(memDir, true)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	for _, k := range sortedKeys(files) {
		fmt.Fprintf(h, "%s\x00%d\x00%s", k, len(files[k]), files[k])
	}
	return &snapshot{dir: d, files: files, hash: hex.EncodeToString(h.Sum(nil))}, nil
}

// memoryText is every memory file's content, for pattern searches.
func (s *snapshot) memoryText() []string {
	var out []string
	for _, k := range sortedKeys(s.files) {
		if strings.HasSuffix(strings.ToLower(k), ".md") {
			out = append(out, s.files[k])
		}
	}
	return out
}

// holds evaluates e on a snapshot; before is the snapshot taken before the
// dream (for unchanged).
func (e Expect) holds(s, before *snapshot) bool {
	switch e.Kind {
	case KindAbsent, KindPresent, KindMaxCount, KindMinCount:
		return e.countHolds(s)
	case KindIndexMaxLines:
		lim, _ := indexcount.Of("")
		l, _ := lim.Count([]byte(s.files[memory.IndexFile]))
		return s.dir.Index == nil || l <= orDefault(e.Max, lim.MaxLines)
	case KindIndexMaxBytes:
		// Older than units: the size is as the agents measure it (in
		// UTF-16 code units while Claude Code is the one with a size limit).
		lim, _ := indexcount.Of("")
		_, size := lim.Count([]byte(s.files[memory.IndexFile]))
		return s.dir.Index == nil || size <= orDefault(e.Max, lim.MaxSize)
	case KindNoRelativeDates:
		return noMemoryText(s, relativeDateRE().MatchString)
	case KindNoDanglingPointers:
		return noDanglingPointers(s)
	case KindAllTopicsIndexed:
		return allTopicsIndexed(s)
	case KindNoSecret:
		// The sandbox's rules, the ones a dream's writes are refused by:
		// one home for what counts as a secret.
		return noMemoryText(s, func(t string) bool { return sandbox.CheckSecret(t) != nil })
	case KindUnchanged:
		if e.File != "" {
			b, inB := before.files[e.File]
			a, inA := s.files[e.File]
			return before != nil && inA == inB && a == b
		}
		return before != nil && s.hash == before.hash
	}
	return false
}

// countHolds is the pattern kinds: the matches of e.Pattern in e.File (or
// in every memory file) counted against the kind's bound.
func (e Expect) countHolds(s *snapshot) bool {
	re := regexp.MustCompile(e.Pattern)
	n := 0
	texts := s.memoryText()
	if e.File != "" {
		texts = []string{s.files[e.File]}
	}
	for _, t := range texts {
		n += len(re.FindAllStringIndex(t, -1))
	}
	switch e.Kind {
	case KindAbsent:
		return n == 0
	case KindPresent:
		return n > 0
	case KindMinCount:
		return n >= max(e.Max, 1)
	default:
		return n <= max(e.Max, 1)
	}
}

// noMemoryText reports whether no memory file's text is found by bad.
func noMemoryText(s *snapshot, bad func(string) bool) bool {
	for _, t := range s.memoryText() {
		if bad(t) {
			return false
		}
	}
	return true
}

// noDanglingPointers reports whether every local pointer of the index
// names a file that exists.
func noDanglingPointers(s *snapshot) bool {
	if s.dir.Index == nil {
		return true
	}
	for _, l := range s.dir.Index.Lines {
		if rel, ok := memory.LocalTarget(l.Target); l.IsPointer && ok {
			if _, err := os.Lstat(filepath.Join(s.dir.Root, filepath.FromSlash(rel))); err != nil {
				return false
			}
		}
	}
	return true
}

// allTopicsIndexed reports whether the index points at every topic file.
func allTopicsIndexed(s *snapshot) bool {
	listed := map[string]bool{}
	if s.dir.Index != nil {
		for _, l := range s.dir.Index.Lines {
			if rel, ok := memory.LocalTarget(l.Target); l.IsPointer && ok {
				listed[rel] = true
			}
		}
	}
	for _, t := range s.dir.Topics {
		if !listed[t.Path] {
			return false
		}
	}
	return true
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// relativeDateRE recognises the relative dates a consolidated memory must not
// keep. It is written independently of the offline engine's rewriter, so the
// eval does not grade the engine by its own rules.
var relativeDateRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(yesterday|today|tonight|this (?:morning|afternoon|evening|week)|last (?:week|month|night)|\d+ (?:days?|weeks?|months?) ago|(?:one|two|three|four|five|six|a) (?:days?|weeks?|months?) ago)\b|昨天|今天|前天|上周|上个?月|上个?星期|[0-9一二两三四五六七八九十]+ ?(?:天|周|个月)前`)
})
