package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Detect returns the layouts of the agents that keep memory for the
// repository at repoDir, in Names order, so that `dream` needs no --host
// when only one does. An agent counts when its memory for this repository
// exists on disk: Claude Code's or codebot's project folder, a Gemini
// project registered for this path, Codex's global memories/ when none of
// its blocks names another repository only, nanobot's workspace memory, a
// plain <repo>/memory/MEMORY.md.
func Detect(repoDir, home string, env func(string) (string, bool)) []Layout {
	var found []Layout
	for _, h := range hosts {
		l, err := Resolve(h.name, repoDir, home, env)
		if err != nil || !keepsMemory(l, repoDir) {
			continue
		}
		found = append(found, l)
	}
	return found
}

// ErrAmbiguous is returned by Choose when several agents keep memory here.
type ErrAmbiguous struct{ Hosts []string }

func (e *ErrAmbiguous) Error() string {
	return fmt.Sprintf("several agents keep memory for this repository (%s): pass --host %s", strings.Join(e.Hosts, ", "), strings.Join(e.Hosts, "|"))
}

// ErrNoHost is returned by Choose when no agent keeps memory here.
var ErrNoHost = fmt.Errorf("no agent keeps memory for this repository: pass --host (%s) or --memory-dir", strings.Join(Names(), ", "))

// Choose is Detect reduced to one layout: the only one found, or an error
// naming the candidates.
func Choose(repoDir, home string, env func(string) (string, bool)) (Layout, error) {
	found := Detect(repoDir, home, env)
	switch len(found) {
	case 0:
		return Layout{}, ErrNoHost
	case 1:
		l := found[0]
		l.source("host", l.Host, "detected: the only agent with memory for "+repoDir)
		return l, nil
	}
	names := make([]string, len(found))
	for i, l := range found {
		names[i] = l.Host
	}
	return Layout{}, &ErrAmbiguous{Hosts: names}
}

func keepsMemory(l Layout, repoDir string) bool {
	switch l.Host {
	case "claude", "codebot":
		return isDir(l.MemoryDir) || isDir(l.SessionsDir)
	case "gemini":
		// Only a project Gemini registered itself, not the slug it would
		// claim for a path it never saw.
		for _, s := range l.Sources {
			if s.What == "memory dir" && strings.Contains(s.From, "assumed") {
				return false
			}
		}
		return isDir(l.MemoryDir) || isDir(l.SessionsDir)
	case "codex":
		if !isFile(filepath.Join(l.MemoryDir, "MEMORY.md")) && !isFile(filepath.Join(l.MemoryDir, "memory_summary.md")) {
			return false
		}
		if len(l.DriftRepos) == 0 {
			return true
		}
		abs, _ := filepath.Abs(repoDir)
		for _, r := range l.DriftRepos {
			if within(abs, r) || within(r, abs) {
				return true
			}
		}
		return false
	case "nanobot":
		return isFile(filepath.Join(l.MemoryDir, "memory", "MEMORY.md"))
	case "dir":
		return isFile(filepath.Join(l.MemoryDir, "MEMORY.md"))
	}
	return false
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
