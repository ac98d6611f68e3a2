// Package tools holds the six model-facing tools of a dream: read, glob,
// grep and ls over the repository, memory and sessions (read-only), and write
// and edit confined to the memory directory. There is no shell: the tool set
// is the security boundary, because nobody approves calls at night.
package tools

import (
	"context"
	"encoding/json"
)

// Tool is one model-facing tool.
type Tool interface {
	// Name is the name the model calls the tool by.
	Name() string
	// Description tells the model what the tool does and its limits.
	Description() string
	// Schema is the JSON Schema of the tool's input object.
	Schema() json.RawMessage
	// Validate is a cheap check of input before execution, so that a bad call
	// becomes a tool error the model can correct. It is an optimisation only:
	// Execute must re-check everything that matters for safety.
	Validate(input json.RawMessage) error
	// Execute runs the call. A returned error is reported to the model as an
	// is_error tool result; it never ends the dream.
	Execute(ctx context.Context, input json.RawMessage) (Result, error)
}

// Result is what a successful call returns.
type Result struct {
	// Content is the text shown to the model.
	Content string
	// Touched is the memory file written or edited, relative to the memory
	// dir, with forward slashes; empty for read-only tools.
	Touched string
}
