// Package gate holds the pieces of the gate funnel that decide when a dream
// may start. This file set is the session scan: counting the transcripts that
// other sessions have touched since the last consolidation.
//
// The scan is deliberately cheap. It reads directory entries and file
// modification times only, never file contents: parsing JSONL for content
// timestamps would cost a full read per transcript, and the session gate is a
// skip-gate, not an accounting system. Undercounting is the safe direction,
// because a low count only postpones a dream.
package gate
