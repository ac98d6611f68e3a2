// Package compact is nanobot's session compaction (its Consolidator and
// AutoCompact, HKUDS/nanobot nanobot/agent/memory.py and
// nanobot/agent/autocompact.py), as a library a Go agent can call: when a
// session's prompt would outgrow the model's context, its oldest turns are
// summarised by the model into the workspace's history.jsonl (the input of
// the next dream) and the session's last_consolidated cursor moves past
// them; a session left idle is archived whole in the background, and its
// summary is carried into the next prompt.
//
// Numbers are nanobot's: budget = context window − max output − 1,024;
// target = ratio × budget (0.5 by default, 0.1–0.95 allowed); at most 5
// rounds; chunks end where a user turn starts; a model answer of
// "(nothing)" archives nothing; a failed, empty, truncated or tool-calling
// answer archives the raw messages instead (16K characters) and stops the
// rounds; summaries are capped at 8K characters; idle sessions expire after
// 15 minutes, scanned at most every 60 seconds; a compacted session keeps
// the last 8 messages (back to a user turn) for replay.
//
// Tokens are counted with the cl100k_base BPE tokenizer, whose ranks ship
// inside the tiktoken-go-loader module (nothing is downloaded at run
// time), as nanobot counts them with tiktoken; Estimator is the calibrated
// fallback.
package compact
