package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/dreamkit/dream/llm"
)

// errorPrefix marks a failed tool result: Chat Completions has no is_error
// flag, so the model learns of the failure from the text.
const errorPrefix = "ERROR: "

// params builds the SDK request: the system prompt as the first message,
// then the conversation, tools as functions. OpenAI caches the longest
// unchanged prefix on its own, so keeping that order stable is all the
// caching it needs.
func (p *Provider) params(req *llm.Request) (sdk.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.maxTokens
	}
	params := sdk.ChatCompletionNewParams{Model: model}
	if p.legacyMaxTokens {
		params.MaxTokens = sdk.Int(int64(maxTokens))
	} else {
		params.MaxCompletionTokens = sdk.Int(int64(maxTokens))
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	if len(req.Messages) == 0 {
		return params, errors.New("request has no messages")
	}
	for i, m := range req.Messages {
		msgs, err := messageParams(m)
		if err != nil {
			return params, fmt.Errorf("message %d: %w", i+1, err)
		}
		params.Messages = append(params.Messages, msgs...)
	}
	return params, nil
}

func toolParam(t llm.Tool) (sdk.ChatCompletionToolUnionParam, error) {
	if t.Name == "" {
		return sdk.ChatCompletionToolUnionParam{}, errors.New("tool with no name")
	}
	params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if len(t.InputSchema) > 0 {
		params = nil
		if err := json.Unmarshal(t.InputSchema, &params); err != nil || params == nil {
			return sdk.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: input schema is not a JSON object", t.Name)
		}
	}
	def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
	if t.Description != "" {
		def.Description = sdk.String(t.Description)
	}
	return sdk.ChatCompletionFunctionTool(def), nil
}

// messageParams converts one message into one or more Chat Completions
// messages. A user message's tool results become "tool" messages, placed
// first because they must directly follow the assistant's tool calls; its
// text follows as a user message.
func messageParams(m llm.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var texts []string
	var out []sdk.ChatCompletionMessageParamUnion
	var calls []sdk.ChatCompletionMessageToolCallUnionParam
	for j, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		case llm.BlockToolResult:
			if m.Role != llm.RoleUser {
				return nil, fmt.Errorf("block %d: tool_result in a %s message", j+1, m.Role)
			}
			if b.ID == "" {
				return nil, fmt.Errorf("block %d: tool_result needs the id of its tool call", j+1)
			}
			content := b.Text
			if b.IsError {
				content = errorPrefix + content
			}
			out = append(out, sdk.ToolMessage(content, b.ID))
		case llm.BlockToolUse:
			if m.Role != llm.RoleAssistant {
				return nil, fmt.Errorf("block %d: tool_use in a %s message", j+1, m.Role)
			}
			if b.ID == "" || b.Name == "" {
				return nil, fmt.Errorf("block %d: tool_use needs an id and a name", j+1)
			}
			calls = append(calls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       b.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: arguments(b.Input)},
				},
			})
		default:
			return nil, fmt.Errorf("block %d: unknown block type %q", j+1, b.Type)
		}
	}
	text := strings.Join(texts, "\n\n")
	switch m.Role {
	case llm.RoleUser:
		if text != "" {
			out = append(out, sdk.UserMessage(text))
		}
	case llm.RoleAssistant:
		if text == "" && len(calls) == 0 {
			break
		}
		a := sdk.ChatCompletionAssistantMessageParam{ToolCalls: calls}
		if text != "" {
			a.Content.OfString = sdk.String(text)
		}
		out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
	default:
		return nil, fmt.Errorf("unknown role %q", m.Role)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s message has no content", m.Role)
	}
	return out, nil
}

// arguments is the wire form of a tool call's input. An input that is a JSON
// string holds arguments that were not valid JSON when the model sent them
// (see toolUse); they go back exactly as the model wrote them.
func arguments(input json.RawMessage) string {
	if len(input) == 0 {
		return "{}"
	}
	var s string
	if input[0] == '"' && json.Unmarshal(input, &s) == nil {
		return s
	}
	return string(input)
}

// toolUse converts a tool call. Arguments that are not valid JSON (small
// local models produce them) are kept as a JSON string so that the block
// still marshals and the tool's validation tells the model what is wrong.
func toolUse(id, name, args string) llm.Block {
	var input json.RawMessage
	switch {
	case strings.TrimSpace(args) == "":
		input = json.RawMessage("{}")
	case json.Valid([]byte(args)):
		input = json.RawMessage(args)
	default:
		input, _ = json.Marshal(args)
	}
	return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: input}
}

// fromCompletion converts the first choice and the usage.
func fromCompletion(c *sdk.ChatCompletion, u sdk.CompletionUsage) (*llm.Response, error) {
	if c == nil || len(c.Choices) == 0 {
		return nil, errors.New("openai: response has no choices")
	}
	choice := c.Choices[0]
	resp := &llm.Response{Model: c.Model, Usage: usage(u)}
	if choice.Message.Content != "" {
		resp.Content = append(resp.Content, llm.Block{Type: llm.BlockText, Text: choice.Message.Content})
	}
	for i, tc := range choice.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		id := tc.ID
		if id == "" {
			// Some compatible servers omit ids; the tool result must still
			// name its call.
			id = "call_" + strconv.Itoa(i)
		}
		resp.Content = append(resp.Content, toolUse(id, tc.Function.Name, tc.Function.Arguments))
	}
	resp.StopReason = finishReason(choice.FinishReason, len(resp.ToolCalls()) > 0)
	return resp, nil
}

// finishReason maps finish_reason. Some servers (older Ollama) say "stop"
// even when the message carries tool calls; the calls win.
func finishReason(r string, hasCalls bool) llm.StopReason {
	switch r {
	case "length":
		return llm.StopMaxTokens
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "content_filter":
		return llm.StopOther
	}
	if hasCalls {
		return llm.StopToolUse
	}
	if r == "stop" || r == "" {
		return llm.StopEndTurn
	}
	return llm.StopOther
}

// usage converts OpenAI's counts, where prompt_tokens includes the cached
// part, into llm's non-overlapping counters.
func usage(u sdk.CompletionUsage) llm.Usage {
	cached := max(u.PromptTokensDetails.CachedTokens, 0)
	written := max(u.PromptTokensDetails.CacheWriteTokens, 0)
	return llm.Usage{
		InputTokens:              max(u.PromptTokens-cached-written, 0),
		OutputTokens:             u.CompletionTokens,
		CacheReadInputTokens:     cached,
		CacheCreationInputTokens: written,
	}
}
