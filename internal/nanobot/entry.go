package nanobot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// File names inside a nanobot memory dir (nanobot/agent/memory.py,
// MemoryStore.__init__).
const (
	LogName         = "history.jsonl"
	CursorName      = ".cursor"
	DreamCursorName = ".dream_cursor"
	IndexName       = LogName + ".idx"
)

// Caps in characters, as nanobot sets them (memory.py,
// _HISTORY_ENTRY_HARD_CAP, _RAW_ARCHIVE_MAX_CHARS,
// _ARCHIVE_SUMMARY_MAX_CHARS).
const (
	EntryHardCap       = 64_000
	RawArchiveMaxChars = 16_000
	SummaryMaxChars    = 8_000
)

// DefaultMaxEntries is nanobot's _DEFAULT_MAX_HISTORY: what compaction keeps.
const DefaultMaxEntries = 1000

// TimestampLayout is nanobot's datetime.now().strftime("%Y-%m-%d %H:%M").
const TimestampLayout = "2006-01-02 15:04"

// Entry is one record of history.jsonl:
//
//	{"cursor": 7, "timestamp": "2026-05-28 10:00", "content": "...", "session_key": "cli:direct"}
//
// session_key is omitted when empty, exactly as nanobot writes it.
type Entry struct {
	Cursor     int64  `json:"cursor"`
	Timestamp  string `json:"timestamp"`
	Content    string `json:"content"`
	SessionKey string `json:"session_key,omitempty"`
}

// Time parses the entry's timestamp in the local zone (nanobot writes local
// wall-clock time without a zone); ok is false for a foreign format.
func (e Entry) Time() (time.Time, bool) {
	t, err := time.ParseInLocation(TimestampLayout, e.Timestamp, time.Local)
	return t, err == nil
}

// encodeLine renders e the way Python's json.dumps(record,
// ensure_ascii=False) does: ", " and ": " separators, keys in nanobot's
// order, non-ASCII text kept as is, and a final newline.
func encodeLine(e Entry) []byte {
	var b bytes.Buffer
	b.WriteString(`{"cursor": `)
	b.WriteString(strconv.FormatInt(e.Cursor, 10))
	b.WriteString(`, "timestamp": `)
	writeJSONString(&b, e.Timestamp)
	b.WriteString(`, "content": `)
	writeJSONString(&b, e.Content)
	if e.SessionKey != "" {
		b.WriteString(`, "session_key": `)
		writeJSONString(&b, e.SessionKey)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false) // Python leaves <, > and & alone; <think> must read as written
	_ = enc.Encode(s)        // a string always encodes
	b.Truncate(b.Len() - 1)  // Encode's newline
}

// rawEntry is the loose shape of a line, so that a wrong type is reported
// rather than silently zeroed.
type rawEntry struct {
	Cursor     json.RawMessage `json:"cursor"`
	Timestamp  json.RawMessage `json:"timestamp"`
	Content    json.RawMessage `json:"content"`
	SessionKey json.RawMessage `json:"session_key"`
}

// decodeLine parses one line. It applies nanobot's validity rules
// (_valid_cursor, _valid_history_payload): a non-negative integer cursor
// (not a bool, not a float), a string timestamp and content, a string or
// absent session_key. The error says which rule failed.
func decodeLine(line []byte) (Entry, error) {
	// Fast path: one typed decode. Anything it rejects or leaves nil goes
	// through the careful path, which says what is wrong.
	var fast struct {
		Cursor     *int64  `json:"cursor"`
		Timestamp  *string `json:"timestamp"`
		Content    *string `json:"content"`
		SessionKey *string `json:"session_key"`
	}
	if json.Unmarshal(line, &fast) == nil && fast.Cursor != nil && *fast.Cursor >= 0 && fast.Timestamp != nil && fast.Content != nil {
		e := Entry{Cursor: *fast.Cursor, Timestamp: *fast.Timestamp, Content: *fast.Content}
		if fast.SessionKey != nil {
			e.SessionKey = *fast.SessionKey
		}
		return e, nil
	}
	var r rawEntry
	if err := json.Unmarshal(line, &r); err != nil {
		return Entry{}, fmt.Errorf("not a JSON object: %v", err)
	}
	var e Entry
	if len(r.Cursor) == 0 || string(r.Cursor) == "null" {
		return Entry{}, fmt.Errorf("no cursor")
	}
	c, err := strconv.ParseInt(string(r.Cursor), 10, 64)
	if err != nil || c < 0 {
		return Entry{}, fmt.Errorf("invalid cursor %s", truncateBytes(r.Cursor, 40))
	}
	e.Cursor = c
	if !jsonString(r.Timestamp, &e.Timestamp) {
		return Entry{}, fmt.Errorf("cursor %d: timestamp is not a string", c)
	}
	if !jsonString(r.Content, &e.Content) {
		return Entry{}, fmt.Errorf("cursor %d: content is not a string", c)
	}
	if len(r.SessionKey) > 0 && string(r.SessionKey) != "null" && !jsonString(r.SessionKey, &e.SessionKey) {
		return Entry{}, fmt.Errorf("cursor %d: session_key is not a string", c)
	}
	return e, nil
}

// peekCursor reads the cursor of a line in the layout Append writes
// (`{"cursor": N, ...`) without decoding the rest; ok is false for any other
// layout. Readers use it only to skip lines at or before a cursor.
func peekCursor(line []byte) (int64, bool) {
	const prefix = `{"cursor": `
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	var c int64
	i := len(prefix)
	for ; i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		if c > (1<<62)/10 {
			return 0, false
		}
		c = c*10 + int64(line[i]-'0')
	}
	if i == len(prefix) || i >= len(line) || (line[i] != ',' && line[i] != '}') {
		return 0, false
	}
	return c, true
}

func jsonString(raw json.RawMessage, dst *string) bool {
	if len(raw) == 0 || raw[0] != '"' {
		return false
	}
	return json.Unmarshal(raw, dst) == nil
}

func truncateBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
