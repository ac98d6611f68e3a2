package nanobot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dreamkit/dream/internal/sandbox"
	"github.com/dreamkit/dream/internal/tools"
)

// ErrNotWritable is the refusal of a write outside the dream's writable set.
var ErrNotWritable = errors.New("not writable by a dream")

// confined narrows a write or edit tool to the writable set, on top of the
// sandbox's own confinement to the workspace. The check runs in Execute,
// not only in Validate, because Validate is an optimisation.
type confined struct {
	tools.Tool
	mem *sandbox.Memory
}

func (c confined) check(input json.RawMessage) error {
	var in struct {
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	rel, err := c.mem.Resolve(in.FilePath)
	if err != nil {
		return err
	}
	if !Writable(rel) {
		return fmt.Errorf("%w: %s; only SOUL.md, USER.md, memory/MEMORY.md and files under skills/ may be written (memory/history.jsonl and its cursors are kept by nanobot)", ErrNotWritable, rel)
	}
	return nil
}

func (c confined) Validate(input json.RawMessage) error {
	if err := c.check(input); err != nil {
		return err
	}
	return c.Tool.Validate(input)
}

func (c confined) Execute(ctx context.Context, input json.RawMessage) (tools.Result, error) {
	if err := c.check(input); err != nil {
		return tools.Result{}, err
	}
	return c.Tool.Execute(ctx, input)
}

// toolSet is the dream's six tools over the workspace, write and edit
// confined to the writable set.
type toolSet struct {
	set *tools.Set
	mem *sandbox.Memory
}

func openTools(env tools.Env) (*toolSet, error) {
	set, err := tools.NewSet(env)
	if err != nil {
		return nil, err
	}
	mem, err := sandbox.OpenMemory(env.MemoryDir, env.MemoryDisplayDir)
	if err != nil {
		set.Close()
		return nil, err
	}
	return &toolSet{set: set, mem: mem}, nil
}

func (s *toolSet) Tools() []tools.Tool {
	var out []tools.Tool
	for _, t := range s.set.Tools() {
		if t.Name() == "write" || t.Name() == "edit" {
			t = confined{Tool: t, mem: s.mem}
		}
		out = append(out, t)
	}
	return out
}

func (s *toolSet) Close() error { return errors.Join(s.set.Close(), s.mem.Close()) }
