// Package agent runs a dream's restricted tool loop: one model request per
// turn, every tool call of a turn executed in order, results sent back, until
// the model stops calling tools or a budget runs out.
//
// The loop is isolated on purpose. It starts from its own fresh message list
// (the system prompt and one task message), keeps its own loop-detection
// state, and has no route back into any host conversation, so a dream can
// neither read nor disturb what the user was doing.
//
// Every request extends the previous one unchanged: the same tool list in the
// same order, the same system prompt, and the earlier messages never
// rewritten. Providers cache a prompt by prefix (tools, then system, then
// messages), so this is what lets turns 2..N be read from the cache instead
// of being billed again at full price.
package agent
