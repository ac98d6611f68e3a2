package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// canonicalJSON returns input with insignificant differences removed
// (whitespace, object key order), so that two calls a model spelled slightly
// differently still count as the same call for loop detection. Numbers keep
// their literal spelling. Empty input means an empty object: some providers
// send no arguments at all for a tool whose fields are all optional.
func canonicalJSON(input []byte) ([]byte, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("input is not valid JSON: trailing data after the object")
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("re-encoding input: %w", err)
	}
	return out, nil
}
