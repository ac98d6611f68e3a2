package dream

import (
	"github.com/dreamkit/dream/internal/audit"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/nanobot"
)

// nanobotAuditScope is what the audit history of a nanobot workspace
// records: the memory files the layout names as writable (SOUL.md,
// USER.md, memory/MEMORY.md), skills/, which nanobot's Dream writes, and
// memory/.dream_cursor, which the flow moves with each dream (undoing the
// dream must unconsume its history entries).
// The workspace also holds the user's conversations (sessions/*.jsonl in
// the pre-namespace layout), memory/history.jsonl and the cursors
// (HKUDS/nanobot, nanobot/agent/memory.py and nanobot/session/); those are
// not memory, and recording them would push private conversations to the
// sync remote.
func nanobotAuditScope(l host.Layout) []string {
	return append(l.Writable(), nanobot.SkillsDir+"/", "memory/"+nanobot.DreamCursorName)
}

// setAuditScope writes the scope of the memory's audit history where every
// audit.Open finds it (see audit.SetScope), so that `dream log`, `undo`,
// sync and the pipeline record under one rule.
func setAuditScope(stateDir, memoryDir string, scope []string) error {
	if stateDir == "" || memoryDir == "" {
		return nil
	}
	return audit.SetScope(stateDir, memoryDir, scope)
}
