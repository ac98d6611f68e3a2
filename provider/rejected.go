package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/llm"
)

// rejectedFile, in the state dir, records the last model an endpoint
// rejected, so that a background dream does not ask it again every
// throttle window: it is read by ChooseWith until the provider, model or
// base URL changes.
const rejectedFile = "model-rejected.json"

// Rejection is a model an endpoint said it does not serve.
type Rejection struct {
	Provider string    `json:"provider"`
	BaseURL  string    `json:"base_url,omitempty"`
	Model    string    `json:"model"`
	At       time.Time `json:"at"`
	Message  string    `json:"message"`
}

func (r *Rejection) String() string {
	where := r.Provider
	if r.BaseURL != "" {
		where += " at " + r.BaseURL
	}
	return fmt.Sprintf("%s rejected model %q on %s (%s): dream stays offline with it until the provider, model or base_url setting changes, or %s in the state dir is removed",
		where, r.Model, r.At.UTC().Format(time.RFC3339), r.Message, rejectedFile)
}

// rejected reads the record and returns it when it is about this
// provider, base URL and model.
func rejected(stateDir, name, base, model string) *Rejection {
	if stateDir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(stateDir, rejectedFile))
	if err != nil {
		return nil
	}
	var r Rejection
	if json.Unmarshal(b, &r) != nil || r.Provider != name || r.BaseURL != base || r.Model != model {
		return nil
	}
	return &r
}

// IsModelRejection reports whether err is an endpoint saying it does not
// serve the model: a 404, or a 400 whose message is about the model (a
// gateway that serves other models).
func IsModelRejection(err error) bool {
	var api *llm.APIError
	if !errors.As(err, &api) {
		return false
	}
	msg := strings.ToLower(api.Message)
	switch api.Status {
	case 404:
		return true
	case 400:
		return strings.Contains(msg, "model") && (strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist") ||
			strings.Contains(msg, "unknown") || strings.Contains(msg, "invalid") || strings.Contains(msg, "not supported"))
	}
	return false
}

// rejectionGuard is the chosen provider, recording a model rejection
// once, in the state dir, when the endpoint answers with one.
type rejectionGuard struct {
	llm.Provider
	stateDir, name, base, model string
}

func (g *rejectionGuard) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	// A long-lived process (the daemon) chose before the rejection was
	// recorded: it does not ask again either.
	if r := rejected(g.stateDir, g.name, g.base, g.model); r != nil {
		return nil, errors.New(r.String())
	}
	resp, err := g.Provider.Complete(ctx, req)
	if err != nil && g.stateDir != "" && IsModelRejection(err) {
		var api *llm.APIError
		errors.As(err, &api)
		r := Rejection{Provider: g.name, BaseURL: g.base, Model: g.model, At: time.Now().UTC(), Message: api.Error()}
		if b, merr := json.Marshal(r); merr == nil {
			_ = fsutil.WriteFileAtomic(filepath.Join(g.stateDir, rejectedFile), append(b, '\n'), 0o600, true)
		}
	}
	return resp, err
}

// ForEstimate is a Choice that can estimate a dream with model on the
// named provider and never sends anything: what `dream init
// --model-dreams` shows before any key is in reach.
func ForEstimate(name, model string) Choice {
	return Choice{Name: name, Model: model, Provider: estimateOnly(name), Why: "estimate only"}
}

type estimateOnly string

func (e estimateOnly) Name() string { return string(e) }

func (e estimateOnly) Complete(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, fmt.Errorf("%s: this provider only estimates; it sends nothing", string(e))
}
