package nanobot

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Cases ported from nanobot's tests/utils/test_strip_think.py, so that both
// sides clean an entry the same way.
func TestStripThinkMatchesNanobot(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Hello <thought>reasoning</thought> World", "Hello  World"},
		{"<thought>ongoing...", ""},
		{"<thought>\nline1\nline2\n</thought>End", "End"},
		{"<thought>a < 3 and b > 2</thought>result", "result"},
		{"A<thought>x</thought>B<thought>y</thought>C", "ABC"},
		{"before<thought>  </thought>after", "beforeafter"},
		{"<thought/>some text", "<thought/>some text"},
		{"Hello <thinking>reasoning</thinking> World", "Hello  World"},
		{"<thinking>ongoing...", ""},
		{"<thinking/>some text", "some text"},
		{"Just normal text", "Just normal text"},
		{"", ""},
		{"*Think Stripping:* A new utility to strip `<think>` tags from output.", "*Think Stripping:* A new utility to strip `<think>` tags from output."},
		{"The model emits <think> at the start of its response.", "The model emits <think> at the start of its response."},
		{"Example:\n```\ntext = re.sub(r\"<think>[\\s\\S]*\", \"\", text)\n```\nDone.", "Example:\n```\ntext = re.sub(r\"<think>[\\s\\S]*\", \"\", text)\n```\nDone."},
		{"Gemma 4 uses `<thought>` blocks for reasoning.", "Gemma 4 uses `<thought>` blocks for reasoning."},
		{"<think>reasoning without closing", ""},
		{"  <think>reasoning...", ""},
		{"<think广场照明灯目前绑定在'照明灯'策略下", "广场照明灯目前绑定在'照明灯'策略下"},
		{"<think The fountain opens at 09:00", "The fountain opens at 09:00"},
		{"<thought广场照明灯", "广场照明灯"},
		{"<thinker>content</thinker>", "<thinker>content</thinker>"},
		{"<think/>ok", "<think/>ok"},
		{"answer</think>", "answer"},
		{"</think>answer", "answer"},
		{"<channel|>喷泉策略：09:00 开启", "喷泉策略：09:00 开启"},
		{"<|channel|>answer", "answer"},
		{"喷泉策略说明 <thin", "喷泉策略说明"},
		{"answer <thought", "answer"},
		{"answer <think>", "answer"},
		{"喷泉策略说明 <|chan", "喷泉策略说明"},
		{"answer <channel", "answer"},
		{"answer <|channel|>", "answer"},
		{"<think-foo>bar</think-foo>", "<think-foo>bar</think-foo>"},
		{"<think_foo>bar</think_foo>", "<think_foo>bar</think_foo>"},
		{"<think1>bar</think1>", "<think1>bar</think1>"},
		{"<think:foo>bar</think:foo>", "<think:foo>bar</think:foo>"},
		{"Use `</think>` to close a thinking block.", "Use `</think>` to close a thinking block."},
		{"The Harmony spec uses `<|channel|>` and `<channel|>` markers.", "The Harmony spec uses `<|channel|>` and `<channel|>` markers."},
	}
	for _, tc := range tests {
		if got := StripThink(tc.in); got != tc.want {
			t.Errorf("StripThink(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTruncateCountsCharactersLikePython(t *testing.T) {
	s := strings.Repeat("记", 10)
	if got := Truncate(s, 4); got != "记记记记"+TruncatedSuffix {
		t.Fatalf("Truncate = %q", got)
	}
	if got := Truncate(s, 10); got != s {
		t.Fatalf("a text at the cap must stay whole, got %q", got)
	}
	if got := Truncate(s, 0); got != s {
		t.Fatalf("cap 0 keeps everything")
	}
}

func FuzzStripThink(f *testing.F) {
	for _, s := range []string{"<think>x</think>y", "<thinking", "<|channel|>a", "记<thought广场", "a</think>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := StripThink(s)
		if len(out) > len(s) {
			t.Fatalf("StripThink grew %q to %q", s, out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("StripThink broke UTF-8: %q -> %q", s, out)
		}
	})
}
