package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// inputSpec is what a tool's input struct declares about its fields, read
// once from the struct tags. The same spec writes the JSON Schema the model
// is shown and checks every call (in decode), so the schema cannot promise
// what the tool refuses or forbid what it accepts: each fact — which fields
// exist, which are required, their type, bounds and allowed values — is
// written once, on the field.
//
// Tags, beside the usual json tag:
//
//	desc:"…"        the property's description
//	minimum:"N"     an integer field's lower bound (inclusive)
//	enum:"a,b,c"    a string field's allowed values
//	default:"…"     the JSON value the tool assumes when the field is absent
//
// A field is required unless its json tag says omitempty. Unknown fields
// are refused (decode), hence additionalProperties false.
type inputSpec struct {
	typ    reflect.Type
	fields []fieldSpec
	schema json.RawMessage
}

// fieldSpec is one property of an input object.
type fieldSpec struct {
	name     string
	index    int
	ptr      bool   // a pointer field: absent and present are told apart
	typ      string // JSON Schema type: string, integer, boolean or object
	required bool
	desc     string
	minimum  *int64
	enum     []string
	dflt     json.RawMessage
	obj      *inputSpec // an object field's own spec
}

// mustSpec reads the spec of input struct T on first use (package init runs
// in every `dream` process, and only a dream with a model needs the tools).
// A malformed tag is a bug in this package, found by any test that asks for
// a tool's schema, so it panics.
func mustSpec[T any]() func() *inputSpec {
	return sync.OnceValue(func() *inputSpec {
		s, err := specOf(reflect.TypeFor[T]())
		if err != nil {
			panic(err)
		}
		return s
	})
}

func specOf(t reflect.Type) (*inputSpec, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tools: input type %s is not a struct", t)
	}
	s := &inputSpec{typ: t}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			return nil, fmt.Errorf("tools: %s.%s has no json name", t, f.Name)
		}
		fs := fieldSpec{
			name:     name,
			index:    i,
			required: !slices.Contains(strings.Split(opts, ","), "omitempty"),
			desc:     f.Tag.Get("desc"),
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			fs.ptr, ft = true, ft.Elem()
		}
		switch ft.Kind() {
		case reflect.String:
			fs.typ = "string"
		case reflect.Int, reflect.Int64:
			fs.typ = "integer"
		case reflect.Bool:
			fs.typ = "boolean"
		case reflect.Struct:
			obj, err := specOf(ft)
			if err != nil {
				return nil, err
			}
			fs.typ, fs.obj = "object", obj
		default:
			return nil, fmt.Errorf("tools: %s.%s: unsupported type %s", t, f.Name, f.Type)
		}
		if fs.desc == "" {
			return nil, fmt.Errorf("tools: %s.%s has no desc tag", t, f.Name)
		}
		if m, ok := f.Tag.Lookup("minimum"); ok {
			if fs.typ != "integer" {
				return nil, fmt.Errorf("tools: %s.%s: minimum on a %s", t, f.Name, fs.typ)
			}
			n, err := strconv.ParseInt(m, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("tools: %s.%s: minimum %q: %w", t, f.Name, m, err)
			}
			fs.minimum = &n
		}
		if e, ok := f.Tag.Lookup("enum"); ok {
			if fs.typ != "string" {
				return nil, fmt.Errorf("tools: %s.%s: enum on a %s", t, f.Name, fs.typ)
			}
			fs.enum = strings.Split(e, ",")
		}
		if d, ok := f.Tag.Lookup("default"); ok {
			if fs.required {
				return nil, fmt.Errorf("tools: %s.%s: a required field has no default", t, f.Name)
			}
			// The default must be a value the field itself would accept.
			if err := json.Unmarshal([]byte(d), reflect.New(ft).Interface()); err != nil {
				return nil, fmt.Errorf("tools: %s.%s: default %s: %w", t, f.Name, d, err)
			}
			fs.dflt = json.RawMessage(d)
		}
		s.fields = append(s.fields, fs)
	}
	s.schema = s.build()
	return s, nil
}

