package dream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/journal"
)

// A host's runner that returns but leaves work behind that keeps writing
// into its staging: a goroutine rewriting a staged file in place, and a
// descriptor kept open for writing and used once the dream is over. The
// dream either lands exactly what was checked or refuses as a whole, and
// no late write ever reaches the memory.
func TestHostRunnerWritingAfterItReturned(t *testing.T) {
	const late = "# Build\n\nLATE: written after the runner returned\n"
	checked := "# Build\n\n- make all\n- make lint\n\n## Tests\n\n- go test ./...\n"
	ctx := context.Background()
	t.Run("goroutine left writing", func(t *testing.T) {
		var stop atomic.Bool
		var wg sync.WaitGroup
		d, mem, _ := newHostDreamer(t, func(ctx context.Context, job Job) (Outcome, error) {
			p := filepath.Join(job.MemoryDir, "build.md")
			replaceFile(t, p, checked)
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(2 * time.Millisecond) // after the runner returned
				for !stop.Load() {
					if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
						f.WriteAt([]byte(late), 0)
						f.Close()
					}
				}
			}()
			return Outcome{}, nil
		}, nil)
		rep, err := d.Run(ctx, RunOptions{})
		time.Sleep(20 * time.Millisecond) // it goes on after the dream too
		stop.Store(true)
		wg.Wait()
		t.Logf("dream %s, %v", rep.Status, err)
		got := readMem(t, mem, "build.md")
		if strings.Contains(got, "LATE") {
			t.Fatalf("a late write reached the memory: %q (dream %s, %v)", got, rep.Status, err)
		}
		switch {
		case err == nil && rep.Status == StatusCompleted:
			if got != checked {
				t.Fatalf("build.md = %q, want what was checked", got)
			}
		case err != nil:
			wantMemory(t, mem, hostMemory())
		default:
			t.Fatalf("dream = %s, %v", rep.Status, err)
		}
	})
	t.Run("descriptor kept open", func(t *testing.T) {
		var kept *os.File
		d, mem, _ := newHostDreamer(t, func(ctx context.Context, job Job) (Outcome, error) {
			p := filepath.Join(job.MemoryDir, "build.md")
			replaceFile(t, p, checked)
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return Outcome{}, err
			}
			kept = f
			return Outcome{}, nil
		}, nil)
		rep, err := d.Run(ctx, RunOptions{})
		if kept == nil {
			t.Fatal("the runner never ran")
		}
		t.Logf("dream %s, %v", rep.Status, err)
		kept.WriteAt([]byte(late), 0)
		kept.Close()
		if got := readMem(t, mem, "build.md"); strings.Contains(got, "LATE") {
			t.Fatalf("a write through a kept descriptor reached the memory: %q (dream %s, %v)", got, rep.Status, err)
		}
		// The staged file was copied into the memory: the descriptor
		// writes into staging, and the dream lands what was checked.
		if err != nil {
			if !errors.Is(err, journal.ErrStagingChanged) && !strings.Contains(rep.Error, "staging changed") {
				t.Fatalf("refused for another reason: %v (%s)", err, rep.Error)
			}
			wantMemory(t, mem, hostMemory())
		} else {
			wantMemory(t, mem, map[string]string{"build.md": checked})
		}
	})
}
