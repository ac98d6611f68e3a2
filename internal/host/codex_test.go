package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/gate"
)

// TestCodexMemoryFeature: whether Codex consolidates and loads memories/
// is read from its config.toml as Codex 0.171.0 reads it: the memories
// feature off (the default) means neither; on means both, unless
// use_memories = false keeps it out of the prompt (Codex still
// consolidates: generate_memories = false does not stop its phase 2).
func TestCodexMemoryFeature(t *testing.T) {
	tests := []struct {
		name, config string
		consolidates bool
		notLoaded    string
	}{
		{"no config", "", false, "memories feature is off"},
		{"feature off", "[features]\nmemories = false\n", false, "memories feature is off"},
		{"feature on", "model = \"m\"\n[features]\nmemories = true\n", true, ""},
		{"on, generation off", "[features]\nmemories = true\n[memories]\ngenerate_memories = false\n", true, ""},
		{"on, not used", "[features]\nmemories = true\n[memories]\nuse_memories = false\n", true, "use_memories = false"},
		{"dotted keys", "features.memories = true\n", true, ""},
		{"not TOML", "[features\nmemories = true\n", false, "memories feature is off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.config != "" {
				write(t, filepath.Join(home, ".codex", "config.toml"), tt.config)
			}
			l, err := Resolve("codex", "", home, envMap(nil))
			if err != nil {
				t.Fatal(err)
			}
			c := l.Consolidator
			if c == nil || c.Enabled != tt.consolidates || c.TakesLock {
				t.Errorf("consolidator %+v, want enabled=%v and no lock", c, tt.consolidates)
			}
			if tt.notLoaded == "" && l.NotLoaded != "" || !strings.Contains(l.NotLoaded, tt.notLoaded) {
				t.Errorf("NotLoaded = %q, want it to say %q", l.NotLoaded, tt.notLoaded)
			}
		})
	}
}

// TestCodexFiles: what 0.171.0 loads of memories/ (memory_summary.md into
// every prompt, cut to its first and last 5,000 bytes; the rest on demand)
// and that its consolidation workspace is never dream's to write.
func TestCodexFiles(t *testing.T) {
	l, err := Resolve("codex", "", "/home/u", envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel              string
		loaded, onDemand bool
		writable         bool
	}{
		{"memory_summary.md", true, false, true},
		{"MEMORY.md", true, true, true},
		{"skills/deploy/SKILL.md", true, true, true},
		{"rollout_summaries/2026-12-04-a.md", true, true, false},
		{"raw_memories.md", false, false, false},
		{"phase2_workspace_diff.md", false, false, false},
		{"extensions/ad_hoc/instructions.md", false, false, false},
		{"extensions/ad_hoc/notes/1-x.md", false, false, false},
		{".codex-baseline/.git/codex-baseline.lock", false, false, false},
	}
	for _, tt := range tests {
		f, ok := l.FileFor(tt.rel)
		if !ok || f.Loaded != tt.loaded || f.OnDemand != tt.onDemand || f.Writable != tt.writable {
			t.Errorf("%s: %+v (found %v), want loaded=%v on demand=%v writable=%v", tt.rel, f, ok, tt.loaded, tt.onDemand, tt.writable)
		}
		if err := l.CheckEdit(tt.rel, []byte("a\n"), []byte("b\n")); errors.Is(err, ErrNotWritable) == tt.writable {
			t.Errorf("CheckEdit(%s) = %v, want writable=%v", tt.rel, err, tt.writable)
		}
	}
	if f, _ := l.FileFor("memory_summary.md"); !strings.Contains(f.Limit, "5,000") {
		t.Errorf("memory_summary.md limit %q", f.Limit)
	}
}

