package offline

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestDatesUnderDatedHeading: each line sits under "## 2026-11-20" (a
// Friday), so the day it was written is known; want is the line after the
// run, or the line itself when it must be left alone.
func TestDatesUnderDatedHeading(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"sentence start", "- Yesterday we added the retry budget.", "- On 2026-11-19 we added the retry budget."},
		{"end of sentence", "- We added the retry budget yesterday.", "- We added the retry budget on 2026-11-19."},
		{"after a preposition", "- Broken since yesterday.", "- Broken since 2026-11-19."},
		{"today and tomorrow", "- Keys rotated today; old ones expire tomorrow.", "- Keys rotated on 2026-11-20; old ones expire on 2026-11-21."},
		{"last night", "- Last night the backup failed.", "- On the night of 2026-11-19 the backup failed."},
		{"this week", "- This week the freeze is on.", "- In the week of 2026-11-16 the freeze is on."},
		{"last week", "- The cutover happened last week.", "- The cutover happened in the week of 2026-11-09."},
		{"last friday", "- We moved the cron last Friday.", "- We moved the cron on 2026-11-13."},
		{"last year", "- Last year we skipped the freeze.", "- In 2025 we skipped the freeze."},
		{"n days ago", "- 3 days ago we raised the pool size.", "- On 2026-11-17 we raised the pool size."},
		{"months ago", "- We left Heroku two months ago.", "- We left Heroku in 2026-09."},
		{"zh yesterday", "- 昨天发布了 v2.3.0。", "- 2026-11-19发布了 v2.3.0。"},
		{"zh last night", "- 昨晚，备份失败了。", "- 2026-11-19 晚上，备份失败了。"},
		{"zh this week", "- 本周 冻结发布。", "- 2026-11-16 那周 冻结发布。"},
		{"zh last year", "- 去年 的方案已废弃。", "- 2025年 的方案已废弃。"},
		{"zh n days ago", "- 三天前修复了时区问题。", "- 2026-11-17修复了时区问题。"},
		// Decoys: left exactly as written.
		{"a name", "- The Today screen is in src/screens/Today.tsx.", ""},
		{"a file name", "- See today.md for details.", ""},
		{"inline code", "- Run `git log --since=yesterday`.", ""},
		{"a link", "- See [yesterday](notes/yesterday.md).", ""},
		{"recurring", "- Trains leave in the last week of every quarter.", ""},
		{"older than", "- Delete snapshots older than 30 days ago.", ""},
		{"template", "- Standup: Yesterday, Today, Blockers.", ""},
		{"label", "- Today: the login flow.", ""},
		{"quoted", "- She said \"we shipped it yesterday\".", ""},
		{"curly quoted", "- Ana said “last week was the cutover”.", ""},
		{"possessive", "- Yesterday's deploy was rolled back.", ""},
		{"zh inside a word", "- 目前天津机房承载主流量。", ""},
		{"zh inside a word 2", "- 扩容的提前天数是三天。", ""},
		{"zh recurring", "- 每 三天前 清理一次。", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.line
			}
			src := "# Log\n\n## 2026-11-20\n\n" + tt.line + "\n"
			_, out := runOn(t, map[string]string{"log.md": src}, Options{})
			if got := strings.TrimPrefix(out["log.md"], "# Log\n\n## 2026-11-20\n\n"); got != want+"\n" {
				t.Errorf("got  %q\nwant %q", got, want+"\n")
			}
		})
	}
}

// TestDatesNeverInStructure: headings, blockquotes, code blocks, tables and
// frontmatter keep their date words even under a dated heading.
func TestDatesNeverInStructure(t *testing.T) {
	src := "---\nupdated: yesterday\n---\n## 2026-11-20\n\n### Yesterday's notes\n\n> Yesterday the vendor confirmed.\n\n```\nyesterday\n```\n\n    make backup-yesterday yesterday\n\n| when | what |\n|---|---|\n| yesterday | deploy |\n"
	rep, out := runOn(t, map[string]string{"n.md": src}, Options{})
	if out["n.md"] != src || len(rep.Fixes) != 0 {
		t.Errorf("structure was edited: %+v\n%s", rep.Fixes, out["n.md"])
	}
}

