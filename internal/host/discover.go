package host

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// discovery is how Discover finds a host's projects on this machine.
type discovery int

const (
	// notFound: the host has no projects of its own to find (dir).
	notFound discovery = iota
	// perCWD: one directory per working directory under projects/, named
	// by a lossy sanitisation of the path (Claude Code, codebot); the path
	// is read back from the transcripts' "cwd".
	perCWD
	// byMarker: one directory per project under tmp/, claimed by a
	// .project_root file holding the project's path (Gemini CLI).
	byMarker
	// global: one memory and sessions dir for every project (Codex CLI,
	// nanobot).
	global
)

// Project is one place an agent keeps memory and transcripts: what a
// supervisor such as `dream daemon` watches and dreams for.
type Project struct {
	// Host is the agent's name (claude, codex, ...), or "" for a project
	// given by explicit paths.
	Host string `json:"host"`
	// RepoDir is the code the memory describes, when known.
	RepoDir string `json:"repo_dir,omitempty"`
	// MemoryDir is the memory directory to consolidate.
	MemoryDir string `json:"memory_dir"`
	// SessionsDir holds the transcripts the session gate counts.
	SessionsDir string `json:"sessions_dir,omitempty"`
	// Notes says what the layout assumed.
	Notes string `json:"notes,omitempty"`
}

// ResolveProject derives a project from an agent's layout for the code at
// repoDir. home is the user's home and env looks up the environment
// (os.LookupEnv in production).
func ResolveProject(hostName, repoDir, home string, env func(string) (string, bool)) (Project, error) {
	l, err := Resolve(hostName, repoDir, home, env)
	if err != nil {
		return Project{}, err
	}
	p := Project{Host: hostName, MemoryDir: l.MemoryDir, SessionsDir: l.SessionsDir, Notes: l.Notes}
	if repoDir != "" {
		if abs, err := filepath.Abs(repoDir); err == nil {
			p.RepoDir = abs
		}
	}
	return p, nil
}

// cwdProbeFiles and cwdProbeBytes bound what Discover reads of a
// project's transcripts to learn which directory it belongs to.
const (
	cwdProbeFiles = 3
	cwdProbeBytes = 256 << 10
)

// Discover lists the projects the agents on this machine have
// transcripts for, as far as their layouts tell:
//
//   - Claude Code (and codebot, which mirrors it) keep one directory per
//     working directory under projects/, named by a lossy sanitisation of
//     the path, so the path is read back from the "cwd" field every
//     transcript line carries (for example {"cwd": "/home/u/app",
//     "sessionId": ..., "type": "user"}), and the layout is resolved from
//     it, which also finds the memory a worktree shares with its main
//     checkout;
//   - Gemini CLI keeps one directory per project under tmp/, each claimed
//     by a .project_root file holding the project's path;
//   - Codex CLI and nanobot keep one global memory and sessions dir.
//
// Only projects whose sessions dir exists are returned; problems with one
// project (an unreadable transcript, a cwd that is not absolute) skip that
// project only. The error joins what was skipped and why.
func Discover(home string, env func(string) (string, bool)) ([]Project, error) {
	var out []Project
	var errs []error
	for _, h := range hosts {
		var ps []Project
		var err error
		switch h.discover {
		case perCWD:
			ps, err = discoverPerCWD(h.name, home, env)
		case byMarker:
			ps, err = discoverByMarker(h.name, home, env)
		case global:
			if p, rerr := ResolveProject(h.name, "", home, env); rerr == nil && isDirectory(p.SessionsDir) {
				ps = []Project{p}
			}
		}
		out = append(out, ps...)
		errs = append(errs, err)
	}
	return dedupeProjects(out), errors.Join(errs...)
}

