package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine is the longest line a client may send, the SDK's own bound on a
// frame.
const maxLine = mcp.DefaultMaxLineLength

// StdioTransport is MCP's stdio transport (newline-delimited JSON-RPC 2.0)
// over in and out, made to survive a client's bad bytes. The SDK's
// transport ends the session at the first line it cannot decode, and with
// it cancels every call in flight (a dream_run with apply=true rolled
// back). Here every line is checked before the SDK sees it: a line that is
// not JSON is answered with a parse error (-32700), one that is JSON but
// not a JSON-RPC message (or is a batch, which MCP dropped in 2025-06-18)
// with an invalid-request error (-32600), a line over maxLine likewise;
// each is then skipped and the session goes on. Blank lines are skipped.
//
// A client may also send everything at once and close stdin (a script's
// printf | dream mcp). The SDK ends the session at the end of its input
// and drops what it has not answered, so the filter passes no message
// after initialize until initialize is answered, and holds back the end
// of the input until every request it passed on has its answer.
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	r := newLineFilter(bufio.NewReaderSize(in, 64<<10), w, answerWait)
	w.sent = r.sent
	// The filter bounds lines itself; the SDK's own bound would count
	// bytes it read ahead into the next line.
	return &mcp.IOTransport{Reader: io.NopCloser(r), Writer: w, MaxLineLength: -1}
}

// lockedWriter makes the filter's replies and the SDK's messages (each
// written whole by one Write) alternate line by line on out.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	sent func([]byte) // told of each message written
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if l.sent != nil {
		l.sent(p)
	}
	return n, err
}

func (l *lockedWriter) Close() error { return nil }

// lineFilter is the io.Reader the SDK decodes: the client's lines that are
// JSON-RPC messages, each trimmed and ended by one newline.
type lineFilter struct {
	in      *bufio.Reader
	reply   io.Writer
	line    []byte // the line being read
	pending []byte // what Read hands out next
	err     error  // the input's error, returned once pending is out

	mu       sync.Mutex
	answered chan struct{}   // closed (and replaced) as an answer is written
	open     map[string]bool // the requests passed on, not yet answered, by id
	initID   string          // initialize's id until it is answered
	wait     time.Duration   // see newLineFilter
}

// answerWait is how long the filter waits for the SDK's next answer
// before it gives up holding a message (or the end of the input) back:
// long enough for any call but a dream, whose answer, should it take
// longer, is lost while the dream still lands.
const answerWait = 2 * time.Minute

// newLineFilter filters in for the SDK, replying to bad lines on reply;
// wait bounds each wait for an answer (0: never wait, with no SDK behind).
func newLineFilter(in *bufio.Reader, reply io.Writer, wait time.Duration) *lineFilter {
	f := &lineFilter{in: in, reply: reply, wait: wait, open: map[string]bool{}}
	f.answered = make(chan struct{})
	return f
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			f.drain()
			return 0, f.err
		}
		line, tooLong, err := f.next()
		f.err = err
		if tooLong {
			if err := f.refuse(nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: a line of more than %d bytes was skipped; send one JSON-RPC message per line", maxLine)); err != nil {
				return 0, err
			}
			continue
		}
		msg, id, code, why := check(line)
		switch {
		case code != 0:
			if err := f.refuse(id, code, why); err != nil {
				return 0, err
			}
		case len(msg) > 0:
			f.pass(msg)
			f.pending = append(msg, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// pass notes a message about to go to the SDK: a request is open until
// answered; after initialize nothing goes on until it is answered (a
// client's notifications/initialized and first call must not overtake it);
// a cancelled request will have no answer.
func (f *lineFilter) pass(msg []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waitWhile(func() bool { return f.initID != "" })
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return
	}
	req, ok := m.(*jsonrpc.Request)
	switch {
	case !ok:
	case req.ID.IsValid():
		key := idKey(req.ID)
		f.open[key] = true
		if req.Method == "initialize" {
			f.initID = key
		}
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.RequestID != nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				delete(f.open, idKey(id))
			}
		}
	}
}

// sent closes the request a written answer is for.
func (f *lineFilter) sent(b []byte) {
	m, err := jsonrpc.DecodeMessage(bytes.TrimSpace(b))
	resp, ok := m.(*jsonrpc.Response)
	if err != nil || !ok || !resp.ID.IsValid() {
		return
	}
	key := idKey(resp.ID)
	f.mu.Lock()
	delete(f.open, key)
	if f.initID == key {
		f.initID = ""
	}
	close(f.answered)
	f.answered = make(chan struct{})
	f.mu.Unlock()
}

