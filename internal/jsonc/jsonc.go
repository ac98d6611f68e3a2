// Package jsonc parses JSON that may carry // and /* */ comments (the
// settings files of Claude Code and Gemini CLI are edited by hand and
// Gemini's explicitly allows comments) into a tree that remembers the byte
// span of every value, so that a caller can splice one member in or out and
// leave every other byte of the file exactly as it was.
//
// It is strict where strictness protects the file: trailing commas,
// single-quoted strings, unquoted keys, NaN and duplicate keys are errors
// with a line and column, so an installer refuses a file it might misread
// instead of rewriting it.
package jsonc

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Kind is a value's JSON type.
type Kind int

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is one parsed value with its position in the source.
type Value struct {
	Kind Kind
	// Start and End are the byte offsets of the value itself (for a
	// container: from its bracket to its closing bracket inclusive).
	Start, End int
	// Str is the decoded string for String, the literal for Bool, Number.
	Str string
	// Items are an Array's elements.
	Items []*Value
	// Members are an Object's members in source order.
	Members []*Member
}

// Member is one key/value pair of an object.
type Member struct {
	Key string
	// KeyStart is the offset of the key's opening quote.
	KeyStart int
	Value    *Value
}

// Get returns the member named key, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for _, m := range v.Members {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// Member returns the index of the member named key, or -1.
func (v *Value) Member(key string) int {
	if v == nil || v.Kind != Object {
		return -1
	}
	for i, m := range v.Members {
		if m.Key == key {
			return i
		}
	}
	return -1
}

// SyntaxError is a parse failure at a line and column (1-based).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// maxDepth bounds nesting so that a hostile file cannot exhaust the stack.
const maxDepth = 256

// Parse parses src, which must hold exactly one value (an empty or
// whitespace-only src is an error: callers decide what a missing file is).
// HasComments reports whether any comment was seen.
func Parse(src []byte) (v *Value, hasComments bool, err error) {
	if !utf8.Valid(src) {
		return nil, false, &SyntaxError{1, 1, "not valid UTF-8"}
	}
	p := &parser{src: src}
	p.skip()
	if p.err != nil {
		return nil, false, p.err
	}
	if p.pos >= len(src) {
		return nil, p.comments, p.fail("no JSON value")
	}
	v = p.value(0)
	if p.err != nil {
		return nil, p.comments, p.err
	}
	p.skip()
	if p.err != nil {
		return nil, p.comments, p.err
	}
	if p.pos < len(src) {
		return nil, p.comments, p.fail("text after the JSON value")
	}
	return v, p.comments, nil
}

type parser struct {
	src      []byte
	pos      int
	comments bool
	err      error
}

func (p *parser) fail(format string, args ...any) error {
	if p.err != nil {
		return p.err
	}
	line, col := 1, 1
	for _, r := range string(p.src[:min(p.pos, len(p.src))]) {
		if r == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	p.err = &SyntaxError{line, col, fmt.Sprintf(format, args...)}
	return p.err
}

// skip passes whitespace and comments.
func (p *parser) skip() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			p.comments = true
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			p.comments = true
			end := strings.Index(string(p.src[p.pos+2:]), "*/")
			if end < 0 {
				p.fail("unterminated /* comment")
				return
			}
			p.pos += 2 + end + 2
		case c == 0xEF && p.pos == 0 && len(p.src) >= 3 && p.src[1] == 0xBB && p.src[2] == 0xBF:
			p.pos += 3 // a byte-order mark
		default:
			return
		}
	}
}

func (p *parser) value(depth int) *Value {
	if depth > maxDepth {
		p.fail("nested too deeply")
		return nil
	}
	if p.pos >= len(p.src) {
		p.fail("unexpected end of file")
		return nil
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil
		}
		return &Value{Kind: String, Start: start, End: p.pos, Str: s}
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.src[p.pos:]), lit) {
				p.pos += len(lit)
				k := Bool
				if lit == "null" {
					k = Null
				}
				return &Value{Kind: k, Start: start, End: p.pos, Str: lit}
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		end := p.pos
		for end < len(p.src) && strings.IndexByte("+-0123456789.eE", p.src[end]) >= 0 {
			end++
		}
		lit := string(p.src[p.pos:end])
		var n json.Number
		if err := json.Unmarshal([]byte(lit), &n); err != nil {
			p.fail("bad number %q", lit)
			return nil
		}
		p.pos = end
		return &Value{Kind: Number, Start: start, End: end, Str: lit}
	}
	p.fail("unexpected character %q", rune(p.src[p.pos]))
	return nil
}

// str reads a JSON string literal at p.pos.
func (p *parser) str() (string, bool) {
	start := p.pos
	i := p.pos + 1
	for i < len(p.src) {
		switch p.src[i] {
		case '\\':
			i += 2
			continue
		case '"':
			var s string
			if err := json.Unmarshal(p.src[start:i+1], &s); err != nil {
				p.fail("bad string: %v", err)
				return "", false
			}
			p.pos = i + 1
			return s, true
		case '\n':
			p.fail("newline inside a string")
			return "", false
		}
		i++
	}
	p.fail("unterminated string")
	return "", false
}

func (p *parser) object(depth int) *Value {
	v := &Value{Kind: Object, Start: p.pos}
	p.pos++
	seen := map[string]bool{}
	for first := true; ; first = false {
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			if !first {
				p.fail("trailing comma before }")
				return nil
			}
			p.pos++
			v.End = p.pos
			return v
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			p.fail("expected a quoted key")
			return nil
		}
		keyStart := p.pos
		key, ok := p.str()
		if !ok {
			return nil
		}
		if seen[key] {
			p.pos = keyStart
			p.fail("duplicate key %q", key)
			return nil
		}
		seen[key] = true
		p.skip()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			p.fail("expected : after key %q", key)
			return nil
		}
		p.pos++
		p.skip()
		val := p.value(depth + 1)
		if p.err != nil {
			return nil
		}
		v.Members = append(v.Members, &Member{Key: key, KeyStart: keyStart, Value: val})
		p.skip()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			v.End = p.pos
			return v
		}
		p.fail("expected , or }")
		return nil
	}
}

func (p *parser) array(depth int) *Value {
	v := &Value{Kind: Array, Start: p.pos}
	p.pos++
	for first := true; ; first = false {
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			if !first {
				p.fail("trailing comma before ]")
				return nil
			}
			p.pos++
			v.End = p.pos
			return v
		}
		item := p.value(depth + 1)
		if p.err != nil {
			return nil
		}
		v.Items = append(v.Items, item)
		p.skip()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			v.End = p.pos
			return v
		}
		p.fail("expected , or ]")
		return nil
	}
}

// Bool returns the boolean v holds, and whether it holds one.
func (v *Value) Bool() (bool, bool) {
	if v == nil || v.Kind != Bool {
		return false, false
	}
	return v.Str == "true", true
}

// Text returns the string v holds, and whether it holds one.
func (v *Value) Text() (string, bool) {
	if v == nil || v.Kind != String {
		return "", false
	}
	return v.Str, true
}