// TestCodexSessionSources: the sources 0.171.0 records (the interactive UI
// "vscode", codex exec "exec", first lines as the agent wrote them) are
// counted as the rule says, exec ones only with codex_exec_sessions.
func TestCodexSessionSources(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	vscode, exec := read("codex-0.171.0-vscode.jsonl"), read("codex-0.171.0-exec.jsonl")
	sub := []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"x","source":{"subagent":"review"}}}`)
	mcp := []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"x","source":"mcp"}}`)
	old := []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/r"}}`)
	spaced := []byte(`{"type": "session_meta", "payload": {"source": "exec"}}`)
	for _, tt := range []struct {
		name          string
		line          []byte
		plain, withEx bool
	}{
		{"vscode", vscode, true, true},
		{"exec", exec, false, true},
		{"exec, not compact", spaced, false, true},
		{"sub-agent", sub, false, false},
		{"mcp", mcp, false, false},
		{"no source (older rollouts)", old, true, true},
		{"not a session_meta", []byte(`{"type":"response_item"}`), false, false},
	} {
		if got := codexKeep(tt.line, false); got != tt.plain {
			t.Errorf("%s: counted %v by default, want %v", tt.name, got, tt.plain)
		}
		if got := codexKeep(tt.line, true); got != tt.withEx {
			t.Errorf("%s: counted %v with codex_exec_sessions, want %v", tt.name, got, tt.withEx)
		}
	}

	// The same through the session scan and CountCodexExec.
	home := t.TempDir()
	day := filepath.Join(home, ".codex", "sessions", "2026", "12", "04")
	write(t, filepath.Join(day, "rollout-2026-12-04T21-09-06-01a242e3-acbf-7c20-bd6b-6b380e18fbb2.jsonl"), string(vscode))
	write(t, filepath.Join(day, "rollout-2026-12-04T21-04-20-01a242df-4cd1-7fc1-8e4d-b1d6cf19d483.jsonl"), string(exec))
	l, err := Resolve("codex", "", home, envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Hour)
	count := func() int {
		n, err := gate.CountSessions(context.Background(), l.SessionsDir, since, l.Sessions, "")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 1 || !strings.Contains(l.SessionsCounted, "codex_exec_sessions") {
		t.Errorf("default rule counts %d (want the interactive one), says %q", n, l.SessionsCounted)
	}
	CountCodexExec(&l)
	if n := count(); n != 2 || !strings.Contains(l.SessionsCounted, "counted because codex_exec_sessions is set") {
		t.Errorf("with codex_exec_sessions the rule counts %d, want 2; says %q", n, l.SessionsCounted)
	}
	other, _ := Resolve("gemini", "/r", home, envMap(nil))
	before := other.SessionsCounted
	CountCodexExec(&other)
	if other.SessionsCounted != before {
		t.Error("CountCodexExec changed a Gemini layout")
	}
}

// TestCodexSummaryLoaded: what Codex 0.171.0 put in its prompt for these
// memory_summary.md files (seen in its requests): whole up to 10,000
// bytes; past that the first and last 5,000 bytes at character
// boundaries around "…N tokens truncated…", N the bytes cut over 4,
// rounded up.
func TestCodexSummaryLoaded(t *testing.T) {
	var lines []string
	for i := 0; i < 2000; i++ {
		lines = append(lines, fmt.Sprintf("L%05d %s", i, strings.Repeat("x", 40)))
	}
	long := strings.Join(lines, "\n") + "\n" // 96,000 bytes
	wide := strings.Repeat("日", 9000) + "x"  // 27,001 bytes, 3 a character
	for _, tt := range []struct {
		name, in   string
		head, tail int
		marker     string
		cut        int
	}{
		{"short", "\n  - one\n- two\n\n", 0, 0, "", 0},
		{"10,000 bytes", strings.Repeat("a", 10000), 0, 0, "", 0},
		{"lines", long, 5000, 5000, "…21500 tokens truncated…", 85999},
		{"three-byte characters", wide, 4998, 4999, "…4251 tokens truncated…", 17004},
	} {
		got, cut := CodexSummaryLoaded([]byte(tt.in))
		trimmed := strings.TrimSpace(tt.in)
		if tt.marker == "" {
			if got != trimmed || cut != 0 {
				t.Errorf("%s: loaded %q (cut %d), want it whole", tt.name, got, cut)
			}
			continue
		}
		want := trimmed[:tt.head] + tt.marker + trimmed[len(trimmed)-tt.tail:]
		if got != want || cut != tt.cut {
			t.Errorf("%s: cut %d, want %d; loaded %d bytes, want %d", tt.name, cut, tt.cut, len(got), len(want))
		}
	}
}
