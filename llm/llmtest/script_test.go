package llmtest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

func TestParseScript(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Turn
		wantErr string
	}{
		{"object form", `{"turns":[{"text":"hi"}]}`, []Turn{{Text: "hi"}}, ""},
		{"array form", `[{"status":429,"retry_after":"1","repeat":2},{"text":"ok","delay":"150ms","stop_reason":"max_tokens"}]`,
			[]Turn{{Status: 429, RetryAfter: "1", Repeat: 2}, {Text: "ok", Delay: 150 * time.Millisecond, StopReason: llm.StopMaxTokens}}, ""},
		{"calls and usage", `[{"calls":[{"name":"read","input":{"file_path":"MEMORY.md"}},{"id":"c2","name":"ls"}],"usage":{"input_tokens":5,"output_tokens":2,"cache_read_input_tokens":40,"cache_creation_input_tokens":0}}]`,
			[]Turn{{Calls: []Call{{Name: "read", Input: json.RawMessage(`{"file_path":"MEMORY.md"}`)}, {ID: "c2", Name: "ls", Input: json.RawMessage(`{}`)}},
				Usage: llm.Usage{InputTokens: 5, OutputTokens: 2, CacheReadInputTokens: 40}}}, ""},
		{"forever", `[{"status":500,"repeat":-1}]`, []Turn{{Status: 500, Repeat: -1}}, ""},
		{"empty", "  ", nil, "empty script"},
		{"not json", "turns:", nil, "parse script"},
		{"unknown field", `[{"stauts":500}]`, nil, "unknown field"},
		{"trailing", `[] []`, nil, "trailing data"},
		{"success status", `[{"status":200}]`, nil, "not an HTTP error status"},
		{"bad repeat", `[{"repeat":-2}]`, nil, "repeat -2"},
		{"bad delay", `[{"delay":"soon"}]`, nil, "delay"},
		{"negative delay", `[{"delay":"-1s"}]`, nil, "negative"},
		{"bad stop", `[{"stop_reason":"tired"}]`, nil, "stop_reason"},
		{"nameless call", `[{"calls":[{"input":{}}]}]`, nil, "no name"},
		{"array input", `[{"calls":[{"name":"x","input":[1]}]}]`, nil, "JSON object"},
		{"negative usage", `[{"usage":{"input_tokens":-1}}]`, nil, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScript([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseScript error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseScript: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseScript = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func FuzzParseScript(f *testing.F) {
	for _, s := range []string{
		`{"turns":[{"text":"hi"}]}`,
		`[{"status":429,"retry_after":"1","repeat":-1,"delay":"1ms"}]`,
		`[{"calls":[{"name":"read","input":{"a":1}}]}]`,
		`[]`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		turns, err := ParseScript(data)
		if err != nil {
			return
		}
		for _, turn := range turns {
			if turn.Status != 0 && (turn.Status < 400 || turn.Status > 599) {
				t.Fatalf("accepted status %d", turn.Status)
			}
			if turn.Repeat < -1 || turn.Delay < 0 {
				t.Fatalf("accepted repeat %d delay %v", turn.Repeat, turn.Delay)
			}
			for _, c := range turn.Calls {
				args, err := c.arguments()
				if err != nil || !json.Valid(args) || c.Name == "" {
					t.Fatalf("accepted call %+v with arguments %q", c, args)
				}
			}
		}
	})
}
