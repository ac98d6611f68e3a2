package lossguard

import (
	"fmt"
	"strings"
	"testing"
)

func topic(facts ...string) string {
	return "---\nname: ops\ndescription: ops\n---\n\n# Ops\n\n- " + strings.Join(facts, "\n- ") + "\n"
}

var facts = []string{"Deploys use the blue/green script.", "Page the on-call via PagerDuty.", "Disk alerts fire at 85%.",
	"Redis evicts with allkeys-lru.", "Backups are kept 35 days.", "Certificates renew via cert-manager.",
	"Drain the payments queue before a deploy.", "Flags live in the flags service.", "Logs are kept 14 days.", "TLS 1.2 is the floor."}

func TestCheckModel(t *testing.T) {
	before := Tree{"MEMORY.md": []byte("# Memory\n\n- [Ops](ops.md) — ops\n"), "ops.md": []byte(topic(facts...))}
	tests := []struct {
		name  string
		after Tree
		hold  bool
		lost  int
	}{
		{"unchanged", before, false, 0},
		{"one fact dropped", Tree{"MEMORY.md": before["MEMORY.md"], "ops.md": []byte(topic(facts[1:]...))}, false, 1},
		{"forty percent dropped", Tree{"MEMORY.md": before["MEMORY.md"], "ops.md": []byte(topic(facts[:4]...))}, true, 6},
		{"moved to another file", Tree{"MEMORY.md": before["MEMORY.md"], "ops.md": []byte(topic(facts[:6]...)),
			"runbook.md": []byte("# Runbook\n\n" + strings.Join(facts[6:], "\n\n") + "\n")}, false, 0},
		{"merged with new wording around it", Tree{"MEMORY.md": before["MEMORY.md"], "ops.md": []byte(topic(facts[:5]...) + "\nAlso: " + strings.Join(facts[5:], " ") + "\n")}, false, 0},
		{"file removed", Tree{"MEMORY.md": before["MEMORY.md"]}, true, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Check(before, tt.after, Options{})
			if v.Hold != tt.hold || len(v.Lost) != tt.lost {
				t.Errorf("hold %v lost %d (%v), want hold %v lost %d", v.Hold, len(v.Lost), v.Lost, tt.hold, tt.lost)
			}
			if tt.hold && (!strings.Contains(v.Summary(), "loss guard") || !strings.Contains(v.Summary(), "ops.md")) {
				t.Errorf("summary does not say what would be lost: %q", v.Summary())
			}
		})
	}
	if v := Check(before, before, Options{}); v.Changed || v.Summary() != "no changes" {
		t.Errorf("unchanged: %+v %q", v, v.Summary())
	}
	// A stricter max_loss holds what the default lets through.
	two := Tree{"MEMORY.md": before["MEMORY.md"], "ops.md": []byte(topic(facts[2:]...))}
	if Check(before, two, Options{}).Hold || !Check(before, two, Options{MaxLoss: 0.1}).Hold {
		t.Error("max_loss is not applied")
	}
}

func TestCheckStrict(t *testing.T) {
	src := topic(facts[0], facts[0], facts[1])
	before := Tree{"ops.md": []byte(src)}
	// The engine removed the second copy and said so.
	start := strings.Index(src, "- "+facts[0]) + len("- "+facts[0]+"\n")
	end := start + len("- "+facts[0]+"\n")
	after := Tree{"ops.md": []byte(src[:start] + src[end:])}
	if v := Check(before, after, Options{Strict: true, Records: []Record{{File: "ops.md", Start: start, End: end}}}); v.Err() != nil {
		t.Errorf("a recorded removal failed: %v", v.Err())
	}
	if v := Check(before, after, Options{Strict: true}); v.Err() == nil {
		t.Error("an unrecorded removal passed")
	}
	// A change elsewhere than recorded fails, even when its text survives.
	edited := Tree{"ops.md": []byte(strings.Replace(src, facts[1], "Page the on-call by phone.", 1))}
	v := Check(before, edited, Options{Strict: true, Records: []Record{{File: "ops.md", Start: start, End: end}}})
	if v.Err() == nil || !strings.Contains(v.Err().Error(), "PagerDuty") {
		t.Errorf("unrecorded edit: %v", v.Err())
	}
}

func TestCheckCountsBytes(t *testing.T) {
	long := strings.Repeat("A long fact that carries most of the bytes of the file. ", 20)
	before := Tree{"n.md": []byte(fmt.Sprintf("# N\n\n%s\n\n- a\n- b\n- c\n- d\n- e\n- f\n- g\n- h\n", long))}
	after := Tree{"n.md": []byte("# N\n\n- a\n- b\n- c\n- d\n- e\n- f\n- g\n- h\n")}
	v := Check(before, after, Options{})
	if len(v.Lost) != 1 || !v.Hold {
		t.Errorf("one unit of most of the bytes lost: hold %v lost %v", v.Hold, v.Lost)
	}
}
