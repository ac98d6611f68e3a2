package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/dreamkit/dream/llm"
)

// maxRequestBody bounds a request body; dream's requests are far smaller.
const maxRequestBody = 32 << 20

// Server is a running fake model server. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL, for example "http://127.0.0.1:41234"; pass it as
	// the provider's BaseURL (for OpenAI with or without "/v1").
	URL string

	srv       *httptest.Server
	done      chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	script   []Turn
	served   int // times script[0] has been served
	requests []Recorded
	prev     map[string][]byte // canonical prompt of the last request, per protocol
	seq      int               // id counter
}

// NewServer starts a server on a loopback port serving script.
func NewServer(script ...Turn) *Server {
	s := newServer(script)
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	return s
}

// Serve starts a server on l serving script; it is NewServer for a
// listener the caller chose (the llmfake command uses it).
func Serve(l net.Listener, script ...Turn) *Server {
	s := newServer(script)
	s.srv = httptest.NewUnstartedServer(s)
	_ = s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL
	return s
}

func newServer(script []Turn) *Server {
	return &Server{
		script: append([]Turn(nil), script...),
		done:   make(chan struct{}),
		prev:   map[string][]byte{},
	}
}

// Close ends pending delays and shuts the server down.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Requests returns a copy of every request received, in order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		r.Body = append([]byte(nil), r.Body...)
		out[i] = r
	}
	return out
}

// Remaining is the number of script turns not yet fully served; a turn that
// repeats forever always counts.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Append adds turns to the end of the script.
func (s *Server) Append(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// ServeHTTP answers one model request with the script's next turn, in the
// protocol its path names (protocolOf).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, geminiModel, geminiCall, isGemini := protocolOf(r.URL.Path)
	if p == nil {
		http.Error(w, "llmtest: no such endpoint: "+r.URL.Path, http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		p.writeError(w, http.StatusMethodNotAllowed, "llmtest: method "+r.Method+" not allowed", "", s.nextID())
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		p.writeError(w, http.StatusBadRequest, "llmtest: read request body: "+err.Error(), "", s.nextID())
		return
	}
	rec := Recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Protocol: p.name()}
	req, perr := parseRequest(body, geminiModel)
	if isGemini {
		req.Stream = geminiCall == "streamGenerateContent"
	}
	rec.Stream = req.Stream
	if perr == nil && len(body) > maxRequestBody {
		perr = fmt.Errorf("body larger than %d bytes", maxRequestBody)
	}
	turn, ok, usage := s.take(rec, p, req, perr == nil)
	if perr != nil {
		p.writeError(w, http.StatusBadRequest, "llmtest: invalid request body: "+perr.Error(), "", s.nextID())
		return
	}
	if !ok {
		p.writeError(w, http.StatusInternalServerError, "llmtest: script exhausted", "", s.nextID())
		return
	}
	if turn.Dynamic != nil {
		turn = turn.Dynamic(rec)
	}
	if turn.Delay > 0 && !s.delay(r, turn.Delay) {
		return
	}
	if turn.Status != 0 {
		if turn.RetryAfter != "" {
			w.Header().Set("Retry-After", turn.RetryAfter)
		}
		p.writeError(w, turn.Status, fmt.Sprintf("llmtest: scripted error %d", turn.Status), "", s.nextID())
		return
	}
	if turn.Usage != (llm.Usage{}) {
		usage = turn.Usage
	} else {
		usage.OutputTokens = outputTokens(turn)
	}
	ans := answer{turn: turn, usage: usage, model: req.Model, id: s.nextID(), includeUsage: req.StreamOptions.IncludeUsage}
	if req.Stream {
		err = p.writeStream(w, ans)
	} else {
		err = p.writeJSON(w, ans)
	}
	if err != nil {
		// The answer could not be built (a Call input that does not marshal).
		// Both writers build everything before the first byte, so the
		// headers are still unsent.
		p.writeError(w, http.StatusInternalServerError, err.Error(), "", s.nextID())
	}
}

// protocolOf picks the wire protocol by the path's suffix, so that base
// URLs with or without "/v1" (and with a proxy prefix) all work; nil for no
// endpoint. A Gemini path also names its model and method.
func protocolOf(urlPath string) (p protocol, geminiModel, geminiCall string, isGemini bool) {
	path := strings.TrimSuffix(urlPath, "/")
	geminiModel, geminiCall, isGemini = geminiMethod(path)
	switch {
	case strings.HasSuffix(path, "/messages"):
		p = anthropicProtocol{}
	case strings.HasSuffix(path, "/chat/completions"):
		p = openaiProtocol{}
	case strings.HasSuffix(path, "/responses"):
		p = responsesProtocol{}
	case isGemini:
		p = geminiProtocol{}
	}
	return p, geminiModel, geminiCall, isGemini
}

// delay holds a scripted answer for d; false when the client or the server
// went away first.
func (s *Server) delay(r *http.Request, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

// take records the request and pops the turn that answers it. It reports
// false when the script is exhausted. A request that did not parse is
// recorded but consumes no turn. The synthesised input usage is computed
// here, under the lock, because it depends on the previous request.
func (s *Server) take(rec Recorded, p protocol, req wireRequest, parsed bool) (Turn, bool, llm.Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	if !parsed {
		return Turn{}, false, llm.Usage{}
	}
	canon := p.canonical(req)
	u := synthInput(p.name(), s.prev[p.name()], canon, req.hasCacheControl)
	s.prev[p.name()] = canon
	if len(s.script) == 0 {
		return Turn{}, false, u
	}
	t := s.script[0]
	s.served++
	if t.Repeat >= 0 && s.served >= max(t.Repeat, 1) {
		s.script = s.script[1:]
		s.served = 0
	}
	return t, true, u
}

func (s *Server) nextID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("llmtest_%d", s.seq)
}

// wireRequest is the part of any protocol's request body the server reads.
type wireRequest struct {
	Model         string            `json:"model"`
	Stream        bool              `json:"stream"`
	Tools         json.RawMessage   `json:"tools"`
	System        json.RawMessage   `json:"system"`
	Messages      []json.RawMessage `json:"messages"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// Instructions and Input are the Responses API's system prompt and
	// conversation.
	Instructions json.RawMessage `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	// SystemInstruction and Contents are Gemini's.
	SystemInstruction json.RawMessage   `json:"systemInstruction"`
	Contents          []json.RawMessage `json:"contents"`

	hasCacheControl bool
}

// parseRequest reads a request body; pathModel is the model a protocol
// names in the path (Gemini), which stands in for the body's.
func parseRequest(body []byte, pathModel string) (wireRequest, error) {
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return wireRequest{}, err
	}
	if pathModel != "" {
		req.Model = pathModel
	}
	if req.Model == "" {
		return req, fmt.Errorf("missing model")
	}
	req.hasCacheControl = strings.Contains(string(body), `"cache_control"`)
	return req, nil
}

// answer is everything a protocol needs to write one successful turn.
type answer struct {
	turn         Turn
	usage        llm.Usage
	model        string
	id           string
	includeUsage bool
}

// protocol writes one API's wire shapes.
type protocol interface {
	name() string
	canonical(req wireRequest) []byte
	writeJSON(w http.ResponseWriter, a answer) error
	writeStream(w http.ResponseWriter, a answer) error
	writeError(w http.ResponseWriter, status int, msg, errType, id string)
}
