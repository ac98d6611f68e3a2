// Package llm is the narrow interface between dream's agent loop and a model
// provider: one request in, one assistant turn out. It is public so that a host
// agent embedding dream can pass its own client instead of the built-in ones.
//
// The types are deliberately provider-neutral and close to the Anthropic
// Messages shape (content blocks, tool_use / tool_result), which maps onto
// OpenAI Chat Completions without loss for what dream needs.
package llm

import (
	"context"
	"encoding/json"
)

// Role is who said a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType names the kind of a content block.
type BlockType string

const (
	BlockText       BlockType = "text"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
)

// Block is one piece of a message's content.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the text of a text block, or the output of a tool_result block.
	Text string `json:"text,omitempty"`
	// ID is the tool call id: set on tool_use, and on tool_result it names the
	// tool_use being answered.
	ID string `json:"id,omitempty"`
	// Name is the tool name of a tool_use block.
	Name string `json:"name,omitempty"`
	// Input is the JSON arguments of a tool_use block.
	Input json.RawMessage `json:"input,omitempty"`
	// IsError marks a tool_result the tool refused or failed.
	IsError bool `json:"is_error,omitempty"`
}

// Message is one turn of the conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// Tool describes a tool the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one model call. Its fields are in the order a provider's prompt
// cache reads them: tools, then system, then messages.
type Request struct {
	Model     string    `json:"model"`
	Tools     []Tool    `json:"tools,omitempty"`
	System    string    `json:"system,omitempty"`
	Messages  []Message `json:"messages"`
	MaxTokens int       `json:"max_tokens,omitempty"`
}

// StopReason says why the model stopped.
type StopReason string

const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopOther     StopReason = "other"
)

// Response is the assistant's turn.
type Response struct {
	Content    []Block    `json:"content"`
	StopReason StopReason `json:"stop_reason"`
	Usage      Usage      `json:"usage"`
	Model      string     `json:"model,omitempty"`
}

// ToolCalls returns the tool_use blocks of the response in order.
func (r *Response) ToolCalls() []Block {
	var out []Block
	for _, b := range r.Content {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// Text returns the concatenated text blocks of the response.
func (r *Response) Text() string {
	var s string
	for _, b := range r.Content {
		if b.Type == BlockText {
			if s != "" && b.Text != "" {
				s += "\n"
			}
			s += b.Text
		}
	}
	return s
}

// Usage counts tokens. InputTokens excludes cached tokens, as the Anthropic
// API reports it; providers that report a total (OpenAI) subtract the cached
// part so that the four counters never overlap.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// Add accumulates o into u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadInputTokens += o.CacheReadInputTokens
	u.CacheCreationInputTokens += o.CacheCreationInputTokens
}

// Total is every token billed in either direction.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

// CacheHitRate is cache_read / (input + cache_created + cache_read), the
// fraction of input read from the prompt cache; 0 when there was no input.
func (u Usage) CacheHitRate() float64 {
	den := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	if den == 0 {
		return 0
	}
	return float64(u.CacheReadInputTokens) / float64(den)
}

// Provider runs one model turn. Implementations must be safe for sequential
// use by one agent loop and must honour ctx cancellation promptly.
type Provider interface {
	// Name is the provider's short name ("anthropic", "openai", ...).
	Name() string
	// Complete sends req and returns the assistant's turn.
	Complete(ctx context.Context, req *Request) (*Response, error)
}
