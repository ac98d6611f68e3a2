package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/internal/offline"
	"github.com/dreamkit/dream/internal/tools"
	"github.com/dreamkit/dream/llm"
	"github.com/dreamkit/dream/spend"
)

// What one dream is expected to do, in tokens, besides what it reads: the
// model follows the task's four phases (orient: ls and the index; read
// the topic files a few at a time; grep the transcripts narrowly; edit,
// then a summary). The figures are the sizes of those calls and answers
// as the tools print them; bench/estimate.sh compares the estimate they
// make with what a dream run against the fake server reports.
const (
	callTokens       = 15   // one tool call in an answer: its name and a path
	frameTokens      = 15   // the framing of a call and its result in the next request (ids, types)
	readsPerTurn     = 8    // topic files read per turn at most,
	readTurnTokens   = 2000 // and about this much of them (one larger file alone)
	editsPerTurn     = 4    // edits per turn
	maxPlannedEdits  = 12   // edits a part is expected to make at most
	editResultTokens = 25   // "edited FILE" and the like
	editUnitTokens   = 40   // the text one edit of a topic file replaces, and its replacement, each at most: a few lines
	summaryTokens    = 30   // the summary's opening, and 10 more per edit
	greps            = 2    // narrow greps of the transcripts, in the first part only
	grepShare        = 50   // a narrow grep returns about 1/grepShare of the transcripts it searches
	lsEntryTokens    = 6    // "  name.md (123 bytes)" besides the name
	// tokenizeBytes is how much of the memory is run through the
	// tokenizer; past it the rest is counted at the ratio measured so far.
	tokenizeBytes = 4 << 20
)

// memFile is one memory file as the read tool shows it, in tokens.
type memFile struct {
	rel    string
	tokens int64
}

// dreamPlan is what a model dream will send before its first request: the
// fixed prefix (tools and system prompt), the task, the memory's files and
// how they are split into parts.
type dreamPlan struct {
	counter  nanobot.Counter
	fixed    int64 // tools and system prompt, sent first in every request
	task     string
	index    *memFile    // the index, read in every part; nil without one
	parts    [][]memFile // the other files, by part
	listing  int64       // the ls of the memory dir
	grep     int64       // one grep's answer
	leadHits map[string]bool
	maxReq   int64
	maxTurns int // read turns a part may take
	// indexLine is the index's longest line: the one the task's budget
	// (lines under about 150 characters) makes a dream rewrite first.
	indexLine int64
}

// newPlan counts what a dream on memDir will send and splits the memory
// into parts when its reading does not fit half a request under
// maxRequest (0: never split) or the read turns of maxTurns: by directory
// and name (which keeps a topic's siblings together), with the files an
// offline lead pairs kept in one part.
func newPlan(ctx context.Context, memDir, sessionsDir string, sessions int, system, task string, defs []llm.Tool, leads offline.Leads, index string, maxRequest int64, maxTurns int) (*dreamPlan, error) {
	p := &dreamPlan{counter: nanobot.DefaultCounter(), task: task, maxReq: maxRequest, leadHits: map[string]bool{}}
	// A part must also be read within its turns: the orientation, the
	// grep, the edits and the summary take about six of them.
	p.maxTurns = max(maxTurns-6, 1)
	toolsJSON, err := json.Marshal(defs)
	if err != nil {
		return nil, err
	}
	p.fixed = p.count(string(toolsJSON)) + p.count(system)
	files, err := p.readMemory(ctx, memDir)
	if err != nil {
		return nil, err
	}
	var rest []memFile
	for i := range files {
		if files[i].rel == index {
			f := files[i]
			p.index = &f
			if data, err := os.ReadFile(filepath.Join(memDir, filepath.FromSlash(index))); err == nil {
				p.indexLine = p.count(longestLine(data))
			}
			continue
		}
		rest = append(rest, files[i])
	}
	for _, pr := range append(append([]offline.Pair(nil), leads.CrossFileDuplicates...), leads.NearDuplicates...) {
		p.leadHits[pr.A.File], p.leadHits[pr.B.File] = true, true
	}
	for _, s := range leads.DriftSuspects {
		p.leadHits[s.File] = true
	}
	for _, r := range append(append([]offline.Ref(nil), leads.DanglingPointers...), leads.UndatedDates...) {
		p.leadHits[r.File] = true
	}
	p.grep = grepTokens(sessionsDir, sessions)
	p.parts = p.split(rest, leads)
	return p, nil
}

func (p *dreamPlan) count(s string) int64 { return int64(p.counter.Count(s)) }

