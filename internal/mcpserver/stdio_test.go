package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dreamkit/dream/internal/task"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// stdioSession is a Server served over StdioTransport on pipes, driven
// line by line as a client process would.
type stdioSession struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func serveStdio(t *testing.T, srv *Server, ctx context.Context) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioSession{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1)}
	go func() {
		err := srv.Run(ctx, StdioTransport(inR, outW))
		outW.Close()
		s.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return s
}

func (s *stdioSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("sending %.60q: %v", line, err)
	}
}

// recv reads the next message the server writes.
func (s *stdioSession) recv() map[string]any {
	s.t.Helper()
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("reading the server's next line: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil || m["jsonrpc"] != "2.0" {
		s.t.Fatalf("the server wrote a line that is not a JSON-RPC message (%v): %.200q", err, line)
	}
	return m
}

// recvID skips notifications up to the response to id.
func (s *stdioSession) recvID(id float64) map[string]any {
	s.t.Helper()
	for {
		m := s.recv()
		if m["id"] == id && m["method"] == nil {
			return m
		}
	}
}

func (s *stdioSession) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := s.recvID(1); m["result"] == nil {
		s.t.Fatalf("initialize: %v", m)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestStdioSurvivesBadLines is issue 28's `dream mcp` that died on one line
// that was not JSON: every kind of bad line is answered with the JSON-RPC
// error for it and skipped, and the session answers the next request.
func TestStdioSurvivesBadLines(t *testing.T) {
	f := newFixture(t)
	s := serveStdio(t, f.srv, context.Background())
	s.initialize()
	for i, tc := range []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not JSON", "this is not JSON", jsonrpc.CodeParseError, nil},
		{"half an object", `{"jsonrpc":"2.0","id":7,"method":"tools/li`, jsonrpc.CodeParseError, nil},
		{"two objects on a line", `{"jsonrpc":"2.0","id":8,"method":"ping"} {"x":1}`, jsonrpc.CodeParseError, nil},
		{"binary", "\x00\xff\xfe{", jsonrpc.CodeParseError, nil},
		{"a number", "42", jsonrpc.CodeInvalidRequest, nil},
		{"a string", `"hello"`, jsonrpc.CodeInvalidRequest, nil},
		{"an object that is no message", `{"hello":"world"}`, jsonrpc.CodeInvalidRequest, nil},
		{"the wrong version, with an id", `{"jsonrpc":"1.0","id":9,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, float64(9)},
		{"an id of the wrong type", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{"a batch", `[{"jsonrpc":"2.0","id":10,"method":"tools/list"}]`, jsonrpc.CodeInvalidRequest, nil},
		{"an empty batch", `[]`, jsonrpc.CodeInvalidRequest, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.send("")     // blank lines are skipped without a word
			s.send("  \r") // and so are lines of white space
			s.send(tc.line)
			m := s.recv()
			if errorCode(m) != tc.code || m["id"] != tc.id {
				t.Fatalf("answer to %q: %v, want code %v, id %v", tc.line, m, tc.code, tc.id)
			}
			if _, has := m["id"]; !has {
				t.Errorf("an error response without an id member: %v", m)
			}
			id := 100 + i
			s.send(`{"jsonrpc":"2.0","id":` + jsonNumber(id) + `,"method":"tools/list"} ` + "\r")
			if m := s.recvID(float64(id)); m["result"] == nil {
				t.Fatalf("tools/list after %s: %v", tc.name, m)
			}
		})
	}
	s.in.Close()
	select {
	case err := <-s.done:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("Run after stdin closed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end 10 s after stdin closed")
	}
}

func jsonNumber(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestStdioCapsEchoedIDs is issue 28's 1 MB dream id that came back whole
// in the error: the refusal quotes its start and its length.
func TestStdioCapsEchoedIDs(t *testing.T) {
	f := newFixture(t)
	s := serveStdio(t, f.srv, context.Background())
	s.initialize()
	huge := strings.Repeat("x", 1<<20)
	for i, tool := range []string{"dream_show", "dream_diff", "dream_apply", "dream_discard", "dream_undo", "dream_kill"} {
		args, _ := json.Marshal(map[string]any{"name": tool, "arguments": map[string]any{"id": huge}})
		s.send(`{"jsonrpc":"2.0","id":` + jsonNumber(20+i) + `,"method":"tools/call","params":` + string(args) + `}`)
		m := s.recvID(float64(20 + i))
		b, _ := json.Marshal(m)
		res, _ := m["result"].(map[string]any)
		if res["isError"] != true || len(b) > 2000 || !strings.Contains(string(b), "(1048576 bytes)") {
			t.Errorf("%s of a 1 MB id: a %d-byte answer: %.300s", tool, len(b), b)
		}
	}
	args, _ := json.Marshal(map[string]any{"name": "dream_log", "arguments": map[string]any{"memory_dir": "/" + huge}})
	s.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":` + string(args) + `}`)
	if b, _ := json.Marshal(s.recvID(30)); len(b) > 2000 {
		t.Errorf("dream_log of a 1 MB memory_dir: a %d-byte answer", len(b))
	}
}

// TestStdioEOFLetsTheDreamLand: a client that closes stdin while a dream
// it started with apply=true runs no longer cancels it (the SDK cancels the
// call): the dream lands, then Run returns.
func TestStdioEOFLetsTheDreamLand(t *testing.T) {
	f := newFixture(t)
	started, release := make(chan struct{}), make(chan struct{})
	f.srv.opts.Base.Runner = dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return dream.Outcome{}, context.Cause(ctx)
		}
		if err := os.WriteFile(filepath.Join(job.MemoryDir, "landed.md"), []byte("# Landed\n\nafter the client left\n"), 0o644); err != nil {
			return dream.Outcome{}, err
		}
		return dream.Outcome{FilesTouched: []string{"landed.md"}, Summary: "wrote landed.md"}, nil
	})
	s := serveStdio(t, f.srv, context.Background())
	s.initialize()
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"dream_run","arguments":{"apply":true}}}`)
	<-started
	s.send("garbage while the dream runs")
	if m := s.recv(); errorCode(m) != jsonrpc.CodeParseError {
		t.Fatalf("answer to garbage: %v", m)
	}
	s.in.Close()
	// Give the SDK time to see the end of stdin and cancel the call.
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-s.done:
		t.Fatalf("Run returned (%v) while the dream was running", err)
	default:
	}
	close(release)
	// The client that closed stdin still gets its answer.
	if m := s.recvID(2); m["result"] == nil {
		t.Fatalf("the answer to dream_run after stdin closed: %v", m)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the dream ended")
	}
	if b, err := os.ReadFile(filepath.Join(f.mem, "landed.md")); err != nil || !bytes.Contains(b, []byte("after the client left")) {
		t.Fatalf("the dream did not land: %v %q", err, b)
	}
	ts, err := task.List(f.state)
	if err != nil || len(ts) != 1 || ts[0].Status != task.StatusCompleted {
		t.Fatalf("tasks: %v %+v", err, ts)
	}
}

// TestStdioCancelStopsTheDream: the client's notifications/cancelled for
// the call, and the end of the server's context, still stop a dream, which
// rolls back.
func TestStdioCancelStopsTheDream(t *testing.T) {
	for _, how := range []string{"notifications/cancelled", "server context"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t)
			started := make(chan struct{})
			f.srv.opts.Base.Runner = dream.RunnerFunc(func(ctx context.Context, job dream.Job) (dream.Outcome, error) {
				os.WriteFile(filepath.Join(job.MemoryDir, "partial.md"), []byte("# Partial\n\nx\n"), 0o644)
				close(started)
				<-ctx.Done()
				return dream.Outcome{}, context.Cause(ctx)
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := serveStdio(t, f.srv, ctx)
			s.initialize()
			s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"dream_run","arguments":{"apply":true}}}`)
			<-started
			if how == "server context" {
				cancel()
			} else {
				s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				ts, err := task.List(f.state)
				if err == nil && len(ts) == 1 && ts[0].Status != task.StatusRunning {
					if ts[0].Status == task.StatusCompleted {
						t.Fatalf("the dream completed: %+v", ts[0])
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the dream did not stop: %v %+v", err, ts)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if _, err := os.Stat(filepath.Join(f.mem, "partial.md")); !os.IsNotExist(err) {
				t.Errorf("a stopped dream left partial.md: %v", err)
			}
		})
	}
}

