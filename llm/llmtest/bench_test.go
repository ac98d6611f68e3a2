package llmtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/llmtest"
)

// BenchmarkStreamVsJSON measures, per provider, one tool-call turn answered
// as a stream against the same turn answered as plain JSON, on loopback. It
// reports the streamed call's cost as a ratio of the JSON baseline measured
// in the same run (stream/json), plus both times, so that the adapters'
// accumulation overhead is visible without trusting absolute numbers.
func BenchmarkStreamVsJSON(b *testing.B) {
	turn := llmtest.Turn{
		Text:  strings.Repeat("Merged duplicate notes. ", 40),
		Calls: []llmtest.Call{{Name: "write", Input: map[string]any{"file_path": "build.md", "content": strings.Repeat("- fact\n", 200)}}},
		Usage: llm.Usage{InputTokens: 10, OutputTokens: 10},
	}
	req := &llm.Request{System: "sys", Tools: []llm.Tool{readTool}, Messages: []llm.Message{userText("go")}}
	for _, name := range []string{"anthropic", "openai"} {
		b.Run(name, func(b *testing.B) {
			var jsonCase, streamCase providerCase
			for _, pc := range cases() {
				if strings.HasPrefix(pc.name, name) {
					if pc.stream {
						streamCase = pc
					} else {
						jsonCase = pc
					}
				}
			}
			srv := llmtest.NewServer(llmtest.Turn{Dynamic: func(llmtest.Recorded) llmtest.Turn { return turn }, Repeat: -1})
			defer srv.Close()
			pj := newProvider(b, jsonCase, srv, nil)
			ps := newProvider(b, streamCase, srv, nil)
			var tJSON, tStream time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := pj.Complete(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := ps.Complete(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				tJSON += mid.Sub(start)
				tStream += time.Since(mid)
			}
			b.ReportMetric(float64(tStream)/float64(tJSON), "stream/json")
			b.ReportMetric(float64(tJSON.Microseconds())/float64(b.N), "json-µs/op")
			b.ReportMetric(float64(tStream.Microseconds())/float64(b.N), "stream-µs/op")
		})
	}
}
