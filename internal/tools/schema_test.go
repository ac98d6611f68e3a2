package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jsonSchema is the subset of JSON Schema the tools declare. The tests below
// read the schema text the model is sent, not the Go spec it came from, so
// they check what the model is actually promised.
type jsonSchema struct {
	Type                 string                 `json:"type"`
	Properties           map[string]propertyDoc `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
}

type propertyDoc struct {
	Type        string          `json:"type"`
	Description string          `json:"description"`
	Minimum     *float64        `json:"minimum"`
	Enum        []string        `json:"enum"`
	Default     json.RawMessage `json:"default"`
	// An object property's own schema.
	Properties           map[string]propertyDoc `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
}

func parseSchema(t testing.TB, tl Tool) jsonSchema {
	t.Helper()
	var s jsonSchema
	dec := json.NewDecoder(bytes.NewReader(tl.Schema()))
	dec.DisallowUnknownFields() // a keyword this validator ignores would go unchecked
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: schema: %v", tl.Name(), err)
	}
	return s
}

// allows is an independent reading of the schema: does it admit input? It
// is written from the JSON Schema rules, not from the tools' code. One
// deliberate leniency mirrors the tools: null for an optional property counts
// as leaving it out (providers send that for omitted parameters).
func (s jsonSchema) allows(input []byte) (bool, string) {
	var obj map[string]json.RawMessage
	if t := bytes.TrimSpace(input); len(input) == 0 || string(t) == "null" {
		// Also a leniency of the tools: ls, which needs no argument, takes
		// a missing input object as an empty one.
		input = []byte(`{}`)
	}
	if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
		return false, "not an object"
	}
	for k, v := range obj {
		p, ok := s.Properties[k]
		if !ok {
			if s.AdditionalProperties != nil && !*s.AdditionalProperties {
				return false, "additional property " + k
			}
			continue
		}
		if string(bytes.TrimSpace(v)) == "null" {
			if slices.Contains(s.Required, k) {
				return false, k + " is null"
			}
			continue
		}
		var val any
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&val); err != nil {
			return false, k + ": " + err.Error()
		}
		switch p.Type {
		case "string":
			str, ok := val.(string)
			if !ok {
				return false, k + " is not a string"
			}
			if p.Enum != nil && !slices.Contains(p.Enum, str) {
				return false, k + " is not in the enum"
			}
		case "boolean":
			if _, ok := val.(bool); !ok {
				return false, k + " is not a boolean"
			}
		case "integer":
			n, ok := val.(json.Number)
			if !ok {
				return false, k + " is not a number"
			}
			f, err := n.Float64()
			if err != nil || f != math.Trunc(f) {
				return false, k + " is not an integer"
			}
			// A Go int cannot hold what JSON Schema calls an integer
			// beyond 2^63; no model needs a line number that large.
			if _, err := n.Int64(); err != nil {
				return false, k + " is out of range"
			}
			if p.Minimum != nil && f < *p.Minimum {
				return false, k + " is below the minimum"
			}
		case "object":
			if _, ok := val.(map[string]any); !ok {
				return false, k + " is not an object"
			}
			sub := jsonSchema{Type: p.Type, Properties: p.Properties, Required: p.Required, AdditionalProperties: p.AdditionalProperties}
			if ok, why := sub.allows(v); !ok {
				return false, k + ": " + why
			}
		default:
			return false, k + " has an unknown type " + p.Type
		}
	}
	for _, r := range s.Required {
		if v, ok := obj[r]; !ok || string(bytes.TrimSpace(v)) == "null" {
			return false, r + " is missing"
		}
	}
	return true, ""
}

// goodValues are, per tool, a value for every property that the tool
// accepts on its own; the agreement test starts from them and breaks one
// schema rule at a time. A property added to a schema without a value here
// fails the test, so no new field escapes the check.
func goodValues() map[string]map[string]any {
	return map[string]map[string]any{
		"read":  {"file_path": "twelve.txt", "offset": 2, "limit": 3},
		"glob":  {"pattern": "*.md", "path": "."},
		"grep":  {"pattern": "needle", "path": ".", "glob": "*.go", "output_mode": "count", "head_limit": 3},
		"ls":    {"path": "."},
		"write": {"file_path": "notes.md", "content": "# Notes\n- run `make`\n", "evidence": map[string]any{"file_path": "twelve.txt", "quote": "line"}},
		"edit":  {"file_path": "notes.md", "old_string": "make", "new_string": "make check", "replace_all": true, "evidence": map[string]any{"file_path": "twelve.txt", "quote": "line"}},
	}
}

type probe struct {
	name    string
	input   map[string]any
	allowed bool // what the schema says, by construction
}

