// Command grepbench runs the dream grep tool once, exactly as the agent loop
// would (the real tool from internal/tools, default head_limit, so it must
// still count every match), and prints one line of figures for
// bench/grep.sh:
//
//	matches=N shown=S elapsed_s=T vmhwm_kb=K
//
// matches is the total the tool reported (all matching lines), which the
// script checks against ripgrep's count; vmhwm_kb is this process's peak
// resident set size read from /proc/self/status (-1 where unavailable).
//
// Usage: grepbench -path DIR -pattern PATTERN [-mode content]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/tools"
)

func main() {
	path := flag.String("path", "", "directory or file to grep (the sessions dir)")
	pattern := flag.String("pattern", "", "grep pattern")
	mode := flag.String("mode", "content", "output_mode")
	show := flag.Bool("show", false, "print the tool's output to stderr")
	flag.Parse()
	if err := run(*path, *pattern, *mode, *show); err != nil {
		fmt.Fprintln(os.Stderr, "grepbench:", err)
		os.Exit(1)
	}
}

func run(path, pattern, mode string, show bool) error {
	if path == "" || pattern == "" {
		return errors.New("need -path and -pattern")
	}
	mem, err := os.MkdirTemp("", "grepbench-memory-")
	if err != nil {
		return fmt.Errorf("memory dir: %w", err)
	}
	defer os.RemoveAll(mem)
	set, err := tools.NewSet(tools.Env{MemoryDir: mem, SessionsDir: path})
	if err != nil {
		return err
	}
	defer set.Close()
	var grep tools.Tool
	for _, t := range set.Tools() {
		if t.Name() == "grep" {
			grep = t
		}
	}
	input, err := json.Marshal(map[string]string{"pattern": pattern, "path": path, "output_mode": mode})
	if err != nil {
		return err
	}
	if err := grep.Validate(input); err != nil {
		return err
	}
	start := time.Now()
	res, err := grep.Execute(context.Background(), input)
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	if show {
		fmt.Fprint(os.Stderr, res.Content)
	}
	total, shown := countMatches(res.Content)
	fmt.Printf("matches=%d shown=%d elapsed_s=%.3f vmhwm_kb=%d\n", total, shown, elapsed.Seconds(), vmHWM())
	return nil
}

// trailerRe reads the total from the tool's "… N more matches not shown (T
// matching lines in F files in total)" trailer.
var trailerRe = regexp.MustCompile(`\((\d+) matching lines in \d+ files in total\)`)

// countMatches returns the total matches the output reports and how many
// result lines it shows.
func countMatches(out string) (total, shown int) {
	for _, line := range strings.Split(out, "\n") {
		if line != "" && !strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "No matches") {
			shown++
		}
	}
	if m := trailerRe.FindStringSubmatch(out); m != nil {
		total, _ = strconv.Atoi(m[1])
		return total, shown
	}
	return shown, shown
}

// vmHWM is the peak resident set size in KiB, or -1 off Linux.
func vmHWM() int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return kb
			}
		}
	}
	return -1
}
