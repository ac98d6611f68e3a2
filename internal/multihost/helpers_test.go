package multihost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/etcdlock"
	"github.com/dreamkit/dream/internal/gitsync"
	"github.com/dreamkit/dream/settings"
)

// dreamsFile is the memory file every test dream appends its line to; the
// line count a dream saw when it started is how overlaps are caught: a dream
// that ran beside another would not see the other's line.
const dreamsFile = "dreams.md"

// seedMemory is the memory every test starts from: an index with pointers,
// nested headings, a numbered procedure, code, a quote and Chinese.
var seedMemory = map[string]string{
	"MEMORY.md": "# Memory index\n\n- [Build](build.md): how to build and release\n- [用户偏好](prefs.md): 用户的习惯\n- [Dreams](dreams.md): one line per dream, for the tests\n",
	"build.md":  "# Build\n\n## Release\n\n1. Bump the version in `version.go`.\n2. Run:\n\n```sh\ngo test -race ./...\n```\n\n3. Tag it.\n\n> Never tag from a dirty tree.\n",
	"prefs.md":  "# 用户偏好\n\n- 回答用中文\n- Prefers table tests\n",
	dreamsFile:  "# Dreams\n\n",
}

// multiHostEnv turns this package's tests on; see the package doc.
const multiHostEnv = "DREAM_MULTIHOST"

// needMultiHost skips t unless DREAM_MULTIHOST=1: the multi-host tests run
// in a CI step of their own, not in every `go test ./...`.
func needMultiHost(t *testing.T) {
	t.Helper()
	if os.Getenv(multiHostEnv) != "1" {
		t.Skip("multi-host tests skipped: set " + multiHostEnv + "=1 to run them (CI runs them in a step of their own)")
	}
}

func writeSeed(dir string) error {
	for name, body := range seedMemory {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// attempt is one dream attempt as a host saw it, one JSON line each.
type attempt struct {
	Host   string    `json:"host"`
	Task   string    `json:"task"`
	Status string    `json:"status"` // completed, failed, killed, held
	Error  string    `json:"error,omitempty"`
	Seen   int       `json:"seen"` // dream lines in the memory when the runner started
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"` // when the runner returned
	Commit string    `json:"commit,omitempty"`
	Sync   string    `json:"sync_error,omitempty"`
}

// hostRunner appends one line per dream to dreams.md. hold, when set, is
// called after the line is staged and before the runner returns (a slow
// dream, for the kill and link-cut tests).
type hostRunner struct {
	host string
	hold func(ctx context.Context) error

	mu   sync.Mutex
	last attempt
}

func (r *hostRunner) Run(ctx context.Context, job dream.Job) (dream.Outcome, error) {
	start := time.Now()
	p := filepath.Join(job.MemoryDir, dreamsFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		b, err = []byte(seedMemory[dreamsFile]), nil
	}
	if err != nil {
		return dream.Outcome{}, err
	}
	seen := strings.Count(string(b), "\n- dream ")
	if strings.HasPrefix(string(b), "- dream ") {
		seen++
	}
	line := fmt.Sprintf("- dream %s by %s (saw %d)\n", job.TaskID, r.host, seen)
	if err := os.WriteFile(p, append(b, line...), 0o644); err != nil {
		return dream.Outcome{}, err
	}
	r.mu.Lock()
	r.last = attempt{Host: r.host, Task: job.TaskID, Seen: seen, Start: start}
	r.mu.Unlock()
	if r.hold != nil {
		if err := r.hold(ctx); err != nil {
			return dream.Outcome{}, err
		}
	}
	r.mu.Lock()
	r.last.End = time.Now()
	r.mu.Unlock()
	job.Progress(dream.Progress{Kind: dream.ProgressFileTouched, Path: dreamsFile})
	return dream.Outcome{Turns: 1, FilesTouched: []string{dreamsFile}, Summary: "appended one line"}, nil
}

// runOnce runs one manual dream and describes it.
func runOnce(ctx context.Context, d *dream.Dreamer, r *hostRunner) attempt {
	r.mu.Lock()
	r.last = attempt{}
	r.mu.Unlock()
	rep, err := d.Run(ctx, dream.RunOptions{})
	r.mu.Lock()
	a := r.last
	r.mu.Unlock()
	a.Host, a.Status, a.Commit = r.host, rep.Status, rep.AuditCommit
	if rep.Sync != nil {
		a.Sync = rep.Sync.Error
	}
	if a.Task == "" {
		a.Task = rep.TaskID
	}
	if err != nil {
		a.Error = err.Error()
		if errors.Is(err, dream.ErrLockHeld) {
			a.Status = "held"
		}
	}
	return a
}

// sharedBranch is the hosts' one memory's branch on the remote (sync_branch:
// each host's memory dir is at a path of its own).
const sharedBranch = "dream/multihost"

// newHostDreamer is one machine's dreamer: lock = etcd at endpoint, memory
// synced through remote.
func newHostDreamer(mem, state, endpoint, remote string, ttl time.Duration, r *hostRunner) (*dream.Dreamer, error) {
	s := settings.DreamDefaults()
	s.Lock = settings.LockEtcd
	s.EtcdEndpoints = []string{endpoint}
	s.LockTTL = ttl
	s.SyncRemote = remote
	// Each host's memory lives at its own path: name the shared memory.
	s.SyncBranch = sharedBranch
	s.Timeout = 2 * time.Minute
	return dream.New(dream.Config{MemoryDir: mem, StateDir: state, Settings: s, Runner: r, Provider: "test", OpenLock: etcdlock.Open, OpenSync: gitsync.Open})
}

func appendJSON(path string, v any) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	b, _ := json.Marshal(v)
	_, err = f.Write(append(b, '\n'))
	return err
}

func readAttempts(path string) ([]attempt, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []attempt
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var a attempt
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, a)
	}
	return out, nil
}
