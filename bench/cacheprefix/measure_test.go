package main

import (
	"strings"
	"testing"

	"github.com/dreamkit/dream/llm"
)

func TestCommonPrefix(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 0},
		{"abc", "abd", 2},
		{"abc", "abcdef", 3},
		{"xbc", "abc", 0},
	}
	for _, tt := range tests {
		if got := commonPrefix([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("commonPrefix(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestPrefixReuse(t *testing.T) {
	ps := prefixReuse([][]byte{[]byte("abcd"), []byte("abcdefgh"), []byte("xbcdefgh")})
	want := []pair{
		{Request: 2, Prev: 4, Cur: 8, Common: 4, OfPrev: 1, OfCur: 0.5},
		{Request: 3, Prev: 8, Cur: 8, Common: 0, OfPrev: 0, OfCur: 0},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d pairs, want %d", len(ps), len(want))
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("pair %d = %+v, want %+v", i, ps[i], want[i])
		}
	}
	if p, c := means(ps); p != 0.5 || c != 0.25 {
		t.Errorf("means = %v, %v; want 0.5, 0.25", p, c)
	}
}

func TestSerializeOrder(t *testing.T) {
	req := &llm.Request{
		Tools:    []llm.Tool{{Name: "read", InputSchema: []byte(`{}`)}},
		System:   "SYS",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}}},
	}
	got, err := serialize(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"read","description":"","input_schema":{}}]SYS[{"role":"user","content":[{"type":"text","text":"hi"}]}]`
	if string(got) != want {
		t.Errorf("serialize = %s\nwant        %s", got, want)
	}
}

// TestRun runs the whole measurement once so the program cannot rot; the
// figures themselves are printed, not asserted.
func TestRun(t *testing.T) {
	var b strings.Builder
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"10 turns", "mean common-prefix/len(prev)", "mean common-prefix/len(cur)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}