// probes derives, from a tool's schema, inputs on both sides of every rule
// it declares: required fields, types, minimums, enums and the closed set of
// property names.
func probes(s jsonSchema, good map[string]any) []probe {
	with := func(k string, v any) map[string]any {
		m := maps.Clone(good)
		m[k] = v
		return m
	}
	without := func(k string) map[string]any {
		m := maps.Clone(good)
		delete(m, k)
		return m
	}
	requiredOnly := map[string]any{}
	for _, r := range s.Required {
		requiredOnly[r] = good[r]
	}
	ps := []probe{
		{"every property", good, true},
		{"required properties only", requiredOnly, true},
		{"an unknown property", with("extra", "x"), false},
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[k]
		required := slices.Contains(s.Required, k)
		ps = append(ps,
			probe{k + " left out", without(k), !required},
			probe{k + " null", with(k, nil), !required},
			probe{k + " in upper case", func() map[string]any { m := without(k); m[strings.ToUpper(k)] = good[k]; return m }(), false},
			probe{k + " as an object", with(k, map[string]any{}), false},
			probe{k + " as an array", with(k, []any{good[k]}), false},
		)
		switch p.Type {
		case "string":
			ps = append(ps, probe{k + " as a number", with(k, 1), false}, probe{k + " as a boolean", with(k, true), false})
			for _, e := range p.Enum {
				ps = append(ps, probe{k + " = " + e, with(k, e), true})
			}
			if p.Enum != nil {
				ps = append(ps,
					probe{k + " empty", with(k, ""), false},
					probe{k + " not in the enum", with(k, "lines"), false},
					probe{k + " in the wrong case", with(k, strings.ToUpper(p.Enum[0])), false},
				)
			}
		case "integer":
			ps = append(ps,
				probe{k + " as a string", with(k, "3"), false},
				probe{k + " as a fraction", with(k, 2.5), false},
				probe{k + " as a boolean", with(k, true), false},
				probe{k + " huge", with(k, json.Number("1e300")), false},
			)
			if p.Minimum != nil {
				m := int64(*p.Minimum)
				ps = append(ps,
					probe{fmt.Sprintf("%s = minimum %d", k, m), with(k, m), true},
					probe{fmt.Sprintf("%s = %d, below the minimum", k, m-1), with(k, m-1), false},
					probe{k + " far below the minimum", with(k, math.MinInt64), false},
				)
			}
		case "object":
			sub, _ := good[k].(map[string]any)
			for _, r := range p.Required {
				ps = append(ps, probe{k + " without its " + r, with(k, func() map[string]any { m := maps.Clone(sub); delete(m, r); return m }()), false})
			}
			ps = append(ps, probe{k + " with an unknown field", with(k, func() map[string]any { m := maps.Clone(sub); m["extra"] = "x"; return m }()), false})
		case "boolean":
			ps = append(ps,
				probe{k + " false", with(k, false), true},
				probe{k + " true", with(k, true), true},
				probe{k + " as a string", with(k, "true"), false},
				probe{k + " as a number", with(k, 1), false},
			)
		}
	}
	return ps
}

// TestSchemaAgreesWithDecoding checks, for every tool, that the schema the
// model is shown and the tool's own input checks draw the same line: every
// input on the schema's side of a rule is accepted, every input across it is
// refused with a message that names the field.
func TestSchemaAgreesWithDecoding(t *testing.T) {
	f := newFixture(t, Limits{})
	writeFile(t, filepath.Join(f.repo, "twelve.txt"), strings.Repeat("line\n", 12))
	writeFile(t, filepath.Join(f.staging, "notes.md"), "# Notes\n- run `make`\n")
	goods := goodValues()
	for _, tl := range f.set.Tools() {
		t.Run(tl.Name(), func(t *testing.T) {
			s := parseSchema(t, tl)
			good, ok := goods[tl.Name()]
			if !ok {
				t.Fatalf("no good values for tool %s", tl.Name())
			}
			if got, want := slices.Sorted(maps.Keys(good)), slices.Sorted(maps.Keys(s.Properties)); !slices.Equal(got, want) {
				t.Fatalf("good values cover %v, schema declares %v", got, want)
			}
			if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Fatalf("schema must be a closed object (the tools refuse unknown fields): %s", tl.Schema())
			}
			for _, p := range probes(s, good) {
				raw, err := json.Marshal(p.input)
				if err != nil {
					t.Fatal(err)
				}
				if allowed, why := s.allows(raw); allowed != p.allowed {
					t.Fatalf("%s: the schema reader says allowed=%v (%s), the probe was built as %v: %s", p.name, allowed, why, p.allowed, raw)
				}
				err = tl.Validate(raw)
				switch {
				case p.allowed && err != nil:
					t.Errorf("%s: the schema allows %s, the tool refuses it: %v", p.name, raw, err)
				case !p.allowed && err == nil:
					t.Errorf("%s: the schema forbids %s, the tool accepts it", p.name, raw)
				case !p.allowed && !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(strings.Fields(p.name)[0])) && p.name != "an unknown property":
					t.Errorf("%s: refusal %q does not name the field", p.name, err)
				}
			}
		})
	}
}

