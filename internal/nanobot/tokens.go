package nanobot

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter counts the tokens of a text.
type Counter interface {
	Count(text string) int
	Name() string
}

// Tokenizer is the cl100k_base BPE tokenizer nanobot counts with
// (helpers.py, _get_token_encoding). Its ranks are compiled into the
// tiktoken-go-loader module: nothing is fetched at run time.
type Tokenizer struct{ enc *tiktoken.Tiktoken }

var (
	tokOnce sync.Once
	tok     *Tokenizer
	tokErr  error
)

// NewTokenizer returns the shared cl100k_base tokenizer (loading the ranks
// once per process: tiktoken-go keeps its loader in a package variable).
func NewTokenizer() (*Tokenizer, error) {
	tokOnce.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		enc, err := tiktoken.GetEncoding("cl100k_base")
		if err != nil {
			tokErr = fmt.Errorf("compact: loading cl100k_base: %w", err)
			return
		}
		tok = &Tokenizer{enc: enc}
	})
	return tok, tokErr
}

// Count implements Counter.
func (t *Tokenizer) Count(text string) int { return len(t.enc.Encode(text, nil, nil)) }

// Name implements Counter.
func (t *Tokenizer) Name() string { return "tiktoken:cl100k_base" }

// Estimator is the fallback when the tokenizer cannot be loaded: a linear
// model over runs and classes of characters, calibrated against
// cl100k_base on the project's memory files (testdata/eval/*/memory, the
// demo memory) and measured on its transcripts, which it was not fitted on
// (TestEstimatorErrorOnProjectTranscripts prints the error). nanobot's own
// fallback, one token per UTF-8 byte, overestimates English about fourfold.
type Estimator struct {
	// Tokens per occurrence of each feature (see features).
	Coef [numFeatures]float64
}

const numFeatures = 7

// DefaultEstimator holds the calibrated coefficients (see
// TestCalibrateEstimator).
var DefaultEstimator = Estimator{Coef: [numFeatures]float64{0.4254, 0.0367, 1.4536, 0.4274, 0.7347, 1.0412, 1.7027}}

// Count implements Counter.
func (e Estimator) Count(text string) int {
	f := features(text)
	var n float64
	for i, c := range e.Coef {
		n += c * f[i]
	}
	if n > 0 && n < 1 {
		return 1
	}
	return int(n + 0.5)
}

// Name implements Counter.
func (e Estimator) Name() string { return "estimator" }

// features counts, in order: runs of ASCII letters (words), ASCII
// letters, groups of up to three digits (as cl100k_base cuts numbers),
// whitespace, ASCII punctuation, CJK characters and punctuation, other
// characters. BPE merges frequent words into one token and splits rare
// ones, so the words and their letters are both inputs.
func features(text string) [numFeatures]float64 {
	var f [numFeatures]float64
	prev, digits := -1, 0
	for _, r := range text {
		class := 6
		switch {
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			class = 1
			if prev != 1 {
				f[0]++
			}
		case r >= '0' && r <= '9':
			class = 2
			if prev != 2 {
				digits = 0
			}
			if digits%3 == 0 {
				f[2]++
			}
			digits++
			prev = class
			continue
		case unicode.IsSpace(r):
			class = 3
		case r < 128:
			class = 4
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r >= 0x3000 && r <= 0x303f || r >= 0xff00 && r <= 0xffef:
			class = 5
		}
		f[class]++
		prev = class
	}
	return f
}

// DefaultCounter is the tokenizer, or the estimator if it cannot load.
func DefaultCounter() Counter {
	if t, err := NewTokenizer(); err == nil {
		return t
	}
	return DefaultEstimator
}

// MessageTokens is nanobot's estimate_message_tokens: the text, name,
// tool_call_id, tool_calls and reasoning_content joined by newlines,
// counted, plus 4 for the message frame; at least 4.
func MessageTokens(c Counter, m Message) int {
	var parts []string
	if t := m.Text(); t != "" {
		parts = append(parts, t)
	}
	var extra struct {
		Name             string          `json:"name"`
		ToolCallID       string          `json:"tool_call_id"`
		ToolCalls        json.RawMessage `json:"tool_calls"`
		ReasoningContent string          `json:"reasoning_content"`
	}
	_ = json.Unmarshal(m.Raw, &extra)
	for _, s := range []string{extra.Name, extra.ToolCallID} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(extra.ToolCalls) > 0 && string(extra.ToolCalls) != "null" && string(extra.ToolCalls) != "[]" {
		parts = append(parts, string(extra.ToolCalls))
	}
	if extra.ReasoningContent != "" {
		parts = append(parts, extra.ReasoningContent)
	}
	payload := strings.Join(parts, "\n")
	if payload == "" {
		return 4
	}
	return max(4, c.Count(payload)+4)
}
