package jsonc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseSpans(t *testing.T) {
	src := "// top\n{\n  \"a\": [1, {\"b\": \"x\\\"y\"}], /* c */\n  \"t\": true\n}\n"
	v, comments, err := Parse([]byte(src))
	if err != nil || !comments {
		t.Fatalf("%v %v", err, comments)
	}
	a := v.Get("a")
	if got := src[a.Start:a.End]; got != `[1, {"b": "x\"y"}]` {
		t.Errorf("span of a = %q", got)
	}
	if s, _ := a.Items[1].Get("b").Text(); s != `x"y` {
		t.Errorf("b = %q", s)
	}
	if b, ok := v.Get("t").Bool(); !ok || !b {
		t.Error("t")
	}
	if src[v.Members[1].KeyStart:v.Members[1].KeyStart+3] != `"t"` {
		t.Error("KeyStart")
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		"":                     "no JSON value",
		"{\"a\": 1,}":          "trailing comma",
		"[1,]":                 "trailing comma",
		"{a: 1}":               "quoted key",
		"{\"a\": 1} x":         "text after",
		"{\"a\": 1, \"a\": 2}": "duplicate key",
		"{\"a\": 01}":          "bad number",
		"\"a\nb\"":             "newline",
		"/* x":                 "unterminated",
		"\xff":                 "UTF-8",
		strings.Repeat("[", 300) + strings.Repeat("]", 300): "nested too deeply",
	} {
		_, _, err := Parse([]byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", src, err, want)
		}
	}
	_, _, err := Parse([]byte("{\n  \"a\": 1,\n}"))
	if se, ok := err.(*SyntaxError); !ok || se.Line != 3 {
		t.Errorf("line of the error: %v", err)
	}
}

// FuzzParse: jsonc agrees with encoding/json on comment-free input (except
// for duplicate keys, which jsonc refuses on purpose) and every span lies
// inside the source.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2, {"b": null}]}`, "// c\n{}", `[1e5, -0.5, "\u00e9"]`, `{"a": 1,}`, "{\"hooks\": {\"SessionEnd\": []}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, comments, err := Parse([]byte(s))
		valid := json.Valid([]byte(s)) && utf8.ValidString(s) // jsonc refuses invalid UTF-8 on purpose
		if err == nil && !comments && !valid {
			t.Fatalf("jsonc accepted invalid JSON %q", s)
		}
		if err != nil && valid && !strings.Contains(err.Error(), "duplicate key") && !strings.Contains(err.Error(), "nested too deeply") {
			t.Fatalf("jsonc refused valid JSON %q: %v", s, err)
		}
		if err == nil {
			checkSpans(t, v, len(s))
		}
	})
}

func checkSpans(t *testing.T, v *Value, n int) {
	if v.Start < 0 || v.Start >= v.End || v.End > n {
		t.Fatalf("span %d..%d of %d", v.Start, v.End, n)
	}
	for _, it := range v.Items {
		checkSpans(t, it, n)
	}
	for _, m := range v.Members {
		if m.KeyStart < v.Start || m.KeyStart >= m.Value.Start {
			t.Fatalf("key at %d, value at %d", m.KeyStart, m.Value.Start)
		}
		checkSpans(t, m.Value, n)
	}
}
