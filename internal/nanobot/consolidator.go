package nanobot

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/llm"
)

// nanobot's numbers (memory.py, Consolidator; config/schema.py;
// session/manager.py, MIN_COMPACTED_REPLAY_MESSAGES).
const (
	SafetyBuffer         = 1024
	MaxRounds            = 5
	ReplayWindow         = 8
	DefaultContextWindow = 200_000
	DefaultMaxOutput     = 8192
	DefaultRatio         = 0.5
	MinRatio, MaxRatio   = 0.1, 0.95
	// Nothing is the model's answer for a chunk with nothing to keep.
	Nothing = "(nothing)"
)

//go:embed templates/archive.md
var archiveTemplate string

// Consolidator summarises the oldest turns of sessions into the history.
type Consolidator struct {
	// Provider summarises; nil archives every chunk raw.
	Provider llm.Provider
	Model    string
	// ContextWindow and MaxOutput are the model's; nanobot's defaults when
	// zero.
	ContextWindow, MaxOutput int
	// Ratio is the target's share of the budget; DefaultRatio when zero.
	Ratio float64
	// PromptOverhead is what the host's prompt adds around the replayed
	// messages (system prompt, tools), in tokens.
	PromptOverhead int
	// Counter counts tokens; DefaultCounter() when nil.
	Counter Counter
	// Archive receives the summaries (required).
	Archive Archive
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// ErrCompactConfig: a Consolidator setting is out of range.
var ErrCompactConfig = errors.New("compact: invalid configuration")

func (c *Consolidator) defaults() (*Consolidator, error) {
	cc := *c
	if cc.ContextWindow == 0 {
		cc.ContextWindow = DefaultContextWindow
	}
	if cc.MaxOutput == 0 {
		cc.MaxOutput = DefaultMaxOutput
	}
	if cc.Ratio == 0 {
		cc.Ratio = DefaultRatio
	}
	if cc.Counter == nil {
		cc.Counter = DefaultCounter()
	}
	if cc.Now == nil {
		cc.Now = time.Now
	}
	switch {
	case cc.Archive == nil:
		return nil, fmt.Errorf("%w: no Archive", ErrCompactConfig)
	case cc.Ratio < MinRatio || cc.Ratio > MaxRatio:
		return nil, fmt.Errorf("%w: ratio %g outside %g–%g", ErrCompactConfig, cc.Ratio, MinRatio, MaxRatio)
	case cc.ContextWindow < 0 || cc.MaxOutput < 0 || cc.PromptOverhead < 0:
		return nil, fmt.Errorf("%w: negative size", ErrCompactConfig)
	}
	return &cc, nil
}

// Budget is the input budget: context window − max output − SafetyBuffer.
func (c *Consolidator) Budget() int {
	cc, err := c.defaults()
	if err != nil {
		return 0
	}
	return cc.budget()
}

func (c *Consolidator) budget() int { return c.ContextWindow - c.MaxOutput - SafetyBuffer }

// Target is what compaction shrinks a prompt to: Ratio × Budget.
func (c *Consolidator) target() int { return int(float64(c.budget()) * c.Ratio) }

// SessionReport says what a compaction did.
type SessionReport struct {
	Rounds           int    `json:"rounds"`
	Archived         int    `json:"messages_archived"`
	Summaries        int    `json:"summaries"`
	RawArchives      int    `json:"raw_archives"`
	NothingAnswers   int    `json:"nothing_answers"`
	TokensBefore     int    `json:"tokens_before"`
	TokensAfter      int    `json:"tokens_after"`
	Budget           int    `json:"budget"`
	Target           int    `json:"target"`
	LastConsolidated int    `json:"last_consolidated"`
	Summary          string `json:"summary,omitempty"`
	Stopped          string `json:"stopped"`
	Counter          string `json:"counter"`
}

// SaveFunc persists a session after its cursor moved; it is called only
// after the archive for the moved-over messages is durable.
type SaveFunc func(*Session) error

// Consolidate is nanobot's maybe_consolidate_by_tokens: when the prompt a
// session would replay reaches the budget, archive its oldest chunks, each
// ending where a user turn starts, until it fits the target, for at most
// MaxRounds rounds; a degraded archive (raw) stops the rounds. After each
// chunk, the cursor moves and the session is saved.
func (c *Consolidator) Consolidate(ctx context.Context, s *Session, save SaveFunc) (SessionReport, error) {
	cc, err := c.defaults()
	if err != nil {
		return SessionReport{}, err
	}
	rep := SessionReport{Budget: cc.budget(), Target: cc.target(), Counter: cc.Counter.Name(), LastConsolidated: s.LastConsolidated}
	est := cc.EstimatePrompt(s)
	rep.TokensBefore, rep.TokensAfter = est, est
	if len(s.Messages) == 0 || est < rep.Budget {
		rep.Stopped = "within budget"
		return rep, nil
	}
	rep.Stopped = "max rounds"
	for rep.Rounds < MaxRounds {
		if est <= rep.Target {
			rep.Stopped = "reached target"
			break
		}
		end, ok := cc.pickBoundary(s, max(1, est-rep.Target))
		if !ok {
			rep.Stopped = "no user-turn boundary"
			break
		}
		rep.Rounds++
		summary, degraded, err := cc.archive(ctx, s, s.Messages[s.LastConsolidated:end])
		if err != nil {
			return rep, err
		}
		cc.account(&rep, summary, degraded, end-s.LastConsolidated)
		s.LastConsolidated = end
		s.providerState = nil // the provider's view of the old prefix is gone
		if summary != "" && summary != Nothing {
			rep.Summary = summary
		}
		if err := save(s); err != nil {
			return rep, fmt.Errorf("compact: saving the session: %w", err)
		}
		rep.LastConsolidated = end
		if degraded {
			rep.Stopped = "raw archive (the model failed)"
			break
		}
		est = cc.EstimatePrompt(s)
		rep.TokensAfter = est
	}
	if rep.Summary != "" {
		s.setSummary(rep.Summary, s.UpdatedAt)
		if err := save(s); err != nil {
			return rep, fmt.Errorf("compact: saving the session: %w", err)
		}
	}
	rep.TokensAfter = cc.EstimatePrompt(s)
	return rep, nil
}

// CompactIdle is nanobot's compact_idle_session: everything not yet
// archived is archived in one chunk, the summary is kept in the session's
// metadata for the next prompt, and the recent messages stay replayable.
func (c *Consolidator) CompactIdle(ctx context.Context, s *Session, save SaveFunc) (SessionReport, error) {
	cc, err := c.defaults()
	if err != nil {
		return SessionReport{}, err
	}
	rep := SessionReport{Budget: cc.budget(), Target: cc.target(), Counter: cc.Counter.Name(), LastConsolidated: s.LastConsolidated}
	rep.TokensBefore = cc.EstimatePrompt(s)
	end := len(s.Messages)
	if s.LastConsolidated >= end {
		rep.Stopped = "nothing to archive"
		rep.TokensAfter = rep.TokensBefore
		return rep, nil
	}
	rep.Rounds = 1
	summary, degraded, err := cc.archive(ctx, s, s.Messages[s.LastConsolidated:end])
	if err != nil {
		return rep, err
	}
	cc.account(&rep, summary, degraded, end-s.LastConsolidated)
	if summary != "" && summary != Nothing {
		s.setSummary(summary, s.UpdatedAt)
		rep.Summary = summary
	}
	s.LastConsolidated = end
	s.providerState = nil
	if err := save(s); err != nil {
		return rep, fmt.Errorf("compact: saving the session: %w", err)
	}
	rep.LastConsolidated = end
	rep.TokensAfter = cc.EstimatePrompt(s)
	rep.Stopped = "archived"
	if degraded {
		rep.Stopped = "raw archive (the model failed)"
	}
	return rep, nil
}

func (c *Consolidator) account(rep *SessionReport, summary string, degraded bool, n int) {
	rep.Archived += n
	switch {
	case degraded:
		rep.RawArchives++
	case summary == Nothing:
		rep.NothingAnswers++
	default:
		rep.Summaries++
	}
}

// pickBoundary is nanobot's pick_consolidation_boundary: walking from the
// cursor, the first user-turn start (after the first message) by which at
// least toRemove tokens are behind, else the last user-turn start.
func (c *Consolidator) pickBoundary(s *Session, toRemove int) (int, bool) {
	start := s.LastConsolidated
	if start >= len(s.Messages) || toRemove <= 0 {
		return 0, false
	}
	removed, last, found := 0, 0, false
	for i := start; i < len(s.Messages); i++ {
		if i > start && s.Messages[i].Role == "user" {
			last, found = i, true
			if removed >= toRemove {
				return i, true
			}
		}
		removed += MessageTokens(c.Counter, s.Messages[i])
	}
	return last, found
}

// archive summarises msgs into the history. degraded is true when the raw
// messages were archived instead (no provider, a provider error, a
// truncated, empty or tool-calling answer, or a chunk over the budget). err
// is only for a history that could not be written: then nothing moved.
func (c *Consolidator) archive(ctx context.Context, s *Session, msgs []Message) (summary string, degraded bool, err error) {
	formatted := FormatMessages(msgs)
	raw := func() (string, bool, error) {
		text := fmt.Sprintf("[RAW] %d messages\n%s", len(msgs), Truncate(formatted, RawArchiveMaxChars))
		if _, err := c.Archive.Append(ctx, text, 0, s.Key); err != nil {
			return "", true, fmt.Errorf("compact: archiving raw messages: %w", err)
		}
		return "", true, nil
	}
	if c.Provider == nil || c.Counter.Count(formatted)+SafetyBuffer > c.budget() {
		return raw()
	}
	system := strings.ReplaceAll(archiveTemplate, "{{ARCHIVE_COUNT}}", strconv.Itoa(len(msgs)))
	if sum, ok := s.LastSummary(); ok {
		system += "\n\n" + PromptSummary(sum)
	}
	resp, err := c.Provider.Complete(ctx, &llm.Request{
		Model:     c.Model,
		System:    system,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: formatted}}}},
		MaxTokens: c.MaxOutput,
	})
	if err != nil || resp == nil || resp.StopReason == llm.StopMaxTokens || len(resp.ToolCalls()) > 0 || strings.TrimSpace(resp.Text()) == "" {
		if ctx.Err() != nil {
			return "", false, context.Cause(ctx) // cancelled: archive nothing, move nothing
		}
		return raw()
	}
	text := strings.TrimSpace(resp.Text())
	if text == Nothing {
		return Nothing, false, nil
	}
	if _, err := c.Archive.Append(ctx, text, SummaryMaxChars, s.Key); err != nil {
		return "", false, fmt.Errorf("compact: archiving the summary: %w", err)
	}
	return text, false, nil
}