// TestDatesWithoutAnchorAreLeads: the file's mtime and the run's time are
// never an anchor.
func TestDatesWithoutAnchorAreLeads(t *testing.T) {
	src := "# Notes\n\n- Yesterday the flaky test was quarantined.\n"
	rep, out := runOn(t, map[string]string{"n.md": src}, Options{Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if out["n.md"] != src {
		t.Errorf("rewritten without an anchor:\n%s", out["n.md"])
	}
	if len(rep.Leads) != 1 || rep.Leads[0].Kind != KindUndatedRelativeDate || rep.Leads[0].Line != 3 {
		t.Errorf("leads = %+v", rep.Leads)
	}
}

func TestTranscriptProvenance(t *testing.T) {
	claude := `{"type":"assistant","timestamp":"2026-11-18T16:20:05.120Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/home/a/.claude/projects/p/memory/notes.md","content":"# N\n\n- Yesterday we chose Postgres.\n"}}]}}
{"type":"assistant","timestamp":"2026-11-21T09:00:00Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/home/a/.claude/projects/p/memory/notes.md","old_string":"x","new_string":"- Two days ago we dropped v1."}}]}}
{"type":"assistant","timestamp":"2026-11-22T09:00:00Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t3","name":"MultiEdit","input":{"file_path":"/home/a/.claude/projects/p/memory/notes.md","edits":[{"old_string":"a","new_string":"- Today the cache came back."}]}}]}}
{"type":"assistant","timestamp":"2026-11-25T09:00:00Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t4","name":"Write","input":{"file_path":"/home/a/.claude/projects/p/memory/notes.md","content":"# N\n\n- Yesterday we chose Postgres.\n- Two days ago we dropped v1.\n"}}]}}
not json at all
`
	codex := `{"timestamp":"2026-11-19T10:00:00.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"apply_patch\",\"*** Begin Patch\\n*** Update File: memory/ops.md\\n@@\\n+- Yesterday the queue drained.\\n*** End Patch\"]}"}}
{"timestamp":"2026-11-20T10:00:00.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: memory/db.md\n+- Last week we upgraded Postgres.\n*** End Patch"}}
`
	tr := &Transcripts{byBase: map[string][]writtenFile{}}
	for _, s := range []string{claude, codex} {
		if _, err := tr.read(strings.NewReader(s)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		rel, line, day string
	}{
		{"notes.md", "- Yesterday we chose Postgres.", "2026-11-18"}, // the earliest write, not the rewrite
		{"notes.md", "- Two days ago we dropped v1.", "2026-11-21"},
		{"notes.md", "- Today the cache came back.", "2026-11-22"},
		{"ops.md", "- Yesterday the queue drained.", "2026-11-19"},
		{"db.md", "- Last week we upgraded Postgres.", "2026-11-20"},
		{"other.md", "- Yesterday we chose Postgres.", ""},
		{"notes.md", "- never written by a tool", ""},
	}
	for _, tt := range tests {
		at, ok := tr.WrittenOn(tt.rel, tt.line)
		got := ""
		if ok {
			got = at.UTC().Format("2006-01-02")
		}
		if got != tt.day {
			t.Errorf("WrittenOn(%s, %q) = %q, want %q", tt.rel, tt.line, got, tt.day)
		}
	}
}

func TestHistoryProvenance(t *testing.T) {
	d := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	h := NewHistory(map[string][]Version{"n.md": {
		{At: d("2026-11-01T09:00:00Z"), Content: []byte("- first line\n")},
		{At: d("2026-11-01T18:00:00Z"), Content: []byte("- first line\n- same-day line\n")},
		{At: d("2026-11-05T18:00:00Z"), Content: []byte("- first line\n- same-day line\n- four-day window line\n")},
	}})
	if at, ok := h.WrittenOn("n.md", "- same-day line"); !ok || at.UTC().Format("2006-01-02") != "2026-11-01" {
		t.Errorf("same-day window: %v %v", at, ok)
	}
	if _, ok := h.WrittenOn("n.md", "- four-day window line"); ok {
		t.Error("a four-day window gave a day")
	}
	if _, ok := h.WrittenOn("n.md", "- first line"); ok {
		t.Error("the first version has no window")
	}
	if _, err := LoadTranscripts(context.Background(), t.TempDir()+"/missing"); err != nil {
		t.Errorf("a missing transcripts dir is no provenance, not an error: %v", err)
	}
}