// discoverPerCWD handles the hosts that keep projects/<sanitized cwd>/.
func discoverPerCWD(hostName, home string, env func(string) (string, bool)) ([]Project, error) {
	if home == "" {
		return nil, nil
	}
	probe, err := Resolve(hostName, home, home, env)
	if err != nil {
		return nil, nil
	}
	projects := filepath.Dir(probe.SessionsDir)
	entries, err := os.ReadDir(projects)
	if err != nil {
		return nil, nil // the agent is not installed or never ran
	}
	var out []Project
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(projects, e.Name())
		cwd := transcriptCWD(dir)
		if cwd == "" {
			continue // no transcript says where it ran: nothing certain to dream for
		}
		p, err := ResolveProject(hostName, cwd, home, env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// The transcripts are where they are, whatever the name the
		// layout computes (a hash suffix may differ by runtime).
		p.SessionsDir = dir
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// transcriptCWD returns the working directory recorded in dir's
// transcripts, or "". Every transcript of one project dir ran in the
// directory the dir is named after, so the first few readable ones are
// asked, in directory order, with no stat of the rest: a project with
// thousands of sessions costs one directory read.
func transcriptCWD(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	tried := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		if cwd := readCWD(filepath.Join(dir, e.Name())); cwd != "" {
			return cwd
		}
		if tried++; tried == cwdProbeFiles {
			break
		}
	}
	return ""
}

// readCWD scans the first cwdProbeBytes of a transcript for a line whose
// "cwd" is a clean absolute path. A transcript is untrusted input: lines
// that do not parse are skipped, and a relative or odd path is refused.
func readCWD(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, cwdProbeBytes))
	sc.Buffer(make([]byte, 0, 64<<10), cwdProbeBytes)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), `"cwd"`) {
			continue
		}
		var v struct {
			CWD string `json:"cwd"`
		}
		if json.Unmarshal(line, &v) != nil {
			continue
		}
		if v.CWD != "" && filepath.IsAbs(v.CWD) && !strings.ContainsRune(v.CWD, 0) {
			return filepath.Clean(v.CWD)
		}
	}
	return ""
}

// discoverByMarker reads the .project_root markers under tmp/ (Gemini CLI).
func discoverByMarker(hostName, home string, env func(string) (string, bool)) ([]Project, error) {
	probe, err := Resolve(hostName, string(filepath.Separator), home, env)
	if err != nil {
		return nil, nil
	}
	tmp := filepath.Dir(filepath.Dir(probe.SessionsDir))
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, nil
	}
	var out []Project
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(tmp, e.Name(), ".project_root"))
		if err != nil || len(b) > 4096 {
			continue
		}
		root := filepath.Clean(strings.TrimSpace(string(b)))
		if !filepath.IsAbs(root) {
			continue
		}
		p, err := ResolveProject(hostName, root, home, env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if isDirectory(p.SessionsDir) {
			out = append(out, p)
		}
	}
	return out, errors.Join(errs...)
}

func dedupeProjects(ps []Project) []Project {
	seen := map[[2]string]bool{}
	out := ps[:0]
	for _, p := range ps {
		k := [2]string{filepath.Clean(p.MemoryDir), filepath.Clean(p.SessionsDir)}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}

func isDirectory(p string) bool {
	if p == "" {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// DiscoveryRoots returns the directories under which agents create a new
// project's transcript directory (Claude Code's and codebot's projects/,
// Gemini CLI's tmp/), so that a watcher can notice a new project without
// polling. Only existing directories are returned.
func DiscoveryRoots(home string, env func(string) (string, bool)) []string {
	var out []string
	for _, h := range hosts {
		switch {
		case h.discover == perCWD && home != "":
			if probe, err := Resolve(h.name, home, home, env); err == nil {
				out = append(out, filepath.Dir(probe.SessionsDir))
			}
		case h.discover == byMarker:
			if probe, err := Resolve(h.name, string(filepath.Separator), home, env); err == nil {
				out = append(out, filepath.Dir(filepath.Dir(probe.SessionsDir)))
			}
		}
	}
	kept := out[:0]
	for _, d := range out {
		if isDirectory(d) {
			kept = append(kept, d)
		}
	}
	return kept
}
