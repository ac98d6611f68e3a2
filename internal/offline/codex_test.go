package offline

import (
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/host"
)

// codexMemory is a Codex MEMORY.md of three blocks in the layout of Codex's
// consolidation template (codex-rs/core/src/memories: a ---fenced header
// opening with rollout_summary_files:, then the block's bullets). Blocks two
// and three come from the same rollout, so their headers are the same (their
// file list written flush left, which the template allows), and
// blocks one and two both learned the canary rule.
const codexMemory = `---
rollout_summary_files:
  - 2026-11-27T09-12-44-canary.md (success, cwd=/home/dev/src/shop-api, updated_at=2026-11-27T10:02:13Z)
description: Canary deploys in shop-api
keywords: canary, deploy
---

- Deploys of shop-api need a green canary first.
- 部署前先在预发环境验证迁移脚本。

---
rollout_summary_files:
- 2026-11-28T10-40-02-retries.md (success, cwd=/home/dev/src/shop-api, updated_at=2026-11-28T11:02:13Z)
description: Payment retries in shop-api
keywords: ChargeCard, retry
---

- Deploys of shop-api need a green canary first.
- ChargeCard retries with exponential backoff (100 ms, 400 ms, 1.6 s).

---
rollout_summary_files:
- 2026-11-28T10-40-02-retries.md (success, cwd=/home/dev/src/shop-api, updated_at=2026-11-28T11:02:13Z)
description: Payment retries in shop-api
keywords: ChargeCard, retry
---

- The retry budget is three attempts with jittered back-off.
- The retry budget is three attempts with jittered back-off.
`

// TestCodexBlocksAreNotDeduplicatedAcross: in the Codex layout the engine
// reads the file roles: MEMORY.md is blocks, not an index (no pointer is
// added), a header repeated in two blocks stays, a bullet repeated in
// another block is that rollout's memory and stays, and only the repeat
// inside one block body goes; the generated raw_memories.md is never
// written. The result passes the Codex edit guard.
func TestCodexBlocksAreNotDeduplicatedAcross(t *testing.T) {
	raw := "# Raw memories\n\n- The retry budget is three attempts with jittered back-off.\n- The retry budget is three attempts with jittered back-off.\n"
	rep, out := runOn(t, map[string]string{
		"MEMORY.md":              codexMemory,
		"raw_memories.md":        raw,
		"skills/deploy/SKILL.md": "# Deploy\n\n- Tag the release before deploying it anywhere.\n- Tag the release before deploying it anywhere.\n",
	}, Options{Layout: LayoutFor("codex")})
	want := strings.Replace(codexMemory, "- The retry budget is three attempts with jittered back-off.\n- The retry budget is three attempts with jittered back-off.\n",
		"- The retry budget is three attempts with jittered back-off.\n", 1)
	if out["MEMORY.md"] != want {
		t.Errorf("MEMORY.md:\n%s\nwant:\n%s", out["MEMORY.md"], want)
	}
	if out["raw_memories.md"] != raw {
		t.Errorf("generated raw_memories.md was changed:\n%s", out["raw_memories.md"])
	}
	if strings.Count(out["skills/deploy/SKILL.md"], "Tag the release") != 1 {
		t.Errorf("a writable skill file is still fixed:\n%s", out["skills/deploy/SKILL.md"])
	}
	for _, f := range rep.Fixes {
		if f.Kind != KindDuplicate {
			t.Errorf("unexpected fix %+v", f)
		}
	}
	hl, err := host.Resolve("codex", "", "/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := hl.CheckEdit("MEMORY.md", []byte(codexMemory), []byte(out["MEMORY.md"])); err != nil {
		t.Errorf("Codex edit guard: %v", err)
	}
}

// TestCodexBlocksCRLFAreLeftAlone: when the headers cannot be located (CRLF
// lines, which the block parser strips), nothing in the file is touched.
func TestCodexBlocksCRLFAreLeftAlone(t *testing.T) {
	crlf := strings.ReplaceAll(codexMemory, "\n", "\r\n")
	_, out := runOn(t, map[string]string{"MEMORY.md": crlf}, Options{Layout: LayoutFor("codex")})
	if out["MEMORY.md"] != crlf {
		t.Errorf("MEMORY.md changed:\n%q", out["MEMORY.md"])
	}
}
