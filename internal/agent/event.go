package agent

import (
	"github.com/dreamkit/dream/llm"
)

// EventKind names a progress event.
type EventKind string

const (
	// EventTurn: an assistant turn arrived; Text is a one-line summary of its
	// text, or of its tool calls when it has no text.
	EventTurn EventKind = "turn"
	// EventToolCall: a tool call finished; Tool, Text (an input summary),
	// IsError and Error describe it.
	EventToolCall EventKind = "tool_call"
	// EventFileTouched: a write or edit succeeded; Path is the memory file,
	// relative to the memory dir. Refused or failed writes never emit it, so
	// a host can flip its "updating" phase on the first one.
	EventFileTouched EventKind = "file_touched"
	// EventUsage: a response arrived; Usage is the cumulative total so far.
	EventUsage EventKind = "usage"
)

// Event is one step of a run, delivered to Config.OnEvent. Turn is the
// 1-based turn the event belongs to.
type Event struct {
	Kind    EventKind
	Turn    int
	Text    string
	Tool    string
	Path    string
	IsError bool
	// Error is the message sent to the model for a refused or failed call.
	Error string
	Usage llm.Usage
}