// TestStdioAnswersEverythingBeforeTheEnd: a client that sends its whole
// session at once and closes stdin (printf ... | dream mcp) gets an answer
// to every request: initialize first, then the call sent right behind it.
// The SDK once ended the session at the end of the input and dropped what
// it had not answered (a dream_run never started).
func TestStdioAnswersEverythingBeforeTheEnd(t *testing.T) {
	session := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"dream_status","arguments":{}}}
{"jsonrpc":"2.0","id":"three","method":"ping"}
`
	for i := range 20 {
		f := newFixture(t)
		var out syncBuffer
		if err := f.srv.Run(context.Background(), StdioTransport(strings.NewReader(session), &out)); err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("run %d: %v", i, err)
		}
		got := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m struct {
				ID     any             `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil {
				got[fmt.Sprint(m.ID)] = true
			}
		}
		if !got["1"] || !got["2"] || !got["three"] {
			t.Fatalf("run %d: answered %v, want 1, 2 and three:\n%s", i, got, out.String())
		}
	}
}

// syncBuffer is a bytes.Buffer the server's writers may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStdioBoundsIDsAndNames: a numeric id the SDK cannot hold (past 64
// bits, or not an integer) is refused rather than answered under another
// id the client cannot match; a method, tool name or resource URI of a
// megabyte is refused with its start and length, not echoed whole.
func TestStdioBoundsIDsAndNames(t *testing.T) {
	f := newFixture(t)
	s := serveStdio(t, f.srv, context.Background())
	s.initialize()
	huge := strings.Repeat("Z", 1<<20)
	for _, tc := range []struct {
		line string
		code float64
		id   any
	}{
		{`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil}, // answered as -2^63 by the SDK
		{`{"jsonrpc":"2.0","id":7,"method":"` + huge + `"}`, jsonrpc.CodeMethodNotFound, float64(7)},
		{`{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"` + huge + `","arguments":{}}}`, jsonrpc.CodeInvalidParams, "t"},
		{`{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///` + huge + `"}}`, jsonrpc.CodeInvalidParams, float64(9)},
	} {
		s.send(tc.line)
		m := s.recv()
		b, _ := json.Marshal(m)
		if errorCode(m) != tc.code || m["id"] != tc.id || len(b) > 2000 {
			t.Errorf("%.80s…: answer %.300s (%d bytes), want code %v for id %v, under 2,000 bytes", tc.line, b, len(b), tc.code, tc.id)
		}
	}
	// The largest id a float64 holds exactly is answered as itself.
	s.send(`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`)
	line, err := s.out.ReadBytes('\n')
	if err != nil || !bytes.Contains(line, []byte(`"id":9007199254740992`)) {
		t.Errorf("the answer to id 2^53: %s (%v)", line, err)
	}
}
