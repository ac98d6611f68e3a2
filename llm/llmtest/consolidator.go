package llmtest

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Consolidator is a fake model that dreams as dream's task asks, for the
// tests and benchmarks of what a dream costs: it lists the memory dir and
// reads the index, reads the topic files eight (or 8 KB) at a time (only the files
// its part names, when the task splits the memory into parts), greps the
// transcripts twice when the task says sessions were touched (in the
// first part), edits the index and each of its
// files that the task's leads name (four edits a turn, twelve at most),
// and answers with a summary. It finds the memory and the transcripts
// in the system prompt and the files on disk, and decides each answer
// from the conversation so far, so it serves any number of dreams and
// parts in a row (Repeat -1).
func Consolidator() Turn {
	return Turn{Repeat: -1, Dynamic: consolidate}
}

var (
	memoryDirLine   = regexp.MustCompile(`(?m)^- Memory directory \(the only place you may write\): (.+)$`)
	sessionsDirLine = regexp.MustCompile(`(?m)^- Session transcripts \(read-only, large JSONL files\): (.+)$`)
	partFileLine    = regexp.MustCompile(`(?m)^- (\S.*)$`)
)

const (
	consolidatorReads = 8    // files read a turn at most,
	consolidatorBytes = 8000 // and about this many bytes of them
	consolidatorEdits = 4
	consolidatorMax   = 12
)

func consolidate(req Recorded) Turn {
	system, task, step, ok := conversation(req)
	if !ok {
		return Turn{Text: "unreadable request"}
	}
	mem := firstMatch(memoryDirLine, system)
	if mem == "" {
		return Turn{Text: "no memory directory in the system prompt"}
	}
	sessions := firstMatch(sessionsDirLine, system)
	files := memoryFiles(mem)
	ours, first := partFiles(task, files)
	leads := leadsOf(task)
	var plan [][]Call
	plan = append(plan, []Call{{Name: "ls", Input: map[string]any{"path": mem}}, {Name: "read", Input: map[string]any{"file_path": filepath.Join(mem, "MEMORY.md")}}})
	plan = append(plan, readBatches(mem, ours)...)
	if first && sessions != "" && strings.Contains(task, " touched since the last consolidation") {
		plan = append(plan, []Call{
			{Name: "grep", Input: map[string]any{"pattern": "decid|remember", "path": sessions, "output_mode": "content", "head_limit": 20}},
			{Name: "grep", Input: map[string]any{"pattern": "moved|renamed|now", "path": sessions, "output_mode": "content", "head_limit": 20}},
		})
	}
	edits := []string{"MEMORY.md"}
	for _, f := range ours {
		if len(edits) < consolidatorMax && leads != "" && strings.Contains(leads, f) {
			edits = append(edits, f)
		}
	}
	for i := 0; i < len(edits); i += consolidatorEdits {
		var batch []Call
		for _, f := range edits[i:min(i+consolidatorEdits, len(edits))] {
			if c, ok := editCall(filepath.Join(mem, f)); ok {
				batch = append(batch, c)
			}
		}
		if len(batch) > 0 {
			plan = append(plan, batch)
		}
	}
	if step < len(plan) {
		return Turn{Calls: plan[step]}
	}
	return Turn{Text: "Consolidated " + strings.Join(edits, ", ") + ": marked each as confirmed against the transcripts; nothing else needed changing."}
}

// conversation reads a Messages request: its system prompt, the task (the
// first user message) and the step (how many answers came before).
func conversation(req Recorded) (system, task string, step int, ok bool) {
	var body struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return "", "", 0, false
	}
	system = text(body.System)
	for _, m := range body.Messages {
		switch m.Role {
		case "system":
			system = text(m.Content)
		case "user":
			if task == "" {
				task = text(m.Content)
			}
		case "assistant":
			step++
		}
	}
	return system, task, step, true
}

// leadsOf is the task's "## Leads" section, or "".
func leadsOf(task string) string {
	i := strings.Index(task, "## Leads")
	if i < 0 {
		return ""
	}
	leads := task[i:]
	for _, next := range []string{"\n## Pinned facts", "\n## This dream is in "} {
		if j := strings.Index(leads, next); j >= 0 {
			leads = leads[:j]
		}
	}
	return leads
}

// readBatches reads files (relative to mem) in turns of at most
// consolidatorReads files and about consolidatorBytes bytes each.
func readBatches(mem string, files []string) [][]Call {
	var plan [][]Call
	var batch []Call
	size := 0
	for _, f := range files {
		n := 0
		if fi, err := os.Stat(filepath.Join(mem, f)); err == nil {
			n = int(fi.Size())
		}
		if len(batch) > 0 && (len(batch) == consolidatorReads || size+n > consolidatorBytes) {
			plan, batch, size = append(plan, batch), nil, 0
		}
		batch = append(batch, Call{Name: "read", Input: map[string]any{"file_path": filepath.Join(mem, f)}})
		size += n
	}
	if len(batch) > 0 {
		plan = append(plan, batch)
	}
	return plan
}

// editCall rewrites the file's last paragraph (its last lines up to a
// blank one, three at most; one line of the index) with a note that it
// was confirmed.
func editCall(path string) (Call, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Call{}, false
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	start := len(lines) - 1
	most := 3
	if filepath.Base(path) == "MEMORY.md" {
		most = 1
	}
	for start > 0 && len(lines)-start < most && strings.TrimSpace(lines[start-1]) != "" {
		start--
	}
	last := strings.Join(lines[start:], "\n")
	if strings.TrimSpace(last) == "" || strings.TrimSpace(last) == "---" {
		return Call{}, false
	}
	return Call{Name: "edit", Input: map[string]any{"file_path": path, "old_string": last, "new_string": last + " (confirmed against the transcripts)"}}, true
}

// memoryFiles lists the memory's regular files, hidden ones aside, in
// directory and name order, relative to mem; the index is not among them.
func memoryFiles(mem string) []string {
	var out []string
	_ = filepath.WalkDir(mem, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if path != mem && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(mem, path)
			if rel != "MEMORY.md" {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// partFiles is the files the task's part names (all of them for a dream
// in one part), and whether this is the first part.
func partFiles(task string, all []string) ([]string, bool) {
	i := strings.Index(task, "## This dream is in ")
	if i < 0 {
		return all, true
	}
	section := task[i:]
	var out []string
	for _, m := range partFileLine.FindAllStringSubmatch(section, -1) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out, strings.Contains(section, "this is part 1\n")
}

func firstMatch(re *regexp.Regexp, s string) string {
	if m := re.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// text is the text of a message's content: a string, or the text of its
// blocks.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}
