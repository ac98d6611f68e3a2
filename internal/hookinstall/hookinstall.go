// Package hookinstall adds dream's hook to an agent's JSON settings file and
// takes it out again, editing the text in place: the hook is spliced in
// after the last entry it joins, so every other byte of the file (comments,
// key order, indentation, odd spacing) stays as the user wrote it, and
// removing it right after an install gives back the file byte for byte.
//
// Formats, from the agents' own documentation and source:
//
//   - Claude Code settings.json: {"hooks": {"SessionEnd": [{"hooks":
//     [{"type": "command", "command": ...}]}]}} (Claude Code hooks
//     reference).
//   - Codex hooks.json: the same shape under "hooks", parsed by serde_json
//     with no comments allowed; Stop is its nearest event to a session end
//     (codex-rs/hooks/src/engine/discovery.rs load_hooks_json,
//     codex-rs/config hook_config.rs HookEventsToml).
//   - Gemini CLI settings.json: {"hooks": {"SessionEnd": [{"hooks":
//     [{"type": "command", "command": ..., "name": ...}]}]}}, comments
//     allowed (docs/hooks/reference.md).
package hookinstall

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/jsonc"
)

// Target is one agent settings file and the hook dream puts in it.
type Target struct {
	// Agent is "claude", "codex" or "gemini".
	Agent string
	// Path is the settings file.
	Path string
	// Event is the hook event: "SessionEnd", or "Stop" for Codex.
	Event string
	// Command is the shell command the agent runs.
	Command string
	// Name, when set, is written as the handler's "name" (Gemini shows it).
	Name string
	// Timeout, when > 0, is written as the handler's "timeout" in seconds.
	Timeout int
	// Comments: the agent's parser accepts comments, so a file holding them
	// is edited; otherwise such a file is refused.
	Comments bool
}

// ErrRefused wraps every reason a file is left untouched.
var ErrRefused = errors.New("settings file left unchanged")

func refuse(t Target, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrRefused, t.Path, fmt.Sprintf(format, args...))
}

// dreamMain is the main package of a dream binary, as its build info
// records it.
const dreamMain = "github.com/dreamkit/dream/cmd/dream"

// IsOurs reports whether a hook command is dream's: one that runs the hook
// command of a dream binary, whatever the file is called (dream,
// dream-linux-amd64, a copy renamed by a package manager). Its first
// argument must be "hook", and either the rest is what dream init writes
// (--host NAME), or the program is named dream or dream-*, or the program
// is a Go binary built from dream's cmd/dream.
func IsOurs(command string) bool {
	prog, rest := firstWord(strings.TrimSpace(command))
	f := strings.Fields(rest)
	if len(f) == 0 || f[0] != "hook" {
		return false
	}
	if len(f) == 3 && f[1] == "--host" {
		return true
	}
	name := prog
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSuffix(name, ".exe")
	if name == "dream" || strings.HasPrefix(name, "dream-") || strings.HasPrefix(name, "dream_") {
		return true
	}
	return IsDreamBinary(prog)
}

// Program is the program a hook command runs, unquoted.
func Program(command string) string {
	prog, _ := firstWord(strings.TrimSpace(command))
	return prog
}

// IsDreamBinary reports whether path is a regular file holding a Go
// program built from dream's cmd/dream (its build info says so).
func IsDreamBinary(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return false // never open a FIFO or a device named in a settings file
	}
	bi, err := buildinfo.ReadFile(path)
	return err == nil && bi.Path == dreamMain
}

