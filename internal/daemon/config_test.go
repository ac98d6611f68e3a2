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
		{name: "unknown-key", body: "idel = \"5m\"\n", wantErr: "unknown keys idel"},
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
		u, err := UnitFor(c.kind, c.exe, "/home/me", "")
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
	if _, err := UnitFor(KindSystemd, "relative/dream", "/home/me", ""); err == nil {
		t.Error("a relative binary path was accepted")
	}
	if _, err := UnitFor(KindSystemd, "/bin/dream\nExecStartPre=/bin/evil", "/home/me", ""); err == nil {
		t.Error("a binary path with a line break was accepted")
	}
	if _, err := UnitFor("upstart", "/bin/dream", "/home/me", ""); err == nil {
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
