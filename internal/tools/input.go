package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// decode parses a tool's JSON input strictly: unknown fields and trailing
// data are errors, because a misspelt field silently ignored ("filepath" for
// "file_path") would make the model believe a call did something it did not.
func decode(tool string, input json.RawMessage, v any) error {
	if len(bytes.TrimSpace(input)) == 0 {
		return fmt.Errorf("%s: empty input; send a JSON object", tool)
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: invalid input: %w", tool, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: invalid input: trailing data after the JSON object", tool)
	}
	return nil
}

// isNotExist is errors.Is(err, fs.ErrNotExist).
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
