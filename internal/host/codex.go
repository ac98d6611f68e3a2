package host

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dreamkit/dream/internal/gate"
)

// resolveCodex: Codex CLI keeps everything under $CODEX_HOME (default
// ~/.codex). Rollouts are global, bucketed by date:
// sessions/YYYY/MM/DD/rollout-<timestamp>-<thread id>.jsonl, the first line
// a session_meta record whose payload names the session's source and cwd
// (codex-rs/protocol SessionMeta; codex-rs/rollout). The memories pipeline
// (codex-rs/core/src/memories/README.md) writes memories/ under the same
// home: memory_summary.md (injected into prompts), MEMORY.md in the strict
// block schema of templates/memories/consolidation.md, raw_memories.md and
// rollout_summaries/ rebuilt from its state DB, skills/. It only takes root
// interactive sessions: sub-agent, exec and MCP sessions are skipped, and so
// they are not counted here either. Its memory is global, so drift checks
// use the working directories the rollouts and MEMORY.md name.
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
		{Path: "memory_summary.md", Role: RoleSchema, Format: FormatCodexSummary, Loaded: true, Writable: true},
		{Path: "MEMORY.md", Role: RoleSchema, Format: FormatCodexMemoryBlocks, Loaded: true, Writable: true},
		{Path: "skills/**/*.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
		{Path: "raw_memories.md", Role: RoleGenerated, Format: FormatMarkdown},
		{Path: "rollout_summaries/**", Role: RoleGenerated, Format: FormatMarkdown, Loaded: true},
	}
	l.Assumptions = []string{
		"Codex also requires a rollout to be idle and inside its age window before it extracts a memory; dream counts every eligible rollout touched since the last consolidation",
		"raw_memories.md and rollout_summaries/ are rebuilt from Codex's state DB: a dream reads them, never writes them",
	}
	l.Sessions = codexSessionRule()
	l.SessionsCounted = "rollouts whose session_meta.source is interactive (cli, vscode, ...); exec, mcp and sub-agent rollouts are skipped as Codex's memory pipeline skips them"
	l.DriftRepos = codexRepos(l.MemoryDir)
	l.Consolidator = &Consolidator{Name: "memories", Enabled: true, TakesLock: false,
		Detail: "Codex consolidates memories/ itself at startup when its memories feature is on; it does not take .consolidate-lock"}
	return l, nil
}

// rolloutName is a Codex rollout file name; the id is the thread UUID.
// Compiled on first use, like codexCWD: package init runs in every `dream`
// process, hook or not.
var rolloutName = lazyRegexp(`^rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

// codexInteractive are the session sources Codex treats as interactive
// (codex-rs/rollout INTERACTIVE_SESSION_SOURCES: cli, vscode, and the
// custom atlas and chatgpt surfaces).
var codexInteractive = map[string]bool{"cli": true, "vscode": true, "atlas": true, "chatgpt": true}

func codexSessionRule() *gate.Rule {
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
		Keep: codexKeep,
		Same: strings.EqualFold,
	}
}

// codexKeep decides from a rollout's first line whether Codex's memory
// pipeline would take the session. The line can be tens of kilobytes (the
// base instructions), so the source is read where Codex's serializer puts
// it, before them: in compact JSON a `"source":` sequence with an
// unescaped quote can only be a key, and the first one in a session_meta
// line is the payload's. Anything unexpected falls back to a full parse.
func codexKeep(first []byte) bool {
	const meta, key = `"type":"session_meta"`, `"source":`
	if i := bytes.Index(first, []byte(key)); i > 0 && bytes.Contains(first[:i], []byte(meta)) {
		var raw json.RawMessage
		if json.NewDecoder(bytes.NewReader(first[i+len(key):])).Decode(&raw) == nil {
			return sessionMeta{Source: raw}.interactive()
		}
	}
	m, ok := parseSessionMeta(first)
	return ok && m.interactive()
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
	var s string
	if json.Unmarshal(m.Source, &s) != nil {
		return false // {"subagent": ...} and any other object form
	}
	return codexInteractive[strings.ToLower(s)]
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
	rule := codexSessionRule()
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