// drain waits, at the end of the input, until every request passed on is
// answered: the SDK ends the session when Read returns the end.
func (f *lineFilter) drain() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waitWhile(func() bool { return len(f.open) > 0 })
}

// waitWhile waits, with f.mu held, while busy holds and the SDK answers
// within f.wait of its last answer.
func (f *lineFilter) waitWhile(busy func() bool) {
	for busy() && f.wait > 0 {
		next := f.answered
		f.mu.Unlock()
		select {
		case <-next:
			f.mu.Lock()
		case <-time.After(f.wait):
			f.mu.Lock()
			return
		}
	}
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// next reads one line, without its newline; tooLong reports one over
// maxLine, whose bytes are dropped as they come.
func (f *lineFilter) next() (line []byte, tooLong bool, err error) {
	f.line = f.line[:0]
	for {
		frag, err := f.in.ReadSlice('\n')
		if !tooLong && len(f.line)+len(frag) > maxLine+1 {
			tooLong, f.line = true, nil
		}
		if !tooLong {
			f.line = append(f.line, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil && !tooLong {
			f.line = f.line[:len(f.line)-1]
		}
		return f.line, tooLong, err
	}
}

// check decides what becomes of one line: msg, the line trimmed, to pass
// on; or an error code and message for the reply, with the id to answer
// (nil when the line has none the client could match).
func check(line []byte) (msg []byte, id *jsonrpc.ID, code int, why string) {
	msg = bytes.TrimSpace(line)
	switch {
	case len(msg) == 0:
		return nil, nil, 0, "" // a blank line: nothing to pass on or answer
	case !json.Valid(msg):
		var raw json.RawMessage
		err := json.Unmarshal(msg, &raw)
		return nil, nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: the line is not JSON (%v); send one JSON-RPC message per line", err)
	case msg[0] == '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not accepted (MCP dropped them in 2025-06-18); send one message per line"
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		var m struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(msg, &m) == nil && m.ID != nil {
			if v, err := jsonrpc.MakeID(m.ID); err == nil {
				id = &v
			}
		}
		return nil, id, jsonrpc.CodeInvalidRequest, `invalid request: not a JSON-RPC 2.0 message (a request has "jsonrpc": "2.0", a string "method" and a string or number "id")`
	}
	return bounded(msg)
}

// maxNameLen bounds a method, a tool's name and the like: every refusal
// of one repeats it, and a megabyte name must not come back as a megabyte
// error (the SDK echoes it whole).
const maxNameLen = 256

// maxExactID is the largest integer a float64, which the SDK reads a
// numeric id into, holds exactly.
const maxExactID = 1 << 53

// bounded refuses what the SDK would answer wrongly or at length: a
// numeric id that is not an integer a float64 holds exactly (it came back
// as another id, which the client cannot match), and a method, tool name or resource
// URI too long to be one (echoed whole).
func bounded(msg []byte) ([]byte, *jsonrpc.ID, int, string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return msg, nil, 0, ""
	}
	var id *jsonrpc.ID
	if len(m.ID) > 0 && m.ID[0] != '"' && string(m.ID) != "null" {
		n, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil || n > maxExactID || n < -maxExactID {
			return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: a numeric id must be an integer within ±2^53 (the SDK reads ids as JSON numbers); use a string id for anything else"
		}
		if v, err := jsonrpc.MakeID(float64(n)); err == nil {
			id = &v
		}
	} else if len(m.ID) > 0 && m.ID[0] == '"' {
		var str string
		if json.Unmarshal(m.ID, &str) == nil {
			if v, err := jsonrpc.MakeID(str); err == nil {
				id = &v
			}
		}
	}
	switch {
	case len(m.Method) > maxNameLen:
		return nil, id, jsonrpc.CodeMethodNotFound, "method not found: " + clip(m.Method)
	case m.Method == "tools/call" && len(m.Params.Name) > maxNameLen:
		return nil, id, jsonrpc.CodeInvalidParams, "unknown tool " + clip(m.Params.Name)
	case len(m.Params.URI) > maxPathLen+len("file://"):
		return nil, id, jsonrpc.CodeInvalidParams, "resource not found: " + clip(m.Params.URI)
	}
	return msg, nil, 0, ""
}

// refuse answers a skipped line. Its id is the request's when the line
// had a valid one, else null (JSON-RPC's answer to a line with no usable
// id).
func (f *lineFilter) refuse(id *jsonrpc.ID, code int, why string) error {
	var rawID any
	if id != nil {
		rawID = id.Raw()
	}
	b, err := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", rawID, &jsonrpc.Error{Code: int64(code), Message: why}})
	if err != nil {
		return err
	}
	_, err = f.reply.Write(append(b, '\n'))
	return err
}
