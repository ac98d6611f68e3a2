package host

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/settings"
)

// resolveCodex: Codex CLI keeps everything under $CODEX_HOME (default
// ~/.codex). Rollouts are global, bucketed by date:
// sessions/YYYY/MM/DD/rollout-<timestamp>-<thread id>.jsonl, the first line
// a session_meta record whose payload names the session's source and cwd.
// The memories pipeline writes memories/ under the same home, and only when
// Codex's memories feature is on; then Codex also consolidates it itself.
// What 0.171.0 does, found by running it:
//
//   - memories off (the default): memories/ is neither loaded nor written;
//   - memories on: memory_summary.md is put in every session's prompt, its
//     first and last 5,000 bytes (2,500 tokens at 4 bytes each, the middle
//     cut); MEMORY.md, skills/ and rollout_summaries/ are read on demand;
//     and at startup Codex makes memories/ a git repository with
//     .codex-baseline/, writes phase2_workspace_diff.md and extensions/,
//     and runs its own consolidation agent over whatever changed (dream's
//     edits included), never looking at .consolidate-lock;
//   - the interactive UI records session_meta.source "vscode", `codex exec`
//     "exec"; Codex's memory pipeline takes only interactive rollouts.
//
// Its memory is global, so drift checks use the working directories the
// rollouts and MEMORY.md name.
func resolveCodex(_, home string, env func(string) (string, bool)) (Layout, error) {
	base, from, err := agentHomeFrom(env, "CODEX_HOME", home, ".codex")
	if err != nil {
		return Layout{}, err
	}
	l := Layout{
		MemoryDir:   filepath.Join(base, "memories"),
		SessionsDir: filepath.Join(base, "sessions"),
		Notes:       "Codex CLI: global transcripts in sessions/YYYY/MM/DD, memory in the global memories/ folder (not per repository)",
	}
	l.source("codex home", base, from)
	l.source("memory dir", l.MemoryDir, "memories/ under the codex home")
	l.source("sessions dir", l.SessionsDir, "sessions/ under the codex home")
	l.Files = []File{
		{Path: "memory_summary.md", Role: RoleSchema, Format: FormatCodexSummary, Loaded: true, Writable: true, Limit: "its first and last 5,000 bytes (Codex cuts the middle)"},
		{Path: "MEMORY.md", Role: RoleSchema, Format: FormatCodexMemoryBlocks, Loaded: true, OnDemand: true, Writable: true},
		{Path: "skills/**/*.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, OnDemand: true, Writable: true},
		{Path: "raw_memories.md", Role: RoleGenerated, Format: FormatMarkdown},
		{Path: "rollout_summaries/**", Role: RoleGenerated, Format: FormatMarkdown, Loaded: true, OnDemand: true},
		// Codex's own consolidation workspace: never dream's to write.
		{Path: "phase2_workspace_diff.md", Role: RoleGenerated, Format: FormatMarkdown},
		{Path: "extensions/**", Role: RoleGenerated, Format: FormatMarkdown},
		{Path: ".codex-baseline/**", Role: RoleGenerated, Format: FormatMarkdown},
	}
	l.Assumptions = []string{
		"Codex also requires a rollout to be idle and inside its age window before it extracts a memory; dream counts every eligible rollout touched since the last consolidation",
		"raw_memories.md, rollout_summaries/ and Codex's consolidation workspace (phase2_workspace_diff.md, extensions/, .codex-baseline/) are Codex's: a dream reads them, never writes them",
		"features set with codex -c, --enable or a profile are not visible to dream",
	}
	l.Sessions = codexSessionRule(false)
	l.SessionsCounted = codexCounted(false)
	l.DriftRepos = codexRepos(l.MemoryDir)
	cfg := filepath.Join(base, "config.toml")
	memories, use := codexMemoryFeature(cfg)
	l.Consolidator = &Consolidator{Name: "memories", Enabled: memories, TakesLock: false,
		Detail: "Codex's memories feature is off (features.memories, the default, in " + cfg + "): Codex neither consolidates nor loads memories/"}
	if memories {
		l.Consolidator.Detail = "Codex's memories feature is on (features.memories in " + cfg + "): at startup Codex consolidates memories/ itself (a git repository with .codex-baseline/, phase2_workspace_diff.md and extensions/) over every change, dream's included, and does not take .consolidate-lock"
	}
	switch {
	case !memories:
		l.NotLoaded = "Codex does not load memories/: its memories feature is off (set memories = true under [features] in " + cfg + ")"
	case !use:
		l.NotLoaded = "Codex does not load memories/: use_memories = false under [memories] in " + cfg
	}
	return l, nil
}

// codexMemoryFeature reads Codex's config.toml: whether the memories
// feature is on, and whether memories are put in the prompt
// (memories.use_memories, default true). An unreadable file is Codex's
// defaults: off.
func codexMemoryFeature(path string) (memories, use bool) {
	var cfg struct {
		Features map[string]any `toml:"features"`
		Memories struct {
			UseMemories *bool `toml:"use_memories"`
		} `toml:"memories"`
	}
	if _, err := toml.DecodeFile(path, &cfg); err != nil {
		return false, false
	}
	memories, _ = cfg.Features["memories"].(bool)
	use = cfg.Memories.UseMemories == nil || *cfg.Memories.UseMemories
	return memories, use
}

// codexCounted says in words what the Codex session rule counts.
func codexCounted(exec bool) string {
	if exec {
		return `rollouts of interactive sessions (session_meta.source "vscode" from the UI, "cli" in older versions) and of codex exec ("exec", counted because codex_exec_sessions is set); MCP and sub-agent rollouts are skipped`
	}
	return `rollouts of interactive sessions (session_meta.source "vscode" from the UI, "cli" in older versions); codex exec runs ("exec") are not counted, as Codex's memory pipeline skips them (set codex_exec_sessions = true to count them); MCP and sub-agent rollouts are skipped`
}

// CountCodexExec makes a Codex layout count `codex exec` rollouts as
// sessions too (the codex_exec_sessions setting).
func CountCodexExec(l *Layout) {
	if l.Host != "codex" {
		return
	}
	l.Sessions = codexSessionRule(true)
	l.SessionsCounted = codexCounted(true)
}

// rolloutName is a Codex rollout file name; the id is the thread UUID.
// Compiled on first use, like codexCWD: package init runs in every `dream`
// process, hook or not.
var rolloutName = lazyRegexp(`^rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

// codexInteractive are the session sources Codex treats as interactive
// (codex-rs/rollout INTERACTIVE_SESSION_SOURCES: cli, vscode, and the
// custom atlas and chatgpt surfaces). 0.171.0's interactive UI records
// "vscode".
var codexInteractive = map[string]bool{"cli": true, "vscode": true, "atlas": true, "chatgpt": true}

// codexExec is the source `codex exec` records.
const codexExec = "exec"

// codexSessionRule counts interactive rollouts, and exec ones when exec.
func codexSessionRule(exec bool) *gate.Rule {
	digits := func(s string, n int) bool {
		if len(s) != n {
			return false
		}
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return &gate.Rule{
		Match: func(depth int, name string) (string, bool) {
			m := rolloutName().FindStringSubmatch(name)
			if depth != 3 || m == nil {
				return "", false
			}
			return strings.ToLower(m[1]), true
		},
		Descend: func(depth int, name string) bool {
			return depth == 0 && digits(name, 4) || (depth == 1 || depth == 2) && digits(name, 2)
		},
		Keep: func(first []byte) bool { return codexKeep(first, exec) },
		Same: strings.EqualFold,
	}
}

// codexKeep decides from a rollout's first line whether the session
// counts: Codex's memory pipeline takes interactive ones, and exec ones
// count when exec. The line can be tens of kilobytes (the base
// instructions), so the source is read where Codex's serializer puts it,
// before them: in compact JSON a `"source":` sequence with an unescaped
// quote can only be a key, and the first one in a session_meta line is the
// payload's. Anything unexpected falls back to a full parse.
func codexKeep(first []byte, exec bool) bool {
	const meta, key = `"type":"session_meta"`, `"source":`
	m := sessionMeta{}
	ok := false
	if i := bytes.Index(first, []byte(key)); i > 0 && bytes.Contains(first[:i], []byte(meta)) {
		var raw json.RawMessage
		if json.NewDecoder(bytes.NewReader(first[i+len(key):])).Decode(&raw) == nil {
			m.Source, ok = raw, true
		}
	}
	if !ok {
		m, ok = parseSessionMeta(first)
	}
	return ok && (m.interactive() || exec && m.source() == codexExec)
}

// sessionMeta is the part of a rollout's first line dream reads.
type sessionMeta struct {
	ID  string
	CWD string
	// Source is the raw JSON of payload.source: a string ("cli") or an
	// object ({"subagent": ...}); nil when absent.
	Source json.RawMessage
}

func (m sessionMeta) interactive() bool {
	if len(m.Source) == 0 || string(m.Source) == "null" {
		// Rollouts written before the field existed: Codex reads a missing
		// source as its default, an interactive one.
		return true
	}
	return codexInteractive[m.source()]
}

// source is the lower-cased source name; "" for the object forms
// ({"subagent": ...}) and anything else that is not a string.
func (m sessionMeta) source() string {
	var s string
	if json.Unmarshal(m.Source, &s) != nil {
		return ""
	}
	return strings.ToLower(s)
}

// parseSessionMeta reads a rollout's first line:
// {"timestamp":..., "type":"session_meta", "payload":{"id":..., "cwd":..., "source":...}}.
func parseSessionMeta(line []byte) (sessionMeta, bool) {
	var rec struct {
		Type    string `json:"type"`
		Payload struct {
			ID     string          `json:"id"`
			CWD    string          `json:"cwd"`
			Source json.RawMessage `json:"source"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.Type != "session_meta" {
		return sessionMeta{}, false
	}
	return sessionMeta{ID: rec.Payload.ID, CWD: rec.Payload.CWD, Source: rec.Payload.Source}, true
}

// codexCWD is the cwd=<path> annotation MEMORY.md blocks carry for each
// rollout they summarise.
var codexCWD = lazyRegexp(`cwd=([^,)\s]+)`)

// codexRepos lists the working directories the memory describes: those
// MEMORY.md's rollout annotations name, sorted. Rollouts themselves are not
// read here (there may be thousands); CodexRolloutRepos does that.
func codexRepos(memoryDir string) []string {
	data, err := os.ReadFile(filepath.Join(memoryDir, "MEMORY.md"))
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, m := range codexCWD().FindAllStringSubmatch(string(data), -1) {
		if p := filepath.Clean(m[1]); filepath.IsAbs(p) {
			seen[p] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// CodexRolloutRepos returns the distinct cwd of the interactive rollouts
// under sessionsDir, read from each rollout's first line: the repositories
// Codex's global memory was learned in.
func CodexRolloutRepos(sessionsDir string) []string {
	seen := map[string]bool{}
	rule := codexSessionRule(false)
	_ = filepath.WalkDir(sessionsDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(sessionsDir, path)
		if _, ok := rule.Match(strings.Count(filepath.ToSlash(rel), "/"), d.Name()); !ok {
			return nil
		}
		line, ok := gate.FirstLine(path)
		if !ok {
			return nil
		}
		if meta, ok := parseSessionMeta(line); ok && meta.interactive() && filepath.IsAbs(meta.CWD) {
			seen[filepath.Clean(meta.CWD)] = true
		}
		return nil
	})
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// codexBlock is one block of Codex's MEMORY.md: a ----fenced header whose
// first key is rollout_summary_file(s), then a body of bullets.
type codexBlock struct {
	Header string
	Body   string
}

// ParseCodexMemory splits Codex's MEMORY.md into its blocks, failing when
// the file would not parse the way the consolidation template demands:
// every block opens with a "---" line, its header starts with
// rollout_summary_file: or rollout_summary_files:, carries description: and
// keywords:, and closes with "---". Text before the first block is allowed
// only if blank.
func ParseCodexMemory(text string) ([]codexBlock, error) {
	var blocks []codexBlock
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	lineNo := 0
	state := 0 // 0: between blocks, 1: in header, 2: in body
	var cur codexBlock
	var header []string
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		switch state {
		case 0, 2:
			if strings.TrimRight(line, " \t") == "---" {
				if state == 2 {
					blocks = append(blocks, cur)
				}
				cur, header, state = codexBlock{}, nil, 1
				continue
			}
			if state == 0 {
				if strings.TrimSpace(line) != "" {
					return nil, &FormatError{Line: lineNo, Msg: "text before the first --- block"}
				}
				continue
			}
			cur.Body += line + "\n"
		case 1:
			if strings.TrimRight(line, " \t") == "---" {
				if err := checkCodexHeader(header); err != nil {
					return nil, &FormatError{Line: lineNo, Msg: err.Error()}
				}
				cur.Header = strings.Join(header, "\n")
				state = 2
				continue
			}
			header = append(header, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &FormatError{Line: lineNo, Msg: err.Error()}
	}
	switch state {
	case 1:
		return nil, &FormatError{Line: lineNo, Msg: "block header not closed with ---"}
	case 2:
		blocks = append(blocks, cur)
	}
	return blocks, nil
}

func checkCodexHeader(header []string) error {
	if len(header) == 0 {
		return errorString("empty block header")
	}
	first := header[0]
	if !strings.HasPrefix(first, "rollout_summary_files:") && !strings.HasPrefix(first, "rollout_summary_file:") {
		return errorString("block header does not start with rollout_summary_files:")
	}
	var desc, keys bool
	for _, h := range header[1:] {
		switch {
		case strings.HasPrefix(h, "description:"):
			desc = true
		case strings.HasPrefix(h, "keywords:"):
			keys = true
		case strings.HasPrefix(h, "  - ") || strings.HasPrefix(h, "- ") || strings.HasPrefix(h, "    "):
			// a rollout_summary_files entry or its wrapped annotation
		default:
			return errorString("unexpected header line " + quote(h))
		}
	}
	if !desc || !keys {
		return errorString("block header lacks description: or keywords:")
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// AgentOwns says why a dream must leave l's memory to the agent, "" when
// it may dream it. It is Codex's while its memories feature consolidates
// memories/ itself (without honouring .consolidate-lock: the two would
// rework each other's edits) unless codex_memory_owner (owner) hands it to
// dream, and always when owner is "codex".
func AgentOwns(l Layout, owner string) string {
	if l.Host != "codex" {
		return ""
	}
	switch owner {
	case settings.DreamOwner:
		return ""
	case settings.CodexOwner:
		return "Codex owns memories/ (codex_memory_owner = codex): dream leaves it alone"
	}
	if c := l.Consolidator; c != nil && c.Enabled {
		return "Codex consolidates memories/ itself (its memories feature is on) and does not take .consolidate-lock: dream leaves it alone until you choose who owns it (codex_memory_owner = codex or dream)"
	}
	return ""
}

// codexSummaryHalf is how much of each end of memory_summary.md Codex
// 0.171.0 keeps: its budget is 2,500 tokens at 4 bytes a token, half at
// the start and half at the end.
const codexSummaryHalf = 5000

// CodexSummaryLoaded is what Codex 0.171.0 puts in the prompt of
// memory_summary.md's content, found by running it: the text trimmed;
// past 10,000 bytes, its first 5,000 bytes (cut back to a character
// boundary), "…N tokens truncated…" for the N = ceil(bytes/4) left out,
// and its last 5,000 bytes (cut forward to a character boundary). cut is
// how many bytes are not loaded.
func CodexSummaryLoaded(content []byte) (loaded string, cut int) {
	s := strings.TrimSpace(string(content))
	if len(s) <= 2*codexSummaryHalf {
		return s, 0
	}
	head := codexSummaryHalf
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - codexSummaryHalf
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	cut = tail - head
	return s[:head] + fmt.Sprintf("…%d tokens truncated…", (cut+3)/4) + s[tail:], cut
}
