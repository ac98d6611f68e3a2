package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dreamkit/dream/cmd/dream/internal/cmdline"
)

// TestHelpGolden pins `dream help` and two commands' help.
func TestHelpGolden(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := &session{w: w}
	for _, args := range [][]string{{"help"}, {"help", "undo"}, {"run", "--help"}} {
		if r := s.run(nil, args...); r.code != 0 || r.stderr != "" {
			t.Errorf("dream %v:\n%s", args, r)
		}
	}
	s.check("help")
}

// TestHelpEveryCommand: `dream help` lists every command commands() has;
// `dream help C` and `dream C --help` print the same; each command's help
// has an example, writes flags with two dashes, shows each value's
// placeholder and only the flags that command registers.
func TestHelpEveryCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	list := w.dream(nil, "help")
	placeholderless := regexp.MustCompile(`(?m)^  --[a-z-]+ (VALUE|STRING|string|int|duration|float)\b`)
	for _, c := range commands() {
		if !strings.Contains(list.stdout, "\n  "+c.name+" ") {
			t.Errorf("dream help does not list %s", c.name)
		}
		if len(examples[c.name]) == 0 {
			t.Errorf("%s has no example", c.name)
		}
		byHelp := w.dream(nil, "help", c.name)
		byFlag := w.dream(nil, c.name, "--help")
		if byHelp.code != 0 || byFlag.code != 0 || byHelp.stdout != byFlag.stdout || byHelp.stdout == "" {
			t.Errorf("dream help %s and dream %s --help differ:\n%s\n---\n%s", c.name, c.name, byHelp, byFlag)
			continue
		}
		h := byHelp.stdout
		if !strings.Contains(h, "Example") || !strings.Contains(h, "dream "+c.name) {
			t.Errorf("dream help %s has no example:\n%s", c.name, h)
		}
		if m := placeholderless.FindString(h); m != "" {
			t.Errorf("dream help %s: a value without a typed placeholder: %q", c.name, m)
		}
		if regexp.MustCompile(`(?m)^  -[a-z]`).MatchString(h) {
			t.Errorf("dream help %s writes a flag with one dash:\n%s", c.name, h)
		}
		// Only the groups the command reads: a command that reads no
		// model has no --provider.
		want := map[string]bool{}
		for _, g := range cmdline.Groups(c.name) {
			for _, n := range g.Names() {
				want[n] = true
			}
		}
		for _, n := range []string{"provider", "memory-dir", "min-hours", "sync-remote", "lock"} {
			if got := strings.Contains(h, "--"+n+" "); got != want[n] {
				t.Errorf("dream help %s: --%s shown %v, registered %v", c.name, n, got, want[n])
			}
		}
	}
	// A command that reads no model takes no model flag.
	if r := w.dream(nil, "log", "--provider", "openai", "--memory-dir", w.mem); r.code != exitUsage || !strings.Contains(r.stderr, "no flag --provider") {
		t.Errorf("log --provider: %s", r)
	}
}

// TestJSONKeysSnakeCase walks every key of each command's --json output.
func TestJSONKeysSnakeCase(t *testing.T) {
	t.Parallel()
	w := dupWorld(t)
	off := offlineEnv
	loc := w.locFlags()
	run := func(args ...string) result {
		t.Helper()
		r := w.dream(off, append(args, "--json")...)
		if !json.Valid([]byte(r.stdout)) {
			t.Fatalf("dream %v --json is not JSON:\n%s", args, r)
		}
		return r
	}
	rep := decodeJSON[struct {
		TaskID string `json:"task_id"`
	}](t, run(append([]string{"run", "--review"}, loc...)...))
	outputs := map[string]result{}
	outputs["diff"] = run(append([]string{"diff"}, loc...)...)
	outputs["diff ID"] = run(append([]string{"diff", rep.TaskID}, loc...)...)
	outputs["apply"] = run(append([]string{"apply", rep.TaskID}, loc...)...)
	outputs["apply again"] = run(append([]string{"apply", rep.TaskID}, loc...)...)
	outputs["show"] = run(append([]string{"show", rep.TaskID}, loc...)...)
	outputs["log"] = run(append([]string{"log"}, loc...)...)
	outputs["undo"] = run(append([]string{"undo", rep.TaskID}, loc...)...)
	outputs["run"] = run("run", "--memory-dir", w.mem, "--sessions-dir", w.sessions, "--state-dir", w.state)
	outputs["maybe"] = run(append([]string{"maybe"}, loc...)...)
	outputs["status"] = run(append([]string{"status"}, loc...)...)
	outputs["tasks"] = run(append([]string{"tasks"}, loc...)...)
	outputs["kill finished"] = run(append([]string{"kill", rep.TaskID}, loc...)...)
	outputs["stats"] = run(append([]string{"stats"}, loc...)...)
	outputs["config"] = run(append([]string{"config"}, loc...)...)
	outputs["doctor"] = run(append([]string{"doctor"}, loc...)...)
	outputs["version"] = run("version")
	w.write(w.repo, ".dream.toml", "min_sessions = 3\n")
	outputs["trust"] = run("trust", "--repo", w.repo)
	outputs["trust list"] = run("trust", "--list")
	outputs["history append"] = run("history", "append", "--memory-dir", w.mem, "decided to pin Go 1.26")
	outputs["history show"] = run("history", "show", "--memory-dir", w.mem)
	outputs["error"] = run("stauts")
	outputs["init"] = run("init", "claude", "--dry-run")
	outputs["daemon install"] = run("daemon", "install", "--dry-run", "--kind", "systemd")
	outputs["daemon add"] = run("daemon", "add", w.repo, "--memory-dir", w.mem, "--daemon-file", filepath.Join(w.root, "daemon.toml"))
	remote := filepath.Join(w.root, "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	outputs["sync"] = run(append([]string{"sync", "--sync-remote", remote}, loc...)...)

	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	var names []string
	for name := range outputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var v any
		if err := json.Unmarshal([]byte(outputs[name].stdout), &v); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		walkKeys(v, "", func(path, key string) {
			if !snake.MatchString(key) {
				t.Errorf("dream %s --json: key %q at %s is not snake_case", name, key, path)
			}
		})
	}
	var v struct {
		Version, Go string
	}
	if err := json.Unmarshal([]byte(outputs["version"].stdout), &v); err != nil || v.Version == "" || !strings.HasPrefix(v.Go, "go") {
		t.Errorf("version --json: %+v %v", v, err)
	}
}

// walkKeys calls fn with every object key in v and the path to it.
func walkKeys(v any, path string, fn func(path, key string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			fn(path, k)
			walkKeys(e, path+"."+k, fn)
		}
	case []any:
		for _, e := range x {
			walkKeys(e, path+"[]", fn)
		}
	}
}