// firstWord splits off a command's program, which may be single- or
// double-quoted (a path with spaces).
func firstWord(s string) (word, rest string) {
	if s != "" && (s[0] == '\'' || s[0] == '"') {
		if end := strings.IndexByte(s[1:], s[0]); end >= 0 {
			return s[1 : 1+end], s[2+end:]
		}
	}
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// ShellQuote quotes a program path for a hook command line when it holds
// anything a shell would split or expand.
func ShellQuote(p string) string {
	if p != "" && !strings.ContainsAny(p, " \t\n'\"$`\\|&;<>()*?[]#~!{}") {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// Installed reports whether src already carries dream's hook for t.Event.
func Installed(t Target, src []byte) (bool, error) {
	_, ok, err := InstalledCommand(t, src)
	return ok, err
}

// InstalledCommand is the command of dream's hook for t.Event in src, when
// there is one: it may name another dream binary than t.Command (one that
// moved since the install).
func InstalledCommand(t Target, src []byte) (string, bool, error) {
	root, err := parse(t, src)
	if err != nil || root == nil {
		return "", false, err
	}
	h, found := findOurs(root.Get("hooks").Get(t.Event))
	if !found {
		return "", false, nil
	}
	cmd, _ := h.handler.Get("command").Text()
	return cmd, true, nil
}

// Install returns src with dream's hook added, and whether it changed. An
// existing dream hook for the event is kept when it runs t.Command, and
// otherwise (the binary moved, or another dream binary installed it) has
// its command replaced in place: one dream hook per event, never two. A
// missing or empty file (src nil or only whitespace) becomes a new file
// holding the hook.
func Install(t Target, src []byte) ([]byte, bool, error) {
	root, err := parse(t, src)
	if err != nil {
		return nil, false, err
	}
	if root == nil {
		return []byte("{\n" + `  "hooks": ` + indentBlock(hooksObject(t, "  "), "  ") + "\n}\n"), true, nil
	}
	indent := detectIndent(src, root)
	hooks := root.Get("hooks")
	if hooks == nil {
		return insertMember(src, root, "hooks", hooksObject(t, indent), indent), true, nil
	}
	if hooks.Kind != jsonc.Object {
		return nil, false, refuse(t, `"hooks" is not an object`)
	}
	groups := hooks.Get(t.Event)
	if groups == nil {
		return insertMember(src, hooks, t.Event, "["+"\n"+indent+groupText(t)+"\n]", indent), true, nil
	}
	if groups.Kind != jsonc.Array {
		return nil, false, refuse(t, `"hooks".%q is not an array`, t.Event)
	}
	if h, found := findOurs(groups); found {
		cmd := h.handler.Get("command")
		if text, _ := cmd.Text(); text == t.Command {
			return src, false, nil
		}
		return splice(src, cmd.Start, cmd.End, quote(t.Command)), true, nil
	}
	return insertItem(src, groups, groupText(t), indent), true, nil
}

// Remove returns src without dream's hook for t.Event, and whether it
// changed. A group left with no handler, an event left with no group and a
// "hooks" object left empty are removed with it, so that removing right
// after installing gives back the original bytes.
func Remove(t Target, src []byte) ([]byte, bool, error) {
	root, err := parse(t, src)
	if err != nil || root == nil {
		return src, false, err
	}
	hooks := root.Get("hooks")
	groups := hooks.Get(t.Event)
	h, found := findOurs(groups)
	if !found {
		return src, false, nil
	}
	handlers := groups.Items[h.group].Get("hooks")
	switch {
	case len(handlers.Items) > 1:
		return cutItem(src, handlers, h.index), true, nil
	case len(groups.Items) > 1:
		return cutItem(src, groups, h.group), true, nil
	case len(hooks.Members) > 1:
		return cutMember(src, hooks, hooks.Member(t.Event)), true, nil
	default:
		return cutMember(src, root, root.Member("hooks")), true, nil
	}
}

// parse parses src as t's agent does; nil root for an empty file.
func parse(t Target, src []byte) (*jsonc.Value, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, nil
	}
	root, comments, err := jsonc.Parse(src)
	if err != nil {
		return nil, refuse(t, "not JSON dream can edit safely (%v); fix it or add the hook by hand", err)
	}
	if comments && !t.Comments {
		return nil, refuse(t, "it holds comments, which %s's parser rejects; remove them first", t.Agent)
	}
	if root.Kind != jsonc.Object {
		return nil, refuse(t, "the top level is not a JSON object")
	}
	return root, nil
}

// ours is where dream's handler sits in an event's groups.
type ours struct {
	group, index int
	handler      *jsonc.Value
}

// findOurs finds dream's handler in an event's groups.
func findOurs(groups *jsonc.Value) (ours, bool) {
	if groups == nil || groups.Kind != jsonc.Array {
		return ours{}, false
	}
	for gi, g := range groups.Items {
		hs := g.Get("hooks")
		if hs == nil || hs.Kind != jsonc.Array {
			continue
		}
		for hi, h := range hs.Items {
			if cmd, ok := h.Get("command").Text(); ok && IsOurs(cmd) {
				return ours{group: gi, index: hi, handler: h}, true
			}
		}
	}
	return ours{}, false
}

// handlerText is dream's handler object on one line.
func handlerText(t Target) string {
	var b strings.Builder
	b.WriteString(`{"type": "command", "command": `)
	b.WriteString(quote(t.Command))
	if t.Name != "" {
		b.WriteString(`, "name": ` + quote(t.Name))
	}
	if t.Timeout > 0 {
		fmt.Fprintf(&b, `, "timeout": %d`, t.Timeout)
	}
	b.WriteString("}")
	return b.String()
}

// groupText is one matcher group holding dream's handler, on one line.
func groupText(t Target) string {
	return `{"hooks": [` + handlerText(t) + `]}`
}

// hooksObject is a "hooks" object holding dream's group, indented by the
// file's own unit.
func hooksObject(t Target, indent string) string {
	return "{\n" + indent + quote(t.Event) + ": [\n" + indent + indent + groupText(t) + "\n" + indent + "]\n}"
}

// indentBlock indents every line of s after the first by prefix.
func indentBlock(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// detectIndent is the whitespace before the first member of root when it
// sits on its own line, else two spaces.
func detectIndent(src []byte, root *jsonc.Value) string {
	if len(root.Members) == 0 {
		return "  "
	}
	k := root.Members[0].KeyStart
	i := k
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	if i > 0 && src[i-1] == '\n' && i < k {
		return string(src[i:k])
	}
	return "  "
}

// lineIndent is the whitespace that starts the line holding offset pos.
func lineIndent(src []byte, pos int) string {
	i := pos
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	j := i
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	return string(src[i:j])
}

// insertMember adds "key": value as obj's last member. The text goes right
// after the last member's value (or right after "{"), so cutMember can take
// exactly it out again.
func insertMember(src []byte, obj *jsonc.Value, key, value, indent string) []byte {
	if len(obj.Members) == 0 {
		inner := lineIndent(src, obj.Start)
		ins := "\n" + inner + indent + quote(key) + ": " + indentBlock(value, inner+indent) + "\n" + inner
		return splice(src, obj.Start+1, obj.Start+1, ins)
	}
	last := obj.Members[len(obj.Members)-1]
	memberIndent := lineIndent(src, last.KeyStart)
	sep := "\n" + memberIndent
	if !onOwnLine(src, last.KeyStart) {
		sep = " "
	}
	ins := "," + sep + quote(key) + ": " + indentBlock(value, memberIndent)
	return splice(src, last.Value.End, last.Value.End, ins)
}

// insertItem appends item to arr, after its last element.
func insertItem(src []byte, arr *jsonc.Value, item, indent string) []byte {
	if len(arr.Items) == 0 {
		inner := lineIndent(src, arr.Start)
		ins := "\n" + inner + indent + item + "\n" + inner
		return splice(src, arr.Start+1, arr.Start+1, ins)
	}
	last := arr.Items[len(arr.Items)-1]
	sep := "\n" + lineIndent(src, last.Start)
	if !onOwnLine(src, last.Start) {
		sep = " "
	}
	return splice(src, last.End, last.End, ","+sep+item)
}

// onOwnLine reports whether only whitespace precedes pos on its line.
func onOwnLine(src []byte, pos int) bool {
	for i := pos - 1; i >= 0; i-- {
		switch src[i] {
		case '\n':
			return true
		case ' ', '\t':
		default:
			return false
		}
	}
	return true
}

// cutMember removes obj's member i: from the end of the previous member's
// value to the end of this one (the inverse of insertMember), or, for the
// first member, up to the next member's key; an only member takes the
// whole inside of the braces.
func cutMember(src []byte, obj *jsonc.Value, i int) []byte {
	m := obj.Members[i]
	switch {
	case len(obj.Members) == 1:
		from, to := widen(src, m.KeyStart, m.Value.End)
		return splice(src, from, to, "")
	case i > 0:
		return splice(src, obj.Members[i-1].Value.End, m.Value.End, "")
	default:
		return splice(src, m.KeyStart, obj.Members[1].KeyStart, "")
	}
}

// cutItem removes arr's element i, as cutMember does for members.
func cutItem(src []byte, arr *jsonc.Value, i int) []byte {
	it := arr.Items[i]
	switch {
	case len(arr.Items) == 1:
		from, to := widen(src, it.Start, it.End)
		return splice(src, from, to, "")
	case i > 0:
		return splice(src, arr.Items[i-1].End, it.End, "")
	default:
		return splice(src, it.Start, arr.Items[1].Start, "")
	}
}

// widen extends [from, to) over the whitespace on both sides, so that
// taking out an only member leaves "{}" and any comments where they were.
func widen(src []byte, from, to int) (int, int) {
	for from > 0 && isSpace(src[from-1]) {
		from--
	}
	for to < len(src) && isSpace(src[to]) {
		to++
	}
	return from, to
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func splice(src []byte, from, to int, ins string) []byte {
	out := make([]byte, 0, len(src)-(to-from)+len(ins))
	out = append(out, src[:from]...)
	out = append(out, ins...)
	return append(out, src[to:]...)
}
