package eval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dreamkit/dream/internal/memory"
)

// Workspace is a scenario's scratch copy that a dream works on.
type Workspace struct {
	MemoryDir, RepoDir, SessionsDir string
}

// prepare copies the scenario into root, generates any topics, and sets the
// times: memory files at FilesTime (what relative dates resolve against),
// transcripts an hour before Now (recent enough to open a session gate).
func prepare(s Scenario, root string) (Workspace, error) {
	ws := Workspace{
		MemoryDir:   filepath.Join(root, "memory"),
		RepoDir:     filepath.Join(root, "repo"),
		SessionsDir: filepath.Join(root, "sessions"),
	}
	for _, sub := range []string{"memory", "repo", "sessions"} {
		dst := filepath.Join(root, sub)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return ws, fmt.Errorf("workspace: %w", err)
		}
		if err := copyTree(filepath.Join(s.Dir, sub), dst); err != nil {
			return ws, fmt.Errorf("workspace: %w", err)
		}
	}
	if s.Generate != nil {
		if err := generate(*s.Generate, ws.MemoryDir); err != nil {
			return ws, fmt.Errorf("workspace: %w", err)
		}
	}
	if err := touchTree(ws.MemoryDir, s.FilesTime); err != nil {
		return ws, fmt.Errorf("workspace: %w", err)
	}
	for rel, t := range s.Mtimes {
		if err := os.Chtimes(filepath.Join(ws.MemoryDir, filepath.FromSlash(rel)), t, t); err != nil {
			return ws, fmt.Errorf("workspace: mtimes: %w", err)
		}
	}
	if err := touchTree(ws.SessionsDir, s.Now.Add(-time.Hour)); err != nil {
		return ws, fmt.Errorf("workspace: %w", err)
	}
	return ws, nil
}

// copyTree copies the regular files of src into dst; a missing src is an
// empty tree.
func copyTree(src, dst string) error {
	files, err := readTree(src, false)
	if err != nil {
		return err
	}
	for rel, data := range files {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
	}
	return nil
}

// readTree reads every regular file under root, keyed by slash path; a
// missing root is empty. skipLock leaves out the consolidation lock, which
// is not memory.
func readTree(root string, skipLock bool) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if !e.Type().IsRegular() || skipLock && e.Name() == memory.LockFile {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", root, err)
	}
	return out, nil
}

// hashTree is a digest of names, contents and permissions under root, to
// prove that a dream left a directory alone.
func hashTree(root string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := e.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%v\x00", filepath.ToSlash(rel), info.Mode())
		if e.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%d\x00", len(data))
			h.Write(data)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", root, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func touchTree(root string, t time.Time) error {
	return filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			return os.Chtimes(p, t, t)
		}
		return nil
	})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// generate writes the topics a Generate spec describes and their pointers,
// appended to any MEMORY.md the scenario ships.
func generate(g Generate, memDir string) error {
	var idx strings.Builder
	if old, err := os.ReadFile(filepath.Join(memDir, "MEMORY.md")); err == nil {
		idx.Write(old)
	} else {
		idx.WriteString("# Memory\n\n")
	}
	for i := 0; i < g.Topics; i++ {
		var body strings.Builder
		fmt.Fprintf(&body, "---\nname: Service svc-%03d\ndescription: port, owner and on-call of svc-%03d\ntype: project\n---\n", i, i)
		fmt.Fprintf(&body, "# svc-%03d\n\n%s\n%s\n", i, GeneratedFact(i, 0), GeneratedFact(i, 1))
		if i < g.Duplicates {
			fmt.Fprintf(&body, "%s\n", GeneratedFact(i+1, 0))
		}
		name := fmt.Sprintf("topic-%03d.md", i)
		if err := os.WriteFile(filepath.Join(memDir, name), []byte(body.String()), 0o644); err != nil {
			return fmt.Errorf("generate %s: %w", name, err)
		}
		if i < g.Topics-g.Unindexed {
			fmt.Fprintf(&idx, "- [Service svc-%03d](%s) — port, owner and on-call of svc-%03d\n", i, name, i)
		}
	}
	if err := os.WriteFile(filepath.Join(memDir, "MEMORY.md"), []byte(idx.String()), 0o644); err != nil {
		return fmt.Errorf("generate index: %w", err)
	}
	return nil
}

// GeneratedFact is fact k (0 or 1) of generated topic i, so that scenario
// probes and patterns can name generated facts exactly.
func GeneratedFact(i, k int) string {
	if k == 0 {
		return fmt.Sprintf("- svc-%03d listens on port %d behind the internal load balancer.", i, 9000+i)
	}
	return fmt.Sprintf("- svc-%03d is owned by team %s and paged through the %s rotation.", i, teams[i%len(teams)], teams[(i+1)%len(teams)])
}

var teams = []string{"atlas", "borealis", "cobalt", "delta", "ember"}
