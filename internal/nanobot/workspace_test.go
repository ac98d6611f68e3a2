package nanobot

import "testing"

func TestWritableSet(t *testing.T) {
	for rel, want := range map[string]bool{
		"SOUL.md": true, "USER.md": true, "memory/MEMORY.md": true, "skills/mqtt/SKILL.md": true, "skills/x": true,
		"memory/history.jsonl": false, "memory/.dream_cursor": false, "memory/.cursor": false, "memory/history.jsonl.idx": false,
		"skills": false, "skills/": false, "AGENTS.md": false, "memory/notes.md": false, "soul.md": false, "MEMORY.md": false,
	} {
		if got := Writable(rel); got != want {
			t.Errorf("Writable(%q) = %v, want %v", rel, got, want)
		}
	}
}