// build writes the JSON Schema with properties in field order, so that
// every request carries byte-identical tool definitions.
func (s *inputSpec) build() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, f := range s.fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(f.name))
		b.WriteByte(':')
		if f.obj != nil {
			// The object's own schema, with the field's description.
			b.Write(f.obj.schema[:len(f.obj.schema)-1])
			b.WriteString(`,"description":`)
			b.Write(jsonString(f.desc))
			b.WriteByte('}')
			if f.required {
				required = append(required, f.name)
			}
			continue
		}
		b.WriteString(`{"type":`)
		b.Write(jsonString(f.typ))
		if f.enum != nil {
			e, _ := json.Marshal(f.enum)
			b.WriteString(`,"enum":`)
			b.Write(e)
		}
		if f.minimum != nil {
			b.WriteString(`,"minimum":` + strconv.FormatInt(*f.minimum, 10))
		}
		if f.dflt != nil {
			b.WriteString(`,"default":`)
			b.Write(f.dflt)
		}
		b.WriteString(`,"description":`)
		b.Write(jsonString(f.desc))
		b.WriteByte('}')
		if f.required {
			required = append(required, f.name)
		}
	}
	b.WriteByte('}')
	if required != nil {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes()
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// check enforces what the schema declares on an input already decoded into
// v (a pointer to the spec's struct) from raw, whose keys say which fields
// were sent. A null counts as absent: some providers send null for an
// optional parameter the model left out, and refusing it would teach the
// model nothing. Messages name the field and what it takes, so the model can
// correct the call.
func (s *inputSpec) check(tool string, raw map[string]json.RawMessage, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Type() != s.typ {
		return fmt.Errorf("tools: %s decoded into %T with the spec of %s", tool, v, s.typ)
	}
	// encoding/json matches keys case-insensitively, so "File_Path" got past
	// DisallowUnknownFields into FilePath; the schema allows exact names only.
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.ContainsFunc(s.fields, func(f fieldSpec) bool { return f.name == k }) {
			return fmt.Errorf("%s: invalid input: unknown field %q; the fields are %s", tool, k, quoteList(s.names()))
		}
	}
	rv = rv.Elem()
	var missing []string
	for _, f := range s.fields {
		r, sent := raw[f.name]
		sent = sent && string(bytes.TrimSpace(r)) != "null"
		if !sent {
			if f.required {
				missing = append(missing, f.name)
			}
			continue
		}
		if f.obj != nil {
			// Checked on its own decoding: the field may not be filled
			// when the decoder stopped at an unknown field inside it.
			var sub map[string]json.RawMessage
			if err := json.Unmarshal(r, &sub); err != nil {
				return fmt.Errorf("%s: invalid input: %s: %w", tool, f.name, err)
			}
			obj := reflect.New(f.obj.typ).Interface()
			_ = json.Unmarshal(r, obj)
			if err := f.obj.check(tool+": "+f.name, sub, obj); err != nil {
				return err
			}
			continue
		}
		fv := rv.Field(f.index)
		if f.ptr {
			fv = fv.Elem()
		}
		if f.minimum != nil && fv.Int() < *f.minimum {
			return fmt.Errorf("%s: %s must be at least %d; got %d (%s: %s)", tool, f.name, *f.minimum, fv.Int(), f.name, f.desc)
		}
		if f.enum != nil && !slices.Contains(f.enum, fv.String()) {
			return fmt.Errorf("%s: %s must be one of %s; got %q", tool, f.name, quoteList(f.enum), fv.String())
		}

	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s: %s is required", tool, missing[0])
	default:
		return fmt.Errorf("%s: %s are required", tool, strings.Join(missing, ", "))
	}
}

func (s *inputSpec) names() []string {
	names := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = f.name
	}
	return names
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
