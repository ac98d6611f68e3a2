package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/dreamkit/dream/llm"
)

// geminiProtocol speaks the Gemini API's models/{model}:generateContent and
// :streamGenerateContent (with ?alt=sse), as Gemini CLI calls it when
// GOOGLE_GEMINI_BASE_URL points at a server. The model is in the path,
// not the body; a stream is a series of partial GenerateContentResponse
// objects, the last one carrying the finish reason and the usage.
type geminiProtocol struct{}

func (geminiProtocol) name() string { return ProtocolGemini }

// canonical is the prompt in the order Gemini's implicit cache reads it:
// tools, the system instruction, then the contents.
func (geminiProtocol) canonical(req wireRequest) []byte {
	return canonicalPrompt(append([]json.RawMessage{req.Tools, req.SystemInstruction}, req.Contents...)...)
}

// geminiMethod splits ".../models/{model}:{method}" into the model and the
// method; ok is false for any other path.
func geminiMethod(path string) (model, method string, ok bool) {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", "", false
	}
	model, method, ok = strings.Cut(path[i+len("/models/"):], ":")
	if !ok || model == "" || strings.Contains(model, "/") {
		return "", "", false
	}
	switch method {
	case "generateContent", "streamGenerateContent":
		return model, method, true
	}
	return "", "", false
}

type geminiPart struct {
	Text         string        `json:"text,omitempty"`
	FunctionCall *geminiCallIn `json:"functionCall,omitempty"`
}

type geminiCallIn struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type geminiCandidate struct {
	Content struct {
		Parts []geminiPart `json:"parts"`
		Role  string       `json:"role"`
	} `json:"content"`
	FinishReason string `json:"finishReason,omitempty"`
	Index        int    `json:"index"`
}

type geminiUsage struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	TotalTokenCount         int64 `json:"totalTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount,omitempty"`
}

type geminiResponse struct {
	Candidates    []geminiCandidate `json:"candidates"`
	UsageMetadata *geminiUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string            `json:"modelVersion"`
	ResponseID    string            `json:"responseId"`
}

// geminiUsageOf reports usage the Gemini way: promptTokenCount is the
// whole prompt, cachedContentTokenCount the part of it read from cache.
func geminiUsageOf(u llm.Usage) geminiUsage {
	g := geminiUsage{
		PromptTokenCount:        u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CandidatesTokenCount:    u.OutputTokens,
		CachedContentTokenCount: u.CacheReadInputTokens,
	}
	g.TotalTokenCount = g.PromptTokenCount + g.CandidatesTokenCount
	return g
}

func geminiFinish(r llm.StopReason) string {
	switch r {
	case llm.StopMaxTokens:
		return "MAX_TOKENS"
	case llm.StopOther:
		return "SAFETY"
	}
	return "STOP" // Gemini ends a function-calling turn with STOP too
}

// parts builds the text part and one functionCall part per call. Gemini
// carries arguments as a JSON object; arguments that are not one (a
// misbehaving model) are sent as a JSON string, as on the Anthropic wire.
func (geminiProtocol) parts(a answer) ([]geminiPart, error) {
	var out []geminiPart
	if a.turn.Text != "" {
		out = append(out, geminiPart{Text: a.turn.Text})
	}
	for _, c := range a.turn.Calls {
		args, err := c.arguments()
		if err != nil {
			return nil, err
		}
		out = append(out, geminiPart{FunctionCall: &geminiCallIn{ID: c.ID, Name: c.Name, Args: anthropicInput(args)}})
	}
	return out, nil
}

func (geminiProtocol) response(a answer, parts []geminiPart, finish string, usage *geminiUsage) geminiResponse {
	c := geminiCandidate{FinishReason: finish}
	c.Content.Role = "model"
	c.Content.Parts = parts
	if c.Content.Parts == nil {
		c.Content.Parts = []geminiPart{}
	}
	return geminiResponse{Candidates: []geminiCandidate{c}, UsageMetadata: usage, ModelVersion: a.model, ResponseID: a.id}
}

func (p geminiProtocol) writeJSON(w http.ResponseWriter, a answer) error {
	parts, err := p.parts(a)
	if err != nil {
		return err
	}
	u := geminiUsageOf(a.usage)
	body, err := json.Marshal(p.response(a, parts, geminiFinish(a.turn.stopReason()), &u))
	if err != nil {
		return err
	}
	writeJSONBody(w, http.StatusOK, body)
	return nil
}

// writeStream sends one response per text chunk, then one per function
// call (Gemini never splits a call), then an empty one with the finish
// reason and the usage. A write error means the client left.
func (p geminiProtocol) writeStream(w http.ResponseWriter, a answer) error {
	parts, err := p.parts(a)
	if err != nil {
		return err
	}
	var out []geminiResponse
	for _, part := range parts {
		if part.FunctionCall != nil {
			out = append(out, p.response(a, []geminiPart{part}, "", nil))
			continue
		}
		for _, c := range chunks(part.Text) {
			out = append(out, p.response(a, []geminiPart{{Text: c}}, "", nil))
		}
	}
	u := geminiUsageOf(a.usage)
	out = append(out, p.response(a, nil, geminiFinish(a.turn.stopReason()), &u))
	sse := startSSE(w)
	for _, r := range out {
		if err := sse.event("", r); err != nil {
			return nil
		}
	}
	return nil
}

// geminiStatus is the google.rpc status name of an HTTP status.
func geminiStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 405:
		return "UNIMPLEMENTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

func (geminiProtocol) writeError(w http.ResponseWriter, status int, msg, errType, _ string) {
	if errType == "" {
		errType = geminiStatus(status)
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": errType}})
	writeJSONBody(w, status, body)
}
