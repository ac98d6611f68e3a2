package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm"
)

// TestBigDreamReadsBack: the event of a dream that touched 30,000 files, or
// failed with a reason that lists them, is written small enough to read
// back, keeps the count, and is counted by Stats. Before the cap the
// completed line was 1.2 MB here and the reader silently dropped it.
func TestBigDreamReadsBack(t *testing.T) {
	l := Open(t.TempDir())
	files := make([]string, 30000)
	for i := range files {
		files[i] = fmt.Sprintf("topics/project/notes_%05d.md", i)
	}
	if err := l.Completed("t1", "/m", llm.Usage{InputTokens: 7}, 3, files, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Failed("t2", "/m", "conflict: "+strings.Join(files, ", "), "updating", llm.Usage{}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("d/", 600000) + "x.md" // one path longer than a line may be
	if err := l.Completed("t3", "/m", llm.Usage{}, 0, []string{long}, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	events, malformed, err := l.ReadCounting(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 || malformed != 0 {
		t.Fatalf("read %d events, %d malformed; want 3 and 0", len(events), malformed)
	}
	if e := events[0]; e.FilesTouchedTotal != 30000 || len(e.FilesTouched) != MaxFilesListed || e.FilesTouched[0] != files[0] {
		t.Errorf("completed event: total %d, listed %d", e.FilesTouchedTotal, len(e.FilesTouched))
	}
	if r := events[1].Reason; len(r) > maxReason+8 || !strings.HasPrefix(r, "conflict: topics/") {
		t.Errorf("failed reason is %d bytes", len(r))
	}
	if e := events[2]; e.FilesTouchedTotal != 1 || len(e.FilesTouched) != 0 {
		t.Errorf("over-long path: total %d, listed %d", e.FilesTouchedTotal, len(e.FilesTouched))
	}
	st, err := l.Stats(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Completed != 2 || st.Failed != 1 || st.Malformed != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// TestOldBigLinesRead: a log written before the cap (a 456 KB completed
// line) still reads, and a damaged line beyond any bound is reported.
func TestOldBigLinesRead(t *testing.T) {
	dir := t.TempDir()
	files := make([]string, 15000)
	for i := range files {
		files[i] = fmt.Sprintf("\"notes_%05d.md\"", i)
	}
	old := `{"time":"2026-11-30T11:00:00Z","event":"dream_completed","files_touched":[` + strings.Join(files, ",") + `]}`
	damaged := strings.Repeat("x", 2<<20)
	body := old + "\n" + damaged + "\n" + `{"time":"2026-11-30T12:00:00Z","event":"dream_fired"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(dir).Stats(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Completed != 1 || st.Fired != 1 || st.Malformed != 1 {
		t.Errorf("stats = %+v; want the %d-byte line read and the damaged one counted", st, len(old))
	}
	if !strings.Contains(st.String(), "1 malformed line skipped") {
		t.Errorf("summary does not report the unreadable line: %s", st)
	}
}
