// Command genjsonl writes synthetic Claude Code–like JSONL transcripts for
// the grep benchmark: session files of records between 200 and 3000 bytes,
// with a rare literal token and a rarer regular-expression target planted at
// known rates, so that a grep has something to find and a lot to skip.
//
// Usage:
//
//	genjsonl -dir DIR [-size 1073741824] [-files 8] [-seed 1]
//
// It is deterministic for a given seed. When DIR already holds a complete set
// for the same parameters (a marker file records them), it does nothing, so a
// benchmark can reuse a generated gigabyte across runs.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Planted targets. The benchmark script greps for these.
const (
	// RareLiteral appears in about one record in 50 000.
	RareLiteral = "ZEBRA-7741-QUOKKA"
	// RegexTarget is what `ECONNREFUSED [0-9.]+:[0-9]{4}` finds: a
	// connection error with an address, in about one record in 5 000.
	regexHitFormat = "connect ECONNREFUSED 127.0.0.%d:%d"
)

var words = []string{
	"the", "function", "returns", "an", "error", "when", "file", "is", "missing", "test",
	"build", "passes", "now", "let", "me", "check", "config", "module", "import", "package",
	"handler", "request", "response", "status", "update", "memory", "index", "session", "token", "budget",
	"refactor", "parser", "lexer", "cache", "commit", "branch", "merge", "rebase", "deploy", "release",
	"database", "migration", "schema", "query", "timeout", "retry", "backoff", "context", "cancel", "goroutine",
	"channel", "mutex", "lock", "unlock", "race", "detector", "benchmark", "profile", "allocation", "heap",
	"I'll", "run", "tests", "again", "fixed", "the", "issue", "in", "line", "42",
	"ECONNRESET", "connection", "refused", "port", "8080", "localhost", "docker", "compose", "yaml", "json",
}

func main() {
	dir := flag.String("dir", "", "output directory (created if missing)")
	size := flag.Int64("size", 1<<30, "total bytes to write")
	files := flag.Int("files", 8, "number of session files")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*dir, *size, *files, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "genjsonl:", err)
		os.Exit(1)
	}
}

func run(dir string, size int64, files int, seed uint64) error {
	if dir == "" || size <= 0 || files <= 0 {
		return errors.New("need -dir, and -size and -files above zero")
	}
	marker := filepath.Join(dir, ".genjsonl-"+strconv.FormatInt(size, 10)+"-"+strconv.Itoa(files)+"-"+strconv.FormatUint(seed, 10))
	if _, err := os.Stat(marker); err == nil {
		fmt.Println("reusing", dir)
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var literals, regexHits int
	per := size / int64(files)
	for i := range files {
		name := filepath.Join(dir, fmt.Sprintf("%08x-4e1f-4a8e-9c3d-%012x.jsonl", rng.Uint32(), i))
		l, r, err := writeFile(name, per, rng)
		if err != nil {
			return err
		}
		literals += l
		regexHits += r
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return fmt.Errorf("write marker: %w", err)
	}
	fmt.Printf("wrote %d bytes in %d files to %s in %.1fs (%d rare literals, %d regex targets)\n",
		size, files, dir, time.Since(start).Seconds(), literals, regexHits)
	return nil
}

// writeFile writes records until the file reaches size bytes.
func writeFile(name string, size int64, rng *rand.Rand) (literals, regexHits int, err error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, 0, fmt.Errorf("create %s: %w", name, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	var line []byte
	ts := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for n := 0; written < size; n++ {
		ts = ts.Add(time.Duration(rng.IntN(30000)) * time.Millisecond)
		line = record(line[:0], rng, ts, n)
		switch {
		case rng.IntN(50000) == 0:
			line = plant(line, RareLiteral)
			literals++
		case rng.IntN(5000) == 0:
			line = plant(line, fmt.Sprintf(regexHitFormat, rng.IntN(255), 1000+rng.IntN(9000)))
			regexHits++
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			f.Close()
			return 0, 0, fmt.Errorf("write %s: %w", name, err)
		}
		written += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, 0, fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return 0, 0, fmt.Errorf("close %s: %w", name, err)
	}
	return literals, regexHits, nil
}

// plant puts s at the end of the record's text (before the last closing
// quote), where a real error message or token would appear.
func plant(line []byte, s string) []byte {
	i := bytes.LastIndexByte(line, '"')
	out := append([]byte(nil), line[:i]...)
	out = append(out, ' ')
	out = append(out, s...)
	return append(out, line[i:]...)
}

// record appends one transcript record of 200 to 3000 bytes.
func record(b []byte, rng *rand.Rand, ts time.Time, n int) []byte {
	if rng.IntN(10) == 0 {
		return summary(b, rng)
	}
	role := "assistant"
	if n%2 == 0 {
		role = "user"
	}
	b = append(b, `{"parentUuid":"`...)
	b = uuid(b, rng)
	b = append(b, `","isSidechain":false,"userType":"external","cwd":"/home/dev/src/project","sessionId":"`...)
	b = uuid(b, rng)
	b = append(b, `","version":"1.0.`...)
	b = strconv.AppendInt(b, int64(rng.IntN(90)), 10)
	b = append(b, `","gitBranch":"main","type":"`...)
	b = append(b, role...)
	b = append(b, `","uuid":"`...)
	b = uuid(b, rng)
	b = append(b, `","timestamp":"`...)
	b = ts.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","message":{"role":"`...)
	b = append(b, role...)
	if role == "assistant" {
		b = append(b, `","model":"claude-sonnet-4-5","usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(rng.IntN(5000)), 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(rng.IntN(2000)), 10)
		b = append(b, `}`...)
	} else {
		b = append(b, `"`...)
	}
	b = append(b, `,"content":[{"type":"text","text":"`...)
	// Text length makes the record 200..3000 bytes, skewed short like real
	// transcripts, with an occasional long tool output.
	target := 200 + rng.IntN(600)
	if rng.IntN(8) == 0 {
		target = 800 + rng.IntN(2200)
	}
	for len(b) < target-6 {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, ' ')
	}
	return append(b, `"}]}}`...)
}

// summary appends a short summary record, as Claude Code writes when it
// compacts a conversation.
func summary(b []byte, rng *rand.Rand) []byte {
	b = append(b, `{"type":"summary","leafUuid":"`...)
	b = uuid(b, rng)
	b = append(b, `","summary":"`...)
	target := len(b) + 130 + rng.IntN(100)
	for len(b) < target {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, ' ')
	}
	return append(b, `"}`...)
}

// uuid appends a random version-4-looking UUID.
func uuid(b []byte, rng *rand.Rand) []byte {
	const hex = "0123456789abcdef"
	for i := range 36 {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			b = append(b, '-')
			continue
		}
		b = append(b, hex[rng.IntN(16)])
	}
	return b
}