// FuzzSchemaAgreement feeds arbitrary JSON to every tool: whatever the tool
// accepts, its schema must allow. (The converse does not hold: the tools
// also refuse paths outside their roots, empty patterns and the like, which
// no schema can say.)
func FuzzSchemaAgreement(f *testing.F) {
	for name, good := range goodValues() {
		b, _ := json.Marshal(good)
		f.Add(name, string(b))
	}
	f.Add("read", `{"file_path":"twelve.txt","Offset":-5}`)
	f.Add("grep", `{"pattern":"x","head_limit":0}`)
	f.Add("grep", `{"pattern":"x","output_mode":""}`)
	f.Add("read", `{"file_path":"twelve.txt","offset":1e0}`)
	f.Add("edit", `{"file_path":"notes.md","old_string":"make","new_string":"x","replace_all":null}`)
	f.Add("read", `{"file_path":"twelve.txt","offset":-1,"offset":1}`)
	fx := newFixture(f, Limits{})
	writeFile(f, filepath.Join(fx.repo, "twelve.txt"), strings.Repeat("line\n", 12))
	writeFile(f, filepath.Join(fx.staging, "notes.md"), "# Notes\n- run `make`\n")
	byName := map[string]Tool{}
	schemas := map[string]jsonSchema{}
	for _, tl := range fx.set.Tools() {
		byName[tl.Name()] = tl
		schemas[tl.Name()] = parseSchema(f, tl)
	}
	f.Fuzz(func(t *testing.T, name, input string) {
		tl, ok := byName[name]
		if !ok {
			return
		}
		if err := tl.Validate(json.RawMessage(input)); err != nil {
			return
		}
		if allowed, why := schemas[name].allows([]byte(input)); !allowed {
			t.Fatalf("%s accepts %s, which its schema forbids: %s", name, input, why)
		}
	})
}

// TestSchemasGolden pins the schema text of every tool, the contract a
// model is trained against: a renamed field or a changed bound shows up as a
// diff here.
func TestSchemasGolden(t *testing.T) {
	f := newFixture(t, Limits{})
	for _, tl := range f.set.Tools() {
		var out bytes.Buffer
		if err := json.Indent(&out, tl.Schema(), "", "  "); err != nil {
			t.Fatalf("%s: %v", tl.Name(), err)
		}
		out.WriteByte('\n')
		golden(t, filepath.Join("schema", tl.Name()+".json"), out.String())
	}
}

func TestGrepModesAreTheEnum(t *testing.T) {
	for _, fs := range grepSpec().fields {
		if fs.name == "output_mode" {
			if want := []string{grepContent, grepFiles, grepCount}; !slices.Equal(fs.enum, want) {
				t.Fatalf("output_mode enum %v, modes %v", fs.enum, want)
			}
			return
		}
	}
	t.Fatal("grep has no output_mode")
}

func TestSpecRejectsBadTags(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"not a struct", 0, "not a struct"},
		{"no json name", struct {
			A string `desc:"a"`
		}{}, "no json name"},
		{"no description", struct {
			A string `json:"a"`
		}{}, "no desc"},
		{"unsupported type", struct {
			A []string `json:"a" desc:"a"`
		}{}, "unsupported type"},
		{"minimum on a string", struct {
			A string `json:"a" desc:"a" minimum:"1"`
		}{}, "minimum on a string"},
		{"minimum not a number", struct {
			A int `json:"a" desc:"a" minimum:"one"`
		}{}, "minimum"},
		{"enum on an integer", struct {
			A int `json:"a" desc:"a" enum:"1,2"`
		}{}, "enum on a integer"},
		{"default on a required field", struct {
			A bool `json:"a" desc:"a" default:"false"`
		}{}, "required field has no default"},
		{"default of the wrong type", struct {
			A bool `json:"a,omitempty" desc:"a" default:"\"no\""`
		}{}, "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := specOf(reflect.TypeOf(tt.v))
			wantErr(t, err, tt.want)
		})
	}
}

// BenchmarkDecode measures what checking the spec adds to a call's decoding:
// "strict" is the decoder alone, "spec" is decode as the tools call it. A
// tool call costs milliseconds of file I/O; the ratio shows the check is
// noise beside it.
func BenchmarkDecode(b *testing.B) {
	input := json.RawMessage(`{"pattern":"make release","path":".","glob":"*.jsonl","output_mode":"count","head_limit":20}`)
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			var in grepInput
			dec := json.NewDecoder(bytes.NewReader(input))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("spec", func(b *testing.B) {
		for b.Loop() {
			var in grepInput
			if err := decode("grep", input, &in, grepSpec()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestDecodeWithTheWrongSpec(t *testing.T) {
	var in globInput
	wantErr(t, decode("glob", json.RawMessage(`{"pattern":"x"}`), &in, readSpec()), "spec of")
}
