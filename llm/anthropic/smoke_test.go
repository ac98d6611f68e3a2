package anthropic_test

import (
	"context"
	"testing"

	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/llmtest"
)

func TestSmoke(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewServer(llmtest.Turn{Text: "hello there, this is a longer text to chunk", Calls: []llmtest.Call{{Name: "read", Input: map[string]any{"file_path": "MEMORY.md"}}}})
		defer srv.Close()
		p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, Model: "m", Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Complete(context.Background(), &llm.Request{System: "sys", Tools: []llm.Tool{{Name: "read", Description: "d", InputSchema: []byte(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"],"additionalProperties":false}`)}}, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", resp)
		t.Logf("%s", srv.Requests()[0].Body)
	}
}
