package offline

import (
	"slices"
	"strings"
	"testing"
)

// normalizeRef is normalize as it was first written, the reference the
// one-pass versions must agree with.
func normalizeRef(s string) string {
	s = emphasisMarks().Replace(strings.ToLower(s))
	var b strings.Builder
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, "*_")
		if w == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return strings.TrimRight(b.String(), ".,;!?。，；！？… ")
}

// shingleHashesRef is shingleHashes as first written.
func shingleHashesRef(norm string) []uint64 {
	var toks []string
	for _, w := range strings.Fields(norm) {
		if !hasIdeographs(w) {
			toks = append(toks, w)
			continue
		}
		for _, r := range w {
			toks = append(toks, string(r))
		}
	}
	var out []uint64
	if len(toks) < 3 {
		out = append(out, hashString(strings.Join(toks, "\x00")))
	} else {
		for i := 0; i+3 <= len(toks); i++ {
			out = append(out, hashString(toks[i]+"\x00"+toks[i+1]+"\x00"+toks[i+2]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var normalizeSeeds = []string{
	"", " ", "a", "Deploys run from **main** after review.", "***a*** __b__ ~~c~~", "** **", "a ** b", "_x_ *y* __", "a\tb\nc\r\nd\v\fe",
	"**Owner:** Ana Souza.", "- [x] ship it!!!", "a...", "*", "__init__ py", "~~~", "a~~b", "x**", "end ?", "Run `make check`.",
	"昨天，我们把导入器迁到了新集群。", "部署前先在预发环境验证迁移脚本", "mixed 中文 text 与 English", "ÀÉÎ Straße", "a\u00a0b", "\u3000全角\u3000空格", "中\xff文 a b", "\xe4\xb8 x y z",
}

func FuzzNormalize(f *testing.F) {
	for _, s := range normalizeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normalize(s), normalizeRef(s); got != want {
			t.Fatalf("normalize(%q) = %q, want %q", s, got, want)
		}
		for _, n := range []string{normalize(s), s} {
			if got, want := shingleHashes(n), shingleHashesRef(n); !slices.Equal(got, want) {
				t.Fatalf("shingleHashes(%q) = %v, want %v", n, got, want)
			}
		}
	})
}

func TestNormalizeAsReference(t *testing.T) {
	for _, s := range normalizeSeeds {
		if got, want := normalize(s), normalizeRef(s); got != want {
			t.Errorf("normalize(%q) = %q, want %q", s, got, want)
		}
		n := normalize(s)
		if got, want := shingleHashes(n), shingleHashesRef(n); !slices.Equal(got, want) {
			t.Errorf("shingleHashes(%q) = %v, want %v", n, got, want)
		}
	}
}
