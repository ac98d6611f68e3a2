package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/dreamkit/dream/llm"
)

// ephemeral is a cache breakpoint with the default five-minute lifetime,
// long enough for the gap between two turns of one dream.
func ephemeral() sdk.CacheControlEphemeralParam { return sdk.NewCacheControlEphemeralParam() }

// params builds the SDK request. Three cache breakpoints are set, within the
// API's limit of four: the system prompt, the last tool (which caches the
// whole tool list, read first), and the last block of the newest user
// message, so the next request, which extends this one, reads all of it from
// cache.
func (p *Provider) params(req *llm.Request) (sdk.MessageNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.maxTokens
	}
	params := sdk.MessageNewParams{Model: model, MaxTokens: int64(maxTokens)}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: ephemeral()}}
	}
	for i, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		if i == len(req.Tools)-1 {
			tool.CacheControl = ephemeral()
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	if len(req.Messages) == 0 {
		return params, errors.New("request has no messages")
	}
	lastUser := -1
	for i, m := range req.Messages {
		mp, err := messageParam(m)
		if err != nil {
			return params, fmt.Errorf("message %d: %w", i+1, err)
		}
		if m.Role == llm.RoleUser {
			lastUser = i
		}
		params.Messages = append(params.Messages, mp)
	}
	if lastUser >= 0 {
		blocks := params.Messages[lastUser].OfUser.Content
		if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
			*cc = ephemeral()
		}
	}
	return params, nil
}

// toolParam converts a tool. The API wants an object schema split into
// properties and required; any other keywords ride along as extra fields.
func toolParam(t llm.Tool) (sdk.ToolParam, error) {
	if t.Name == "" {
		return sdk.ToolParam{}, errors.New("tool with no name")
	}
	schema := sdk.ToolInputSchemaParam{}
	if len(t.InputSchema) > 0 {
		var m map[string]any
		if err := json.Unmarshal(t.InputSchema, &m); err != nil {
			return sdk.ToolParam{}, fmt.Errorf("tool %q: input schema is not a JSON object: %w", t.Name, err)
		}
		if typ, ok := m["type"]; ok && typ != "object" {
			return sdk.ToolParam{}, fmt.Errorf("tool %q: input schema type is %v, want object", t.Name, typ)
		}
		schema.Properties = m["properties"]
		if req, ok := m["required"]; ok {
			list, ok := req.([]any)
			if !ok {
				return sdk.ToolParam{}, fmt.Errorf("tool %q: input schema \"required\" is not an array", t.Name)
			}
			for _, r := range list {
				s, ok := r.(string)
				if !ok {
					return sdk.ToolParam{}, fmt.Errorf("tool %q: input schema \"required\" holds a non-string", t.Name)
				}
				schema.Required = append(schema.Required, s)
			}
		}
		for k, v := range m {
			switch k {
			case "type", "properties", "required":
				continue
			}
			if schema.ExtraFields == nil {
				schema.ExtraFields = map[string]any{}
			}
			schema.ExtraFields[k] = v
		}
	}
	tool := sdk.ToolParam{Name: t.Name, InputSchema: schema}
	if t.Description != "" {
		tool.Description = param.NewOpt(t.Description)
	}
	return tool, nil
}

// messageParam converts one message. Empty text blocks are dropped because
// the API rejects them; a message left with no content is an error.
func messageParam(m llm.Message) (sdk.MessageParam, error) {
	var blocks []sdk.ContentBlockParamUnion
	for j, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if b.Text == "" {
				continue
			}
			blocks = append(blocks, sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: b.Text}})
		case llm.BlockToolUse:
			if b.ID == "" || b.Name == "" {
				return sdk.MessageParam{}, fmt.Errorf("block %d: tool_use needs an id and a name", j+1)
			}
			input := b.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			if !json.Valid(input) {
				return sdk.MessageParam{}, fmt.Errorf("block %d: tool_use %q input is not valid JSON", j+1, b.Name)
			}
			blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: input}})
		case llm.BlockToolResult:
			if b.ID == "" {
				return sdk.MessageParam{}, fmt.Errorf("block %d: tool_result needs the id of its tool_use", j+1)
			}
			r := &sdk.ToolResultBlockParam{ToolUseID: b.ID}
			if b.IsError {
				r.IsError = param.NewOpt(true)
			}
			if b.Text != "" {
				r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: b.Text}}}
			}
			blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: r})
		default:
			return sdk.MessageParam{}, fmt.Errorf("block %d: unknown block type %q", j+1, b.Type)
		}
	}
	if len(blocks) == 0 {
		return sdk.MessageParam{}, fmt.Errorf("%s message has no content", m.Role)
	}
	switch m.Role {
	case llm.RoleUser:
		return sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: blocks}}, nil
	case llm.RoleAssistant:
		return sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: blocks}}, nil
	}
	return sdk.MessageParam{}, fmt.Errorf("unknown role %q", m.Role)
}

// fromMessage converts the API's answer. Block types dream does not use
// (thinking, server tools) are dropped.
func fromMessage(msg *sdk.Message) (*llm.Response, error) {
	if msg == nil {
		return nil, errors.New("anthropic: empty response")
	}
	resp := &llm.Response{
		StopReason: stopReason(msg.StopReason),
		Model:      msg.Model,
		Usage: llm.Usage{
			InputTokens:              msg.Usage.InputTokens,
			OutputTokens:             msg.Usage.OutputTokens,
			CacheReadInputTokens:     msg.Usage.CacheReadInputTokens,
			CacheCreationInputTokens: msg.Usage.CacheCreationInputTokens,
		},
	}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			resp.Content = append(resp.Content, llm.Block{Type: llm.BlockText, Text: b.Text})
		case "tool_use":
			input := append(json.RawMessage(nil), b.Input...)
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			resp.Content = append(resp.Content, llm.Block{Type: llm.BlockToolUse, ID: b.ID, Name: b.Name, Input: input})
		}
	}
	return resp, nil
}

// stopReason maps the API's stop reasons onto llm's four. A stop sequence is
// a normal end; running out of context is running out of tokens.
func stopReason(r sdk.StopReason) llm.StopReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return llm.StopEndTurn
	case sdk.StopReasonToolUse:
		return llm.StopToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return llm.StopMaxTokens
	}
	return llm.StopOther
}
