// Package nanobot is nanobot's flow (HKUDS/nanobot) as dream runs it: the
// workspace, its history log and cursors, the history dream that consumes
// the log, the compaction that fills it from sessions, and nanobot's own
// git store. Formats, numbers and rules follow nanobot's source, cited where
// they are used, so that dream and nanobot read and write the same files.
//
// # The workspace
//
// A nanobot workspace holds SOUL.md, USER.md and memory/MEMORY.md (the
// content files, ContentFiles, embedded in the dream prompt and described
// in commit messages), skills/, and memory/history.jsonl with its cursor
// files; nanobot's session files live in a sessions directory beside it. A
// dream may write the content files and anything under skills/ (Writable);
// the history and its cursors are kept by nanobot.
//
// # The history log and its cursors
//
// memory/history.jsonl is nanobot's append-only log of conversation
// summaries (Log, Entry), with two cursor files: .cursor (the last cursor
// handed out) and .dream_cursor (the last entry a dream has consumed). The
// record format, the caps, the cleaning and the trimming rule follow
// nanobot's MemoryStore (nanobot/agent/memory.py: append_history,
// _next_cursor, read_unprocessed_history, compact_history,
// read_recent_history_for_prompt). Where nanobot serialises appends with a
// thread lock, Log takes an flock on the log itself, so that goroutines
// and processes (several dream invocations, a Go agent) allocate unique,
// gap-free cursors. Reads after a cursor cost O(new entries) through a
// small offset index kept beside the log (history.jsonl.idx), validated on
// every use and rebuilt when it is missing or stale: the log stays the only
// source of truth. Log.Compact trims the log to DefaultMaxEntries after a
// landed dream, never past the dream cursor.
//
// # The history dream
//
// RunDream is nanobot's Dream: it consumes the unprocessed entries of the
// log, DreamBatchSize at a time, into the content files and skills/, with a
// model whose writes are confined to them. The prompt, batch size,
// per-entry and per-file caps and the completion rule follow nanobot's
// MemoryStore (build_dream_prompt, _render_current_memory_files,
// build_dream_tools, dream_run_completed). It works on a directory it is
// given (the journal's staging copy of the workspace), so that everything
// it writes, the memory files and the dream cursor alike, lands together
// when the dream commits, or not at all.
//
// # Compaction
//
// The Consolidator is nanobot's session compaction (its Consolidator and
// AutoCompact, nanobot/agent/memory.py and nanobot/agent/autocompact.py):
// when a session's prompt would outgrow the model's context, its oldest
// turns are summarised by the model into history.jsonl (the input of the
// next dream) and the session's last_consolidated cursor moves past them;
// a session left idle is archived whole in the background (IdleCompactor,
// CompactFile), and its summary is carried into the next prompt. The
// session files are read and written under nanobot's own sessions lock.
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
//
// # The git store
//
// A workspace with a .git directory has nanobot's own git store
// (HasGitStore). CommitGitStore records a landed dream there, with a
// message built from the real diff of the content files (nanobot's
// nanobot/utils/gitstore.py: summarize_working_tree, auto_commit), so that
// nanobot's /dream-log and /dream-restore see it.
package nanobot
