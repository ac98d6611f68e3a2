package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: ``, want: `{}`},
		{in: "  \n", want: `{}`},
		{in: `{}`, want: `{}`},
		{in: `{"b":1,"a":"x"}`, want: `{"a":"x","b":1}`},
		{in: "{ \"a\" :\t[1, 2.50, {\"d\":null,\"c\":true}] }", want: `{"a":[1,2.50,{"c":true,"d":null}]}`},
		{in: `{"n":12345678901234567890}`, want: `{"n":12345678901234567890}`},
		{in: `{"a":1,"a":2}`, want: `{"a":2}`},
		{in: `"s"`, want: `"s"`},
		{in: `{"a":`, err: "not valid JSON"},
		{in: `{"a":1} {"b":2}`, err: "trailing data"},
		{in: `{"a":1}x`, err: "trailing data"},
		{in: `nope`, err: "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := canonicalJSON([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("canonicalJSON(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("canonicalJSON(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzCanonicalJSON checks that canonicalisation never panics, accepts only
// valid JSON, produces valid JSON, and is idempotent (so a respelled call
// and its canonical form count as the same call).
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"b":1,"a":[1,2]}`, `{"a":"<&>"}`, `{"a":1e400}`, `[1,`, "{\"a\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := canonicalJSON(in)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonicalJSON(%q) = %q, not valid JSON", in, out)
		}
		again, err := canonicalJSON(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
	})
}
