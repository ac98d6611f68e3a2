package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// decode parses a tool's JSON input strictly: unknown fields and trailing
// data are errors, because a misspelt field silently ignored ("filepath" for
// "file_path") would make the model believe a call did something it did not.
// It then enforces what spec (the spec of v's struct, which is also the
// tool's schema) declares: required fields, minimums and allowed values.
func decode(tool string, input json.RawMessage, v any, spec *inputSpec) error {
	if len(bytes.TrimSpace(input)) == 0 {
		return fmt.Errorf("%s: empty input; send a JSON object", tool)
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var raw map[string]json.RawMessage
		if strings.HasPrefix(err.Error(), "json: unknown field ") && json.Unmarshal(input, &raw) == nil {
			// The spec names the object the field is in and what it takes.
			if serr := spec.check(tool, raw, v); serr != nil {
				return serr
			}
		}
		return fmt.Errorf("%s: invalid input: %w", tool, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: invalid input: trailing data after the JSON object", tool)
	}
	// The object decoded into a struct, so it decodes into a map too; the
	// map tells a field sent as its zero value from one left out.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(input, &raw); err != nil {
		return fmt.Errorf("%s: invalid input: %w", tool, err)
	}
	return spec.check(tool, raw, v)
}

// isNotExist is errors.Is(err, fs.ErrNotExist).
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