// FormatMessages is nanobot's _format_messages: one line per message with
// content, "[YYYY-MM-DD HH:MM] ROLE [tools: a, b]: content".
func FormatMessages(msgs []Message) string {
	var lines []string
	for _, m := range msgs {
		text := m.Text()
		if text == "" {
			continue
		}
		tools := ""
		if len(m.ToolsUsed) > 0 {
			tools = " [tools: " + strings.Join(m.ToolsUsed, ", ") + "]"
		}
		ts := m.Timestamp
		if ts == "" {
			ts = "?"
		}
		if len(ts) > 16 {
			ts = ts[:16]
		}
		role := m.Role
		if role == "" {
			role = "unknown"
		}
		lines = append(lines, fmt.Sprintf("[%s] %s%s: %s", ts, strings.ToUpper(role), tools, text))
	}
	return strings.Join(lines, "\n")
}

// ReplayStart is where the next prompt's history begins (nanobot's
// Session.get_history): at the archive cursor, but never later than the
// last ReplayWindow messages (extended back to a user turn), and then on
// the first user message, or the proactive delivery just before it.
func ReplayStart(s *Session) int {
	start := s.LastConsolidated
	if start > 0 {
		start = min(start, recentStart(s.Messages, ReplayWindow))
	}
	for i := start; i < len(s.Messages); i++ {
		if s.Messages[i].Role == "user" {
			if i > start && s.Messages[i-1].ChannelDelivery {
				return i - 1
			}
			return i
		}
	}
	return start
}

