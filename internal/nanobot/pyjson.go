package nanobot

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// nanobot writes its files with Python's json.dumps(..., ensure_ascii=False):
// ", " and ": " separators, keys in insertion order, non-ASCII text as is.
// These helpers keep that shape and the key order of what they did not
// change, so that a rewritten session file differs from nanobot's only
// where the compaction changed it.

// field is one key of an ordered JSON object.
type field struct {
	Key   string
	Value json.RawMessage
}

// object is a JSON object that keeps its key order.
type object []field

func parseObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var o object
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o = append(o, field{Key: kt.(string), Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o object) get(key string) (json.RawMessage, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// set replaces key's value in place, or appends the key.
func (o *object) set(key string, v json.RawMessage) {
	for i, f := range *o {
		if f.Key == key {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, field{Key: key, Value: v})
}

func (o object) marshal() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteString(", ")
		}
		writeString(&b, f.Key)
		b.WriteString(": ")
		writePy(&b, f.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1)
}

// writePy re-renders a JSON value in Python's layout, keeping key order.
func writePy(b *bytes.Buffer, v json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := writeValue(b, dec); err != nil {
		b.Write(v) // not reachable for values that came from a decoder
	}
}

func writeValue(b *bytes.Buffer, dec *json.Decoder) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			b.WriteByte('{')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteString(", ")
				}
				k, err := dec.Token()
				if err != nil {
					return err
				}
				writeString(b, k.(string))
				b.WriteString(": ")
				if err := writeValue(b, dec); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			b.WriteByte('}')
			return err
		case '[':
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteString(", ")
				}
				if err := writeValue(b, dec); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			b.WriteByte(']')
			return err
		}
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	}
	return nil
}

func rawJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}
