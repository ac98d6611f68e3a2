package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dreamkit/dream/llm"
)

func TestOneLine(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"", 10, ""},
		{"  a \n\t b  ", 10, "a b"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcdefghi…"},
		{"日本語のテキストです", 5, "日本語の…"},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in, tt.n); got != tt.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestTurnSummary(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name string
		resp llm.Response
		want string
	}{
		{"text wins", llm.Response{Content: []llm.Block{{Type: llm.BlockText, Text: "Checking\nthe index"}, use("1", "ls", `{}`)}}, "Checking the index"},
		{"calls", llm.Response{Content: []llm.Block{use("1", "grep", `{"pattern":"TODO","path":"src","head_limit":5}`), use("2", "ls", ``)}}, "grep(path=src pattern=TODO head_limit=5), ls()"},
		{"bad input", llm.Response{Content: []llm.Block{use("1", "read", `{"file_path":`)}}, `read({"file_path":)`},
		{"empty", llm.Response{}, "(empty turn)"},
		{"long", llm.Response{Content: []llm.Block{{Type: llm.BlockText, Text: long}}}, strings.TrimSpace(long)[:maxSummaryRunes-1] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := turnSummary(&tt.resp); got != tt.want {
				t.Errorf("turnSummary = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInputSummary(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"content":"hello world","file_path":"notes/a.md"}`, "file_path=notes/a.md content=<11 bytes>"},
		{`{"replace_all":true,"x":null,"y":[1,2]}`, "replace_all=true x=null y=[1,2]"},
		{`[1,2]`, "[1,2]"},
		{`null`, "null"},
	}
	for _, tt := range tests {
		if got := inputSummary(json.RawMessage(tt.in)); got != tt.want {
			t.Errorf("inputSummary(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
