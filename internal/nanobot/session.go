package nanobot

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// A session file as nanobot's JsonlSessionStore writes it
// (nanobot/session/manager.py, _save_unlocked): a metadata line
//
//	{"_type": "metadata", "key": "cli:direct", "created_at": "...", "updated_at": "...", "metadata": {...}, "last_consolidated": 12}
//
// then, optionally, {"_type": "provider_state", "state": {...}}, then one
// JSON object per message. The file is named by the base64url of the key
// without padding (storage_key), in the workspace's sessions directory.

// Message is one message of a session. Raw is kept byte for byte so that
// saving a session never rewrites a message it did not change.
type Message struct {
	Raw       json.RawMessage
	Role      string
	Content   json.RawMessage // a string, a list of parts, or absent
	Timestamp string
	ToolsUsed []string
	// ChannelDelivery marks a proactive assistant delivery
	// ("_channel_delivery"), which a replay window keeps before the user's
	// reply to it.
	ChannelDelivery bool
	// Command marks a slash command ("_command"), never replayed.
	Command bool
}

// Session is one conversation.
type Session struct {
	Key              string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	LastConsolidated int
	Messages         []Message

	header        object          // the metadata line, in its key order
	metadata      object          // its "metadata" object
	providerState json.RawMessage // the provider_state line, if any
	// Skipped counts corrupt lines dropped at load, as nanobot's repair does.
	Skipped int
}

// StorageName is the file name nanobot gives a session key.
func StorageName(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key)) + ".jsonl"
}

// KeyFromName decodes a session file name; ok is false for a name that is
// not a canonical storage name.
func KeyFromName(name string) (string, bool) {
	stem := strings.TrimSuffix(filepath.Base(name), ".jsonl")
	b, err := base64.RawURLEncoding.DecodeString(stem)
	if err != nil || base64.RawURLEncoding.EncodeToString(b) != stem {
		return "", false
	}
	return string(b), true
}

