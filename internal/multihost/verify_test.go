package multihost

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkNoOverlap: the landed dreams, ordered by start, never overlap in
// time and each saw exactly the lines of all the dreams before it (base is
// the count the first one saw). Either failing means two dreams ran on the
// memory at once.
func checkNoOverlap(t *testing.T, landed []attempt, base int) {
	t.Helper()
	s := slices.Clone(landed)
	slices.SortFunc(s, func(a, b attempt) int { return a.Start.Compare(b.Start) })
	for i, a := range s {
		if a.Seen != base+i {
			t.Errorf("dream %s on %s saw %d earlier dreams, want %d: it ran beside another", a.Task, a.Host, a.Seen, base+i)
		}
		if i > 0 && s[i-1].End.After(a.Start) {
			t.Errorf("dreams overlap: %s on %s ran %s..%s, %s on %s started %s",
				s[i-1].Task, s[i-1].Host, s[i-1].Start.Format(time.StampMicro), s[i-1].End.Format(time.StampMicro),
				a.Task, a.Host, a.Start.Format(time.StampMicro))
		}
	}
}

// remoteGit runs git against the bare remote directly.
func remoteGit(t *testing.T, gitDir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PATH=/usr/bin:/bin:/usr/local/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// checkRemoteHistory: every landed dream is in the remote's history of the shared branch
// exactly once, and no dream that did not land is there at all.
func checkRemoteHistory(t *testing.T, gitDir string, landed, notLanded []attempt) {
	t.Helper()
	log := remoteGit(t, gitDir, "log", "--format=%B%x00", sharedBranch)
	count := map[string]int{}
	for _, msg := range strings.Split(log, "\x00") {
		for _, l := range strings.Split(msg, "\n") {
			if id, ok := strings.CutPrefix(strings.TrimSpace(l), "Dream-Id: "); ok {
				count[id]++
			}
		}
	}
	for _, a := range landed {
		if count[a.Task] != 1 {
			t.Errorf("landed dream %s (%s) is in the remote history %d times, want once", a.Task, a.Host, count[a.Task])
		}
	}
	for _, a := range notLanded {
		if a.Task != "" && count[a.Task] != 0 {
			t.Errorf("dream %s (%s, %s) did not land but is in the remote history", a.Task, a.Host, a.Status)
		}
	}
	body := remoteGit(t, gitDir, "show", sharedBranch+":"+dreamsFile)
	for _, a := range landed {
		if n := strings.Count(body, "- dream "+a.Task+" "); n != 1 {
			t.Errorf("the remote's %s has dream %s %d times, want once", dreamsFile, a.Task, n)
		}
	}
	for _, a := range notLanded {
		if a.Task != "" && strings.Contains(body, "- dream "+a.Task+" ") {
			t.Errorf("the remote's %s has the line of dream %s, which did not land", dreamsFile, a.Task)
		}
	}
}

// checkRemoteIsWholeDream: the remote's memory is exactly the state before
// or after one single landed dream (the tree of its audit commit or of that
// commit's parent), never a mix.
func checkRemoteIsWholeDream(t *testing.T, gitDir string, landed []attempt) {
	t.Helper()
	tip := strings.TrimSpace(remoteGit(t, gitDir, "rev-parse", sharedBranch+"^{tree}"))
	for _, a := range landed {
		if a.Commit == "" {
			continue
		}
		after := strings.TrimSpace(remoteGit(t, gitDir, "rev-parse", a.Commit+"^{tree}"))
		before := strings.TrimSpace(remoteGit(t, gitDir, "rev-parse", a.Commit+"^^{tree}"))
		if tip == after || tip == before {
			return
		}
	}
	t.Errorf("the remote's memory (tree %s) is neither the before nor the after of any landed dream", tip)
}

func split(as []attempt) (landed, other []attempt, held int) {
	for _, a := range as {
		switch {
		case a.Status == "completed" && a.Commit != "":
			landed = append(landed, a)
		case a.Status == "held":
			held++
		default:
			other = append(other, a)
		}
	}
	return
}

func summary(as []attempt) string {
	l, o, h := split(as)
	return fmt.Sprintf("%d attempts: %d landed, %d lost the race, %d failed", len(as), len(l), h, len(o))
}