// recentStart is nanobot's recent_message_start_index with extend_to_user.
func recentStart(msgs []Message, n int) int {
	start := max(0, len(msgs)-n)
	if len(msgs) <= n {
		return start
	}
	for i := start; i < len(msgs); i++ {
		if msgs[i].Role == "user" {
			return start
		}
	}
	for i := start - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			if i > 0 && msgs[i-1].ChannelDelivery {
				return i - 1
			}
			return i
		}
	}
	return start
}

// ReplayMessages are the messages the next prompt replays (slash commands
// left out).
func ReplayMessages(s *Session) []Message {
	var out []Message
	for _, m := range s.Messages[ReplayStart(s):] {
		if !m.Command {
			out = append(out, m)
		}
	}
	return out
}

// PromptSummary is the archived summary as nanobot puts it into the next
// prompt (agent/context.py).
func PromptSummary(sum Summary) string {
	return "[Archived Context Summary]\n\nPrevious conversation summary (last active " + sum.LastActive + "):\n" + sum.Text
}

// EstimatePrompt counts what the session's next prompt carries: the
// replayed messages, the archived summary and the host's overhead.
func (c *Consolidator) EstimatePrompt(s *Session) int {
	cc, err := c.defaults()
	if err != nil {
		return 0
	}
	n := cc.PromptOverhead
	for _, m := range ReplayMessages(s) {
		n += MessageTokens(cc.Counter, m)
	}
	if sum, ok := s.LastSummary(); ok {
		n += cc.Counter.Count(PromptSummary(sum))
	}
	return n
}