// LoadSession reads a session file. Corrupt lines are skipped and counted
// (nanobot's _repair_unlocked), never fatal.
func LoadSession(path string) (*Session, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compact: reading session: %w", err)
	}
	s := &Session{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		o, err := parseObject(line)
		if err != nil {
			s.Skipped++
			continue
		}
		var typ string
		if v, ok := o.get("_type"); ok {
			_ = json.Unmarshal(v, &typ)
		}
		switch typ {
		case "metadata":
			s.header = o
			s.decodeHeader()
		case "provider_state":
			s.providerState = append(json.RawMessage(nil), line...)
		default:
			s.Messages = append(s.Messages, decodeMessage(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("compact: reading session %s: %w", path, err)
	}
	if s.Key == "" {
		if k, ok := KeyFromName(path); ok {
			s.Key = k
		}
	}
	if s.LastConsolidated < 0 || s.LastConsolidated > len(s.Messages) {
		s.LastConsolidated = 0 // nanobot resets an out-of-range offset
	}
	return s, nil
}

func (s *Session) decodeHeader() {
	str := func(k string) string {
		var v string
		if raw, ok := s.header.get(k); ok {
			_ = json.Unmarshal(raw, &v)
		}
		return v
	}
	s.Key = str("key")
	s.CreatedAt, _ = parseISO(str("created_at"))
	s.UpdatedAt, _ = parseISO(str("updated_at"))
	if raw, ok := s.header.get("last_consolidated"); ok {
		var n int
		if json.Unmarshal(raw, &n) == nil && !bytes.Equal(raw, []byte("true")) && !bytes.Equal(raw, []byte("false")) {
			s.LastConsolidated = n
		}
	}
	s.metadata = nil
	if raw, ok := s.header.get("metadata"); ok {
		if o, err := parseObject(raw); err == nil {
			s.metadata = o
		}
	}
}

func decodeMessage(line []byte) Message {
	m := Message{Raw: append(json.RawMessage(nil), line...)}
	var v struct {
		Role            string          `json:"role"`
		Content         json.RawMessage `json:"content"`
		Timestamp       any             `json:"timestamp"`
		ToolsUsed       []string        `json:"tools_used"`
		ChannelDelivery any             `json:"_channel_delivery"`
		Command         any             `json:"_command"`
	}
	_ = json.Unmarshal(line, &v)
	m.Role, m.Content, m.ToolsUsed = v.Role, v.Content, v.ToolsUsed
	if v.Timestamp != nil {
		m.Timestamp = fmt.Sprint(v.Timestamp)
	}
	m.ChannelDelivery = truthy(v.ChannelDelivery)
	m.Command = truthy(v.Command)
	return m
}

// truthy is Python's truth value of a decoded JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// NewMessage builds a message from a JSON object (for hosts and tests).
func NewMessage(v map[string]any) Message { return decodeMessage(rawJSON(v)) }

// Text is the message's text as nanobot counts and formats it: the string
// content, or the text parts of a list joined, other parts as JSON.
func (m Message) Text() string {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []json.RawMessage
	if json.Unmarshal(m.Content, &parts) == nil {
		var out []string
		for _, p := range parts {
			var tp struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(p, &tp) == nil && tp.Type == "text" {
				if tp.Text != "" {
					out = append(out, tp.Text)
				}
				continue
			}
			out = append(out, string(p))
		}
		return strings.Join(out, "\n")
	}
	return string(m.Content)
}

// parseISO reads Python's datetime.isoformat(), with or without a zone;
// a time without a zone is local, as nanobot writes it.
func parseISO(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("compact: not an ISO time: %q", s)
}

// isoformat renders t as Python's datetime.isoformat() of a naive local time.
func isoformat(t time.Time) string {
	t = t.Local()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// Summary is the session's last archived summary (metadata "_last_summary").
type Summary struct {
	Text       string `json:"text"`
	LastActive string `json:"last_active"`
}

// LastSummary returns the stored summary, validated as nanobot's
// session_summary_from_metadata does: a malformed last_active falls back to
// the session's updated_at.
func (s *Session) LastSummary() (Summary, bool) {
	raw, ok := s.metadata.get("_last_summary")
	if !ok {
		return Summary{}, false
	}
	var v struct {
		Text       any `json:"text"`
		LastActive any `json:"last_active"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return Summary{}, false
	}
	text, _ := v.Text.(string)
	if text == "" {
		return Summary{}, false
	}
	la, _ := v.LastActive.(string)
	if _, err := parseISO(la); err != nil {
		la = isoformat(s.UpdatedAt)
	}
	return Summary{Text: text, LastActive: la}, true
}

func (s *Session) setSummary(text string, lastActive time.Time) {
	s.metadata.set("_last_summary", object{{"text", rawJSON(text)}, {"last_active", rawJSON(isoformat(lastActive))}}.marshal())
}

// encode renders the session in nanobot's layout. The metadata line keeps
// its key order and unknown keys; messages are their original bytes.
func (s *Session) encode() []byte {
	h := append(object(nil), s.header...)
	if len(h) == 0 {
		h = object{{"_type", rawJSON("metadata")}, {"key", rawJSON(s.Key)}, {"created_at", rawJSON(isoformat(s.CreatedAt))}, {"updated_at", rawJSON(isoformat(s.UpdatedAt))}}
	}
	md := s.metadata
	if md == nil {
		md = object{}
	}
	h.set("metadata", md.marshal())
	h.set("last_consolidated", rawJSON(s.LastConsolidated))
	var b bytes.Buffer
	b.Write(h.marshal())
	b.WriteByte('\n')
	if s.providerState != nil {
		b.Write(s.providerState)
		b.WriteByte('\n')
	}
	for _, m := range s.Messages {
		b.Write(m.Raw)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Save replaces the session file atomically and durably (fsutil's atomic
// write: its temporary name carries dream's prefix, so a crash's leftover is
// recognised and cleaned like every other).
func (s *Session) Save(path string) error {
	if err := fsutil.WriteFileAtomic(path, s.encode(), 0o600, true); err != nil {
		return fmt.Errorf("compact: saving session: %w", err)
	}
	return nil
}

// ErrNoSession: no session file by that name or key.
var ErrNoSession = errors.New("compact: no such session")

// FindSession resolves a session argument: a path to a file, or a key
// looked up in dir under nanobot's storage name (then its older
// ":"-to-"_" name).
func FindSession(dir, arg string) (string, error) {
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		return arg, nil
	}
	if dir != "" {
		for _, name := range []string{StorageName(arg), strings.ReplaceAll(arg, ":", "_") + ".jsonl"} {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %q (not a file, nor a key in %s)", ErrNoSession, arg, dir)
}
