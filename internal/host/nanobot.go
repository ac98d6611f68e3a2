package host

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/gate"
	"github.com/dreamkit/dream/internal/jsonc"
)

// workspaceIDPattern is the shape of nanobot's workspace identity marker.
var workspaceIDPattern = lazyRegexp(`^[0-9a-f]{32}$`)

// resolveNanobot: nanobot's home is $NANOBOT_HOME (default ~/.nanobot;
// nanobot/config/paths.py get_nanobot_home), its config <home>/config.json,
// its workspace agents.defaults.workspace there (default <home>/workspace).
// Long-term memory is the workspace's SOUL.md, USER.md and memory/MEMORY.md,
// beside memory/history.jsonl (the log its Dream replays; earlier versions
// kept memory/HISTORY.md, a Markdown log, instead), the cursors
// memory/.cursor and memory/.dream_cursor and its own git store .git, none
// of which a dream may write. The memory dir is therefore the workspace,
// with exactly those three files writable.
//
// Sessions (nanobot/session/location.py) live outside the workspace in
// <home>/sessions/<workspace id>/, the id in workspace/.nanobot/workspace-id,
// each file the unpadded base64url of its session key; earlier versions
// kept <workspace>/sessions/ and, oldest, ~/.nanobot/sessions/ with
// safe_key names (":" as "_"). The first that exists wins. Internal
// sessions (heartbeat, dream:*, subagent:*; nanobot/session/keys.py) are not
// conversations and are not counted.
func resolveNanobot(_, home string, env func(string) (string, bool)) (Layout, error) {
	base, from, err := agentHomeFrom(env, "NANOBOT_HOME", home, ".nanobot")
	if err != nil {
		return Layout{}, err
	}
	var l Layout
	l.source("nanobot home", base, from)
	cfgPath := filepath.Join(base, "config.json")
	cfg := readNanobotConfig(cfgPath)
	workspace := filepath.Join(base, "workspace")
	wsFrom := "default <nanobot home>/workspace"
	if ws, ok := cfg.Get("agents").Get("defaults").Get("workspace").Text(); ok && ws != "" && ws != "~/.nanobot/workspace" {
		if p := fsutil.ExpandHome(ws, home); filepath.IsAbs(p) {
			workspace, wsFrom = filepath.Clean(p), "setting agents.defaults.workspace in "+cfgPath
		}
	}
	l.MemoryDir = workspace
	l.source("memory dir", workspace, wsFrom)
	if cfg != nil {
		l.source("settings file", cfgPath, "nanobot config")
	}
	l.Files = []File{
		{Path: "memory/MEMORY.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
		{Path: "SOUL.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
		{Path: "USER.md", Role: RoleDocument, Format: FormatMarkdown, Loaded: true, Writable: true},
		{Path: "memory/history.jsonl", Role: RoleLog, Format: FormatJSONL},
		// HISTORY.md is the log of nanobot before history.jsonl: one
		// "[YYYY-MM-DD HH:MM] ..." entry a paragraph, kept out of MEMORY.md.
		{Path: "memory/HISTORY.md", Role: RoleLog, Format: FormatMarkdown},
		{Path: "memory/.cursor", Role: RoleCursor, Format: FormatCursor},
		{Path: "memory/.dream_cursor", Role: RoleCursor, Format: FormatCursor},
	}
	l.Consolidator = nanobotConsolidator(cfg, cfgPath)

	sessions, how := nanobotSessions(base, home, workspace)
	l.SessionsDir = sessions
	l.source("sessions dir", sessions, how)
	l.Notes = "nanobot: workspace " + workspace + "; sessions " + how
	l.Sessions = nanobotSessionRule()
	l.SessionsCounted = "conversation sessions <base64url(key)>.jsonl (legacy <safe key>.jsonl); heartbeat, dream:* and subagent:* are internal runs"
	return l, nil
}

// nanobotSessions finds the sessions dir for workspace and says which
// layout it is.
func nanobotSessions(base, home, workspace string) (string, string) {
	if data, err := os.ReadFile(filepath.Join(workspace, ".nanobot", "workspace-id")); err == nil {
		id := strings.TrimSpace(string(data))
		dir := filepath.Join(base, "sessions", id)
		if workspaceIDPattern().MatchString(id) && isDir(dir) {
			return dir, "in the workspace's namespace " + id + " (from .nanobot/workspace-id)"
		}
	}
	if dir := filepath.Join(workspace, "sessions"); isDir(dir) {
		return dir, "inside the workspace (pre-namespace layout)"
	}
	if home != "" {
		if dir := filepath.Join(home, ".nanobot", "sessions"); isDir(dir) && dir != filepath.Join(base, "sessions") {
			return dir, "in the legacy global sessions dir"
		}
	}
	return filepath.Join(base, "sessions"), "in the global sessions dir"
}

// readNanobotConfig parses config.json, nil when absent or unreadable.
func readNanobotConfig(path string) *jsonc.Value {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 4<<20 {
		return nil
	}
	v, _, err := jsonc.Parse(data)
	if err != nil {
		return nil
	}
	return v
}

// nanobotConsolidator reads agents.defaults.dream (camelCase or snake_case,
// as nanobot's pydantic config accepts both): enabled by default, every
// interval_h hours (default 2), taking no lock.
func nanobotConsolidator(cfg *jsonc.Value, path string) *Consolidator {
	dream := cfg.Get("agents").Get("defaults").Get("dream")
	c := &Consolidator{Name: "Dream", Enabled: true, TakesLock: false}
	interval := "2"
	for _, k := range []string{"intervalH", "interval_h"} {
		if v := dream.Get(k); v != nil && v.Kind == jsonc.Number {
			interval = v.Str
		}
	}
	if on, ok := dream.Get("enabled").Bool(); ok {
		c.Enabled = on
	}
	where := "default"
	if dream != nil {
		where = "agents.defaults.dream in " + path
	}
	if c.Enabled {
		c.Detail = fmt.Sprintf("nanobot's own Dream runs every %sh (%s) and takes no lock: two consolidators would share the workspace", interval, where)
	} else {
		c.Detail = "nanobot's own Dream is disabled (" + where + ")"
	}
	return c
}

// nanobotSessionRule counts conversation sessions and names them by key.
func nanobotSessionRule() *gate.Rule {
	return &gate.Rule{
		Match: func(depth int, name string) (string, bool) {
			stem, ok := strings.CutSuffix(name, ".jsonl")
			if !ok || depth != 0 || stem == "" {
				return "", false
			}
			key := nanobotKey(stem)
			if nanobotInternal(key) {
				return "", false
			}
			return key, true
		},
		Descend: func(int, string) bool { return false },
		Same: func(key, current string) bool {
			// The hook may hand the key ("cli:direct"), its encoded stem, or
			// the legacy safe name.
			return key == current || key == nanobotKey(current) || key == strings.ReplaceAll(current, ":", "_")
		},
	}
}

// nanobotKey decodes a storage stem to its session key when it is the
// exact unpadded base64url of one (location.py session_key_from_path);
// otherwise the stem is a legacy safe name and is its own key.
func nanobotKey(stem string) string {
	b, err := base64.RawURLEncoding.DecodeString(stem)
	if err == nil && base64.RawURLEncoding.EncodeToString(b) == stem && isPrintableKey(b) {
		return string(b)
	}
	return stem
}

func isPrintableKey(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range string(b) {
		if c < 0x20 || c == 0x7f || c == 0xfffd {
			return false
		}
	}
	return true
}

// nanobotInternal: heartbeat and the per-run dream:/subagent: namespaces,
// in key or legacy safe-name form.
func nanobotInternal(key string) bool {
	return key == "heartbeat" || strings.HasPrefix(key, "dream:") || strings.HasPrefix(key, "subagent:") ||
		strings.HasPrefix(key, "dream_") || strings.HasPrefix(key, "subagent_")
}

// isDir reports whether path is an existing directory.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}
