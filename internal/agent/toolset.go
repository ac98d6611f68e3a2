package agent

import (
	"encoding/json"
	"fmt"

	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
)

// toolset is the fixed tool list of a run: the descriptions sent to the model
// (built once, so every request carries byte-identical definitions in the
// same order) and the lookup used to dispatch calls.
type toolset struct {
	defs   []llm.Tool
	byName map[string]tools.Tool
}

// newToolset checks that every tool is usable and that names are unique: a
// duplicate name would make dispatch ambiguous and providers reject it.
func newToolset(ts []tools.Tool) (*toolset, error) {
	s := &toolset{byName: make(map[string]tools.Tool, len(ts))}
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("agent: tool %d is nil", i)
		}
		name := t.Name()
		if name == "" {
			return nil, fmt.Errorf("agent: tool %d has no name", i)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("agent: duplicate tool name %q", name)
		}
		schema := t.Schema()
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		} else if !json.Valid(schema) {
			return nil, fmt.Errorf("agent: tool %q has an invalid JSON schema", name)
		}
		s.byName[name] = t
		s.defs = append(s.defs, llm.Tool{Name: name, Description: t.Description(), InputSchema: schema})
	}
	return s, nil
}