// readMemory counts each regular file of the memory dir as the read tool
// renders it (line numbers included), and the ls of the dir.
func (p *dreamPlan) readMemory(ctx context.Context, memDir string) ([]memFile, error) {
	var files []memFile
	var counted, countedBytes int64
	err := filepath.WalkDir(memDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if path != memDir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(memDir, path)
		rel = filepath.ToSlash(rel)
		if filepath.Dir(path) == memDir {
			p.listing += p.count(name) + lsEntryTokens
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var n int64
		if countedBytes < tokenizeBytes || countedBytes == 0 {
			n = p.count(numbered(data))
			counted += n
			countedBytes += int64(len(data))
		} else {
			n = int64(float64(len(data)) * float64(counted) / float64(countedBytes))
		}
		files = append(files, memFile{rel: rel, tokens: max(n, 1)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the memory for the estimate: %w", err)
	}
	return files, nil
}

// longestLine is data's longest line.
func longestLine(data []byte) string {
	var best []byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(l) > len(best) {
			best = l
		}
	}
	return string(best)
}

// numbered is data as the read tool shows it: each line after its number.
func numbered(data []byte) string {
	var b strings.Builder
	for i, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		n := strconv.Itoa(i + 1)
		b.WriteString(strings.Repeat(" ", max(0, 6-len(n))) + n + "\t" + line)
	}
	return b.String()
}

// grepTokens is one narrow grep's answer over the sessions most recently
// touched (as many as the session gate counted), bounded by the grep
// tool's own output cap.
func grepTokens(sessionsDir string, sessions int) int64 {
	if sessionsDir == "" || sessions <= 0 {
		return 0
	}
	var sizes []fs.FileInfo
	_ = filepath.WalkDir(sessionsDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".jsonl") {
			if info, err := d.Info(); err == nil {
				sizes = append(sizes, info)
			}
		}
		return nil
	})
	sort.Slice(sizes, func(i, j int) bool { return sizes[i].ModTime().After(sizes[j].ModTime()) })
	var bytes int64
	for i, info := range sizes {
		if i == sessions {
			break
		}
		bytes += info.Size()
	}
	l := tools.DefaultLimits()
	capBytes := int64(l.GrepMaxMatches * l.GrepMaxLineChars)
	return min(bytes/grepShare, capBytes)/4 + 30
}

// split packs the files into parts whose reading fits half a request
// under the cap (the other half is the conversation's growth) and its
// turns: files in directory and name order, with the files an offline
// lead pairs joined into one group, split only when it alone is too big.
func (p *dreamPlan) split(files []memFile, leads offline.Leads) [][]memFile {
	var total int64
	for _, f := range files {
		total += f.tokens
	}
	budget := p.maxReq/2 - p.fixed - p.count(p.task) - p.indexTokens() - p.listing - 2*p.grep
	if p.maxReq <= 0 || budget <= 0 || total <= budget && len(readBatches(files)) <= p.maxTurns {
		return [][]memFile{files}
	}
	// Union the files each lead pairs.
	parent := map[string]string{}
	var find func(string) string
	find = func(s string) string {
		if q, ok := parent[s]; ok && q != s {
			r := find(q)
			parent[s] = r
			return r
		}
		return s
	}
	for _, pr := range append(append([]offline.Pair(nil), leads.CrossFileDuplicates...), leads.NearDuplicates...) {
		a, b := find(pr.A.File), find(pr.B.File)
		if a != b {
			parent[b] = a
		}
	}
	sort.Slice(files, func(i, j int) bool {
		di, dj := filepath.Dir(files[i].rel), filepath.Dir(files[j].rel)
		if di != dj {
			return di < dj
		}
		return files[i].rel < files[j].rel
	})
	groups := map[string][]memFile{}
	var order []string
	for _, f := range files {
		r := find(f.rel)
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], f)
	}
	var parts [][]memFile
	var cur []memFile
	var size int64
	for _, r := range order {
		for _, f := range groups[r] {
			over := size+f.tokens > budget
			// A group stays whole while it overflows by half at most.
			full := len(readBatches(append(cur[:len(cur):len(cur)], f))) > p.maxTurns
			if len(cur) > 0 && (over && (!sameGroup(cur, f, find) || size+f.tokens > budget*3/2) || full) {
				parts = append(parts, cur)
				cur, size = nil, 0
			}
			cur = append(cur, f)
			size += f.tokens
		}
	}
	if len(cur) > 0 {
		parts = append(parts, cur)
	}
	return parts
}

// sameGroup says f belongs with the last file of cur: a group is packed
// whole unless it alone exceeds a part.
func sameGroup(cur []memFile, f memFile, find func(string) string) bool {
	return find(cur[len(cur)-1].rel) == find(f.rel)
}

func (p *dreamPlan) indexTokens() int64 {
	if p.index == nil {
		return 0
	}
	return p.index.tokens
}

