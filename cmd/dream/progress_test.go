package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream"
)

// The live line is drawn for the first event and then at most every
// redrawEvery, however many files a dream reports; plain lines are one per
// event.
func TestProgressLiveLineIsThrottled(t *testing.T) {
	var live, plain bytes.Buffer
	lv, pv := newProgressView(&live, true, false), newProgressView(&plain, false, false)
	const n = 20000
	for i := range n {
		p := dream.Progress{Kind: dream.ProgressFileTouched, Path: fmt.Sprintf("topics/主题_%05d.md", i)}
		lv.on("20261201-090000-abcd", p)
		pv.on("20261201-090000-abcd", p)
	}
	// The events came faster than the interval: the last of them is drawn
	// once it is up, not left unshown.
	time.Sleep(redrawEvery + 100*time.Millisecond)
	lv.mu.Lock()
	out := live.String()
	lv.mu.Unlock()
	if last := out[strings.LastIndex(out, "\r\033[K"):]; !strings.Contains(last, fmt.Sprintf("%d file(s)", n)) {
		t.Errorf("the line left on the terminal is %q, not the last event's", last)
	}
	lv.done()
	draws := strings.Count(live.String(), "\r\033[K") - 1 // done's clearing
	if draws < 1 {
		t.Fatal("the live line was never drawn")
	}
	if draws > 50 {
		t.Errorf("the live line was drawn %d times for %d events", draws, n)
	}
	if !strings.Contains(live.String(), "updating") {
		t.Errorf("the live line never showed the phase: %q", live.String()[:min(200, live.Len())])
	}
	if got := strings.Count(plain.String(), "\n"); got != n {
		t.Errorf("%d plain lines for %d events", got, n)
	}
	if s := lv.status("id"); !strings.Contains(s, fmt.Sprintf("%d file(s)", n)) {
		t.Errorf("status after %d files = %q", n, s)
	}
}
