package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzRelFromURI: whatever URI a client sends, a path that comes back is a
// clean relative path inside the memory dir with no hidden part.
func FuzzRelFromURI(f *testing.F) {
	s := &Server{opts: Options{}}
	s.opts.Base.MemoryDir = "/home/u/.claude/projects/-home-u-app/memory"
	for _, seed := range []string{
		"file:///home/u/.claude/projects/-home-u-app/memory/MEMORY.md",
		"file:///home/u/.claude/projects/-home-u-app/memory/../../../../etc/passwd",
		"file:///home/u/.claude/projects/-home-u-app/memory/%2e%2e/x",
		"file://localhost/home/u/.claude/projects/-home-u-app/memory/sub/笔记.md",
		"file:///home/u/.claude/projects/-home-u-app/memory/.consolidate-lock",
		"http://x/y", "", "file:", "file:///home/u/.claude/projects/-home-u-app/memoryX/a.md",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		rel, err := s.relFromURI(uri)
		if err != nil {
			return
		}
		if rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || strings.HasPrefix(rel, "..") {
			t.Fatalf("%q -> %q", uri, rel)
		}
		for _, part := range strings.Split(rel, "/") {
			if part == ".." || strings.HasPrefix(part, ".") {
				t.Fatalf("%q -> %q has a hidden or parent part", uri, rel)
			}
		}
	})
}

// FuzzLineFilter: whatever bytes a client sends, the SDK is handed only
// JSON-RPC messages, one per line, and every other non-blank line gets one
// JSON-RPC error response (with an id, null or the request's): nothing is
// lost or passed on half.
func FuzzLineFilter(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		"garbage\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "\n\n  \n", `{"jsonrpc":"1.0","id":"x","method":"a"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}} {}`, "\x00\xff", `{"jsonrpc":"2.0","id":null,"method":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var replies bytes.Buffer
		out, err := io.ReadAll(newLineFilter(bufio.NewReaderSize(bytes.NewReader(in), 16), &replies, 0))
		if err != nil {
			t.Fatal(err)
		}
		passed, refused := lines(out), lines(replies.Bytes())
		for _, l := range passed {
			if _, err := jsonrpc.DecodeMessage(l); err != nil || len(bytes.TrimSpace(l)) != len(l) {
				t.Fatalf("passed on %q (%v)", l, err)
			}
		}
		for _, l := range refused {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal(l, &m); err != nil || m.JSONRPC != "2.0" || m.ID == nil || m.Error == nil ||
				(m.Error.Code != jsonrpc.CodeParseError && m.Error.Code != jsonrpc.CodeInvalidRequest) {
				t.Fatalf("reply %q is not a JSON-RPC error response (%v)", l, err)
			}
		}
		nonBlank := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		if len(passed)+len(refused) != nonBlank {
			t.Fatalf("%d lines in, %d passed and %d refused", nonBlank, len(passed), len(refused))
		}
	})
}

// lines splits newline-ended output into its lines, failing on a last
// line without its newline.
func lines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		panic(fmt.Sprintf("output does not end with a newline: %q", b))
	}
	return bytes.Split(b[:len(b)-1], []byte("\n"))
}