// partTask is part k's task: the dream's task, and which files are this
// part's.
func (p *dreamPlan) partTask(k int) string {
	if len(p.parts) < 2 {
		return p.task
	}
	var b strings.Builder
	b.WriteString(p.task)
	fmt.Fprintf(&b, "\n\n## This dream is in %d parts: this is part %d\n\n", len(p.parts), k+1)
	b.WriteString("The memory is too large to read in one pass, so each part consolidates some of its files. " +
		"In this part, read and consolidate only the files below (read others only to check a lead), and fix their lines in the index; " +
		"the other parts do the rest, one after the other, on the same memory.\n\n")
	for _, f := range p.parts[k] {
		b.WriteString("- " + f.rel + "\n")
	}
	return b.String()
}

// estimate plays each part's planned requests (spend.Simulate) with at
// most maxTurns requests each; writes says the provider writes what is
// new to its prompt cache (Anthropic) rather than taking it as input.
func (p *dreamPlan) estimate(maxTurns int, writes bool) (u llm.Usage, requests int, largest int64) {
	for k := range p.parts {
		first := p.fixed + p.count(p.partTask(k))
		turns := p.turns(k)
		last := summaryTokens + 10*p.editsOf(k)
		if len(turns) > maxTurns-1 { // the turn budget ends the part first
			turns, last = turns[:max(maxTurns-1, 0)], callTokens
		}
		var shared int64
		if k > 0 {
			shared = p.fixed
		}
		pu, n, big := spend.Simulate(first, shared, turns, last, writes)
		u.Add(pu)
		requests += n
		largest = max(largest, big)
	}
	return u, requests, largest
}

// turns is part k's requests after its first: orient, read, grep, edit.
func (p *dreamPlan) turns(k int) []spend.Turn {
	files := p.parts[k]
	t := []spend.Turn{{Output: 2 * callTokens, Results: 2*frameTokens + p.listing + p.indexTokens()}}
	for _, batch := range readBatches(files) {
		var read int64
		for _, f := range batch {
			read += f.tokens
		}
		t = append(t, spend.Turn{Output: int64(len(batch)) * callTokens, Results: int64(len(batch))*frameTokens + read})
	}
	if k == 0 && p.grep > 0 {
		t = append(t, spend.Turn{Output: greps * callTokens, Results: greps * (frameTokens + p.grep)})
	}
	// The index's edit is one of its lines; a topic file's, a few.
	edits := p.editsOf(k)
	var out int64
	if p.index != nil {
		out = callTokens + 2*max(p.indexLine, 10)
	} else {
		out = callTokens + 2*p.editUnit(k)
	}
	out += (edits - 1) * (callTokens + 2*p.editUnit(k))
	for done := int64(0); done < edits; done += editsPerTurn {
		n := min(editsPerTurn, edits-done)
		t = append(t, spend.Turn{Output: out * n / edits, Results: n * (frameTokens + editResultTokens)})
	}
	return t
}

// readBatches groups files as the model is expected to read them: up to
// readsPerTurn a turn, and about readTurnTokens of them.
func readBatches(files []memFile) [][]memFile {
	var out [][]memFile
	var cur []memFile
	var size int64
	for _, f := range files {
		if len(cur) > 0 && (len(cur) == readsPerTurn || size+f.tokens > readTurnTokens) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, f)
		size += f.tokens
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// editsOf is how many edits part k is expected to make: the index, and
// each of its files an offline lead names.
func (p *dreamPlan) editsOf(k int) int64 {
	n := int64(1)
	for _, f := range p.parts[k] {
		if p.leadHits[f.rel] {
			n++
		}
	}
	return min(n, maxPlannedEdits)
}

// editUnit is the size of what one edit replaces: a file's worth for a
// small memory, a paragraph for a larger one.
func (p *dreamPlan) editUnit(k int) int64 {
	files := p.parts[k]
	if len(files) == 0 {
		return min(p.indexTokens(), editUnitTokens)
	}
	var total int64
	for _, f := range files {
		total += f.tokens
	}
	return min(total/int64(len(files)), editUnitTokens)
}

// basis says what the estimate counted.
func (p *dreamPlan) basis(maxTurns int) string {
	n := 0
	var read int64
	for _, part := range p.parts {
		n += len(part)
		for _, f := range part {
			read += f.tokens
		}
	}
	if p.index != nil {
		n++
		read += p.index.tokens * int64(len(p.parts))
	}
	return fmt.Sprintf("%s: tools and system prompt %s tokens, %d memory file(s) read (%s tokens), transcripts grepped (%s tokens a grep), at most %d requests a part",
		p.counter.Name(), spend.Count(p.fixed), n, spend.Count(read), spend.Count(p.grep), maxTurns)
}
