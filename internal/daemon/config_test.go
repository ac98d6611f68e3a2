package daemon

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		check      func(t *testing.T, s Settings)
		wantErr    string
	}{
		{name: "missing", check: func(t *testing.T, s Settings) {
			if s.Idle != DefaultIdle || s.MaxConcurrent != 1 || s.Rescan != DefaultRescan || !s.Detect || s.Listen != "" {
				t.Errorf("defaults: %+v", s)
			}
		}},
		{name: "full", body: "# the machine's daemon\nidle = \"15m\"\nmax_concurrent = 2\nlisten = \"127.0.0.1:9464\"\nrescan = \"3m\"\ndetect = false\n\n[[project]]\npath = \"/home/me/src/app\"\nhost = \"claude\"\n\n[[project]]\nmemory_dir = \"/home/me/笔记/memory\"\nsessions_dir = \"/home/me/笔记/sessions\"\n",
			check: func(t *testing.T, s Settings) {
				if s.Idle != 15*time.Minute || s.MaxConcurrent != 2 || s.Listen != "127.0.0.1:9464" || s.Rescan != 3*time.Minute || s.Detect || len(s.Projects) != 2 || len(s.Warnings) != 0 {
					t.Errorf("%+v", s)
				}
				if s.Projects[1].MemoryDir != "/home/me/笔记/memory" {
					t.Errorf("project 2: %+v", s.Projects[1])
				}
			}},
		{name: "bad-values", body: "idle = \"-5m\"\nmax_concurrent = -1\nrescan = \"1s\"\n\n[[project]]\npath = \"relative/app\"\nhost = \"claude\"\n\n[[project]]\nhost = \"claude\"\n",
			check: func(t *testing.T, s Settings) {
				if s.Idle != DefaultIdle || s.MaxConcurrent != 1 || s.Rescan != MinRescan || len(s.Projects) != 0 {
					t.Errorf("%+v", s)
				}
				if len(s.Warnings) != 5 {
					t.Errorf("warnings %q, want 5", s.Warnings)
				}
			}},
		// Issue 28: one unknown key made the whole file an error, and the
		// daemon watched no project. It is a warning naming the key and
		// the file; every other key and project applies.
		{name: "unknown-key", body: "idel = \"5m\"\nidle = \"2m\"\n\n[[project]]\nmemory_dir = \"/home/me/notes/memory\"\nmemroy_dir = \"/x\"\n\n[[project]]\npath = \"/home/me/src/app\"\nhost = \"claude\"\n\n[watch]\nall = true\n",
			check: func(t *testing.T, s Settings) {
				if s.Idle != 2*time.Minute || len(s.Projects) != 2 || s.Projects[0].MemoryDir != "/home/me/notes/memory" || s.Projects[1].Host != "claude" {
					t.Errorf("%+v", s)
				}
				path := filepath.Join(dir, "unknown-key.toml")
				want := []string{path + `: unknown key "idel" (ignored)`, path + `: unknown key "watch" (ignored)`, path + `: project 1: unknown key "memroy_dir" (ignored)`}
				if strings.Join(s.Warnings, "\n") != strings.Join(want, "\n") {
					t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(s.Warnings, "\n"), strings.Join(want, "\n"))
				}
			}},
		// A value of the wrong type is ignored like a bad value, and a
		// project with one is skipped; the rest applies.
		{name: "wrong-types", body: "idle = 10\nlisten = \"127.0.0.1:9464\"\n\n[[project]]\npath = 5\nhost = \"claude\"\n\n[[project]]\nmemory_dir = \"/home/me/notes/memory\"\n",
			check: func(t *testing.T, s Settings) {
				if s.Idle != DefaultIdle || s.Listen != "127.0.0.1:9464" || len(s.Projects) != 1 || s.Projects[0].MemoryDir != "/home/me/notes/memory" {
					t.Errorf("%+v", s)
				}
				all := strings.Join(s.Warnings, "\n")
				if len(s.Warnings) != 3 || !strings.Contains(all, "wrong-types.toml: idle is ignored") || !strings.Contains(all, "project 1: path is ignored") || !strings.Contains(all, "project 1: skipped") {
					t.Errorf("warnings:\n%s", all)
				}
			}},
		{name: "project-not-array", body: "idle = \"3m\"\n[project]\nmemory_dir = \"/m\"\n",
			check: func(t *testing.T, s Settings) {
				if s.Idle != 3*time.Minute || len(s.Projects) != 0 || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "project is ignored") {
					t.Errorf("%+v", s)
				}
			}},
		{name: "malformed", body: "idle = \n", wantErr: "daemon file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".toml")
			if c.body != "" {
				if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := ReadFile(path)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, s)
		})
	}
}

func TestAddProjectKeepsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dream", "daemon.toml")
	original := "# my daemon — 我的守护进程\nidle = \"20m\"   # long lunches\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	e := ProjectEntry{Path: "/home/me/src/app", Host: "claude"}
	for i, want := range []bool{true, false} {
		added, err := AddProject(path, e)
		if err != nil || added != want {
			t.Fatalf("add %d: added %v err %v", i, added, err)
		}
	}
	if added, err := AddProject(path, ProjectEntry{MemoryDir: "/home/me/notes/memory", SessionsDir: "/home/me/notes/sessions"}); err != nil || !added {
		t.Fatal(added, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), original) {
		t.Errorf("the user's bytes were not kept:\n%s", b)
	}
	s, err := ReadFile(path)
	if err != nil || len(s.Projects) != 2 || s.Idle != 20*time.Minute {
		t.Fatalf("%+v %v\n%s", s, err, b)
	}
	for _, bad := range []ProjectEntry{{Path: "rel", Host: "claude"}, {Host: "claude"}, {MemoryDir: "/m\x00x"}} {
		if _, err := AddProject(path, bad); err == nil {
			t.Errorf("AddProject(%+v) accepted", bad)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	f.Add("idle = \"10m\"\n[[project]]\npath = \"/a\"\nhost = \"claude\"\n")
	f.Add("max_concurrent = 99999999999999999999\n")
	f.Add("[[project]]\nmemory_dir = \"/x\"\n[[project]]\n")
	f.Add("listen = 5\n")
	f.Fuzz(func(t *testing.T, data string) {
		file, err := parseFile("fuzz.toml", data)
		if err != nil {
			return
		}
		s := file.settings("fuzz.toml")
		if s.Idle <= 0 || s.MaxConcurrent <= 0 || s.Rescan < MinRescan {
			t.Fatalf("invalid settings from %q: %+v", data, s)
		}
		for _, p := range s.Projects {
			if p.validate() != nil {
				t.Fatalf("invalid project kept: %+v", p)
			}
		}
	})
}

func TestUnitGolden(t *testing.T) {
	for _, c := range []struct{ kind, exe, golden string }{
		{KindSystemd, "/opt/dream tools/bin/dream%", "dream.service"},
		{KindLaunchd, "/Users/me/go/bin/dream&co", "dev.dreamkit.dream.plist"},
	} {
		u, err := UnitFor(c.kind, c.exe, "/home/me", "/home/me/.config")
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", c.golden)
		if *update {
			if err := os.WriteFile(golden, []byte(u.Content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if u.Content != string(want) {
			t.Errorf("%s differs from %s:\n%s", c.kind, golden, u.Content)
		}
	}
	if _, err := UnitFor(KindSystemd, "relative/dream", "/home/me", "/home/me/.config"); err == nil {
		t.Error("a relative binary path was accepted")
	}
	if _, err := UnitFor(KindSystemd, "/bin/dream\nExecStartPre=/bin/evil", "/home/me", "/home/me/.config"); err == nil {
		t.Error("a binary path with a line break was accepted")
	}
	if _, err := UnitFor("upstart", "/bin/dream", "/home/me", "/home/me/.config"); err == nil {
		t.Error("an unknown kind was accepted")
	}
}

func TestSyncIntervalSetting(t *testing.T) {
	for _, c := range []struct {
		value string // "" leaves the key out
		want  time.Duration
		warns bool
	}{
		{"", DefaultSyncInterval, false},
		{"30m", 30 * time.Minute, false},
		{"1m", MinSyncInterval, false},
		{"off", 0, false},
		{"0", 0, false},
		{"10s", MinSyncInterval, true},
		{"-5m", DefaultSyncInterval, true},
		{"每小时", DefaultSyncInterval, true},
	} {
		body := "idle = \"10m\"\n"
		if c.value != "" {
			body += "sync_interval = \"" + c.value + "\"\n"
		}
		path := filepath.Join(t.TempDir(), "daemon.toml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadFile(path)
		if err != nil {
			t.Fatalf("%q: %v", c.value, err)
		}
		if s.SyncInterval != c.want || (len(s.Warnings) > 0) != c.warns {
			t.Errorf("sync_interval = %q: got %s, warnings %q; want %s, warnings %v", c.value, s.SyncInterval, s.Warnings, c.want, c.warns)
		}
	}
	if s, _ := ReadFile(filepath.Join(t.TempDir(), "missing.toml")); s.SyncInterval != DefaultSyncInterval {
		t.Errorf("no daemon file: sync interval %s, want %s", s.SyncInterval, DefaultSyncInterval)
	}
}
