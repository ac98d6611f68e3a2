package tools

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
)

func TestSetToolsAndSchemas(t *testing.T) {
	f := newFixture(t, Limits{})
	var names []string
	for _, tl := range f.set.Tools() {
		names = append(names, tl.Name())
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tl.Schema(), &schema); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", tl.Name(), err)
		}
		if schema.Type != "object" {
			t.Errorf("%s: schema type %q", tl.Name(), schema.Type)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tl.Name(), r)
			}
		}
		if tl.Description() == "" {
			t.Errorf("%s: empty description", tl.Name())
		}
	}
	if want := []string{"read", "glob", "grep", "ls", "write", "edit"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	if got := f.set.Limits(); got != DefaultLimits() {
		t.Errorf("zero limits should take defaults, got %+v", got)
	}
}

func TestNewSetErrors(t *testing.T) {
	if _, err := NewSet(Env{}); err == nil {
		t.Error("missing memory dir should fail")
	}
	if _, err := NewSet(Env{MemoryDir: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Error("nonexistent memory dir should fail")
	}
	// Optional roots that do not exist are skipped.
	mem := t.TempDir()
	s, err := NewSet(Env{MemoryDir: mem, RepoDir: filepath.Join(mem, "missing-repo")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, rel, err := s.ro.Resolve("x.md"); err != nil || rel != "x.md" {
		t.Errorf("with no repo, relative paths resolve in memory: %q %v", rel, err)
	}
}

func TestDecodeStrict(t *testing.T) {
	f := newFixture(t, Limits{})
	for _, in := range []string{`{"filepath":"x"}`, `{"file_path":"x"} {}`, ``, `[]`, `{"file_path":1}`} {
		if err := f.tool(t, "read").Validate(json.RawMessage(in)); err == nil {
			t.Errorf("Validate(%s) should fail", in)
		}
	}
}
