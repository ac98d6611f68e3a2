package gatestamp

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/settings"
)

// fixture is what one closed-gate decision reads, on disk: a config home
// with a user file, a repo without a project file, a memory dir with its
// lock, a state dir without a journal; and the key of one command line.
type fixture struct {
	root, userFile, projectFile, lock, journal, gates string
	key                                               Key
	last                                              time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{
		root:        root,
		userFile:    filepath.Join(root, "home", ".config", "dream", "config.toml"),
		projectFile: filepath.Join(root, "repo", ".dream.toml"),
		lock:        filepath.Join(root, "memory", ".consolidate-lock"),
		journal:     filepath.Join(root, "state", "journal", "0123456789abcdef"),
		gates:       filepath.Join(root, "home", ".local", "state", "dream", "gate"),
		last:        time.Now().Add(-2 * time.Hour).Truncate(time.Second),
	}
	mustWrite(t, f.userFile, "min_hours = 24\n")
	mustWrite(t, filepath.Join(root, "repo", "main.go"), "package main\n")
	mustWrite(t, f.lock, "")
	if err := os.MkdirAll(filepath.Dir(f.journal), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.lock, f.last, f.last); err != nil {
		t.Fatal(err)
	}
	f.key = Key{
		Exe:     "/usr/local/bin/dream\x00f:1:2:3:4:5:6",
		Cwd:     filepath.Join(root, "repo"),
		Args:    []string{"maybe", "--memory-dir", filepath.Join(root, "memory")},
		Environ: []string{"HOME=" + filepath.Join(root, "home"), "PATH=/usr/bin:/bin", "LANG=C.UTF-8"},
	}
	return f
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) decision() Decision {
	opens := f.last.Add(24 * time.Hour).Format(time.RFC3339)
	return Decision{
		Last:   f.last,
		Wait:   24 * time.Hour,
		Skew:   time.Minute,
		Answer: "no dream: the time gate is closed: " + Marker + "h since the last consolidation, need 24h; opens at " + opens + "\n",
		Inputs: []Input{
			{Path: f.userFile, Want: AnyState},
			{Path: f.projectFile, Want: Absent},
			{Path: f.lock, Want: Regular},
			{Path: f.journal, Want: AbsentOrEmptyDir},
		},
	}
}

// later is a decision start the fixture's files are older than by more
// than RacyMargin: the tests need not wait for their files to age.
func later() time.Time { return time.Now().Add(RacyMargin + time.Second) }

func (f *fixture) record(t *testing.T) {
	t.Helper()
	if err := Record(f.gates, f.key, f.decision(), later()); err != nil {
		t.Fatalf("Record: %v", err)
	}
}

// TestAnswerRepeatsTheDecision: a recorded decision answers the same
// command again with the recorded words and the hours figure of now, for
// as long as the gate's rule says closed; then it stands aside.
func TestAnswerRepeatsTheDecision(t *testing.T) {
	f := newFixture(t)
	f.record(t)
	for _, since := range []time.Duration{2 * time.Hour, 2*time.Hour + 3*time.Minute, 23*time.Hour + 56*time.Minute, 23*time.Hour + 59*time.Minute + 59*time.Second} {
		now := f.last.Add(since)
		out, ok := Answer(f.gates, f.key, now)
		want := fmt.Sprintf("no dream: the time gate is closed: %.1fh since the last consolidation, need 24h; opens at %s\n", since.Hours(), f.last.Add(24*time.Hour).Format(time.RFC3339))
		if !ok || string(out) != want {
			t.Fatalf("%v after: %q %v, want %q", since, out, ok, want)
		}
	}
	for _, now := range []time.Time{f.last.Add(24 * time.Hour), f.last.Add(30 * time.Hour), f.last.Add(-2 * time.Minute)} {
		if out, ok := Answer(f.gates, f.key, now); ok {
			t.Fatalf("at %v (last %v): answered %q; the gate is open", now, f.last, out)
		}
	}
	// Within the skew the gate is still closed, as quickgate decides it.
	if _, ok := Answer(f.gates, f.key, f.last.Add(-30*time.Second)); !ok {
		t.Fatal("a last consolidation 30 s ahead (within the skew): no answer")
	}
}

// TestAnswerMissesOnAnyChange: every input a decision read, changed in
// any way, and every part of the key, makes the next run decide again.
func TestAnswerMissesOnAnyChange(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, f *fixture)
	}{
		{"user file edited", func(t *testing.T, f *fixture) { mustWrite(t, f.userFile, "min_hours = 1\n") }},
		{"user file rewritten with its size and mtime kept", func(t *testing.T, f *fixture) {
			fi, err := os.Stat(f.userFile)
			if err != nil {
				t.Fatal(err)
			}
			mustWrite(t, f.userFile, "min_hours = 25\n")
			if err := os.Chtimes(f.userFile, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"user file removed", func(t *testing.T, f *fixture) { must(t, os.Remove(f.userFile)) }},
		{"user file replaced by a symlink", func(t *testing.T, f *fixture) {
			other := filepath.Join(f.root, "dotfiles", "config.toml")
			mustWrite(t, other, "min_hours = 24\n")
			must(t, os.Remove(f.userFile))
			must(t, os.Symlink(other, f.userFile))
		}},
		{"project file created", func(t *testing.T, f *fixture) { mustWrite(t, f.projectFile, "min_hours = 1\n") }},
		{"project file created as a dangling symlink", func(t *testing.T, f *fixture) {
			must(t, os.Symlink(filepath.Join(f.root, "nowhere.toml"), f.projectFile))
		}},
		{"lock touched by a dream", func(t *testing.T, f *fixture) {
			now := time.Now()
			must(t, os.Chtimes(f.lock, now, now))
		}},
		{"lock body written, mtime kept", func(t *testing.T, f *fixture) {
			mustWrite(t, f.lock, "4242\n")
			must(t, os.Chtimes(f.lock, f.last, f.last))
		}},
		{"lock replaced", func(t *testing.T, f *fixture) {
			must(t, os.Remove(f.lock))
			mustWrite(t, f.lock, "")
			must(t, os.Chtimes(f.lock, f.last, f.last))
		}},
		{"journal left by a dream", func(t *testing.T, f *fixture) {
			mustWrite(t, filepath.Join(f.journal, "d-1", "record.json"), "{}")
		}},
		{"argument", func(t *testing.T, f *fixture) { f.key.Args = append(f.key.Args, "--json") }},
		{"environment value", func(t *testing.T, f *fixture) { f.key.Environ[2] = "LANG=de_DE.UTF-8" }},
		{"environment variable added", func(t *testing.T, f *fixture) {
			f.key.Environ = append(f.key.Environ, "DREAM_MIN_HOURS=1")
		}},
		{"working directory", func(t *testing.T, f *fixture) { f.key.Cwd = f.root }},
		{"executable", func(t *testing.T, f *fixture) { f.key.Exe = "/usr/local/bin/dream\x00f:1:2:9:4:5:6" }},
		{"record cut short", func(t *testing.T, f *fixture) {
			name, _ := f.key.sum()
			p := filepath.Join(f.gates, name)
			b, err := os.ReadFile(p)
			must(t, err)
			must(t, os.WriteFile(p, b[:len(b)-4], 0o600))
		}},
		{"record of another key under this name", func(t *testing.T, f *fixture) {
			name, _ := f.key.sum()
			p := filepath.Join(f.gates, name)
			b, err := os.ReadFile(p)
			must(t, err)
			other := strings.Replace(string(b), "key "+name, "key "+strings.Repeat("0", len(name)), 1)
			must(t, os.WriteFile(p, []byte(other), 0o600))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.record(t)
			now := f.last.Add(3 * time.Hour)
			if _, ok := Answer(f.gates, f.key, now); !ok {
				t.Fatal("no answer before the change")
			}
			tc.change(t, f)
			if out, ok := Answer(f.gates, f.key, now); ok {
				t.Fatalf("answered %q after the change", out)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecordRefuses: what cannot be proven unchanged later is not
// recorded, and nothing is answered for it.
func TestRecordRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, f *fixture, d *Decision, start *time.Time)
	}{
		{"files younger than the racy margin", func(t *testing.T, f *fixture, d *Decision, start *time.Time) { *start = time.Now() }},
		{"a project file", func(t *testing.T, f *fixture, d *Decision, start *time.Time) { mustWrite(t, f.projectFile, "") }},
		{"a lock through a symlink", func(t *testing.T, f *fixture, d *Decision, start *time.Time) {
			must(t, os.Rename(f.lock, f.lock+".real"))
			must(t, os.Symlink(f.lock+".real", f.lock))
		}},
		{"no lock", func(t *testing.T, f *fixture, d *Decision, start *time.Time) { must(t, os.Remove(f.lock)) }},
		{"a parked transaction in the journal", func(t *testing.T, f *fixture, d *Decision, start *time.Time) {
			must(t, os.MkdirAll(filepath.Join(f.journal, "d-1"), 0o755))
		}},
		{"an environment naming a variable twice", func(t *testing.T, f *fixture, d *Decision, start *time.Time) {
			f.key.Environ = append(f.key.Environ, "HOME=/elsewhere")
		}},
		{"an answer without the marker", func(t *testing.T, f *fixture, d *Decision, start *time.Time) {
			d.Answer = "no dream\n"
		}},
		{"an answer with the marker twice", func(t *testing.T, f *fixture, d *Decision, start *time.Time) {
			d.Answer += Marker
		}},
		{"a relative input", func(t *testing.T, f *fixture, d *Decision, start *time.Time) {
			d.Inputs = append(d.Inputs, Input{Path: "repo/.dream.toml", Want: Absent})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			d, start := f.decision(), later()
			tc.setup(t, f, &d, &start)
			err := Record(f.gates, f.key, d, start)
			if !errors.Is(err, ErrNotRecorded) {
				t.Fatalf("Record: %v, want ErrNotRecorded", err)
			}
			if _, ok := Answer(f.gates, f.key, f.last.Add(3*time.Hour)); ok {
				t.Fatal("answered what was not recorded")
			}
		})
	}
}

// TestEmptyJournalDirIsRecorded: an empty journal dir is proven unchanged
// by its own times (an entry created in it changes them).
func TestEmptyJournalDirIsRecorded(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(f.journal, 0o755))
	f.record(t)
	now := f.last.Add(3 * time.Hour)
	if _, ok := Answer(f.gates, f.key, now); !ok {
		t.Fatal("no answer")
	}
	must(t, os.Mkdir(filepath.Join(f.journal, "d-2"), 0o755))
	if _, ok := Answer(f.gates, f.key, now); ok {
		t.Fatal("answered with a transaction in the journal")
	}
}

// TestKeyIgnoresEnvironmentOrder: agents pass the environment in any
// order (a map's); the key is the same.
func TestKeyIgnoresEnvironmentOrder(t *testing.T) {
	f := newFixture(t)
	a, ok := f.key.sum()
	if !ok {
		t.Fatal("no key")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		k := f.key
		k.Environ = slices.Clone(k.Environ)
		rng.Shuffle(len(k.Environ), func(i, j int) { k.Environ[i], k.Environ[j] = k.Environ[j], k.Environ[i] })
		if b, _ := k.sum(); b != a {
			t.Fatalf("environment %q: key %s, want %s", k.Environ, b, a)
		}
	}
	// Fields are delimited: moving a byte from one to the next is a new key.
	k := f.key
	k.Args = []string{"maybe --json"}
	k2 := f.key
	k2.Args = []string{"maybe", "--json"}
	if x, _ := k.sum(); x == func() string { s, _ := k2.sum(); return s }() {
		t.Fatal("one argument and two arguments have the same key")
	}
}

// TestPruneKeepsTheNewest: the gate dir keeps Keep records, the newest.
func TestPruneKeepsTheNewest(t *testing.T) {
	f := newFixture(t)
	d := f.decision()
	for i := range Keep + 6 {
		k := f.key
		k.Environ = append(slices.Clone(k.Environ), fmt.Sprintf("ROUND=%d", i))
		if err := Record(f.gates, k, d, later()); err != nil {
			t.Fatal(err)
		}
		name, _ := k.sum()
		old := time.Now().Add(time.Duration(i-100) * time.Minute)
		must(t, os.Chtimes(filepath.Join(f.gates, name), old, old))
	}
	mustWrite(t, filepath.Join(f.gates, ".tmp-crashed"), "")
	long := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(filepath.Join(f.gates, ".tmp-crashed"), long, long))
	k := f.key
	k.Environ = append(slices.Clone(k.Environ), "ROUND=last")
	must(t, Record(f.gates, k, d, later()))
	entries, err := os.ReadDir(f.gates)
	must(t, err)
	if len(entries) != Keep {
		t.Fatalf("%d entries, want %d", len(entries), Keep)
	}
	now := f.last.Add(3 * time.Hour)
	if _, ok := Answer(f.gates, k, now); !ok {
		t.Fatal("the newest record was pruned")
	}
	for _, i := range []int{0, 6} {
		k := f.key
		k.Environ = append(slices.Clone(k.Environ), fmt.Sprintf("ROUND=%d", i))
		if _, ok := Answer(f.gates, k, now); ok == (i < 7) {
			t.Fatalf("round %d: kept %v", i, ok)
		}
	}
}

// TestDirIsTheDefaultStateDir: the records live in the default state dir
// as settings.Defaults forms it, whatever the environment says.
func TestDirIsTheDefaultStateDir(t *testing.T) {
	for _, env := range []map[string]string{
		{"HOME": "/home/ada"},
		{"HOME": "/home/ada/", "XDG_STATE_HOME": "/var/state/"},
		{"HOME": "/home/ada", "XDG_STATE_HOME": "relative/state"},
		{"HOME": "/home/ada", "XDG_STATE_HOME": ""},
		{"XDG_STATE_HOME": "/srv/x"},
	} {
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		want := filepath.Join(settings.Defaults(lookup, env["HOME"]).StateDir, "gate")
		if got := filepath.Clean(Dir(lookup)); got != want {
			t.Errorf("env %v: Dir %q, settings' state dir + gate %q", env, got, want)
		}
	}
	if got := Dir(func(string) (string, bool) { return "", false }); got != "" {
		t.Errorf("no home, no XDG_STATE_HOME: Dir %q, want none", got)
	}
}

// TestHoursIsPercentPointOne: the hours figure is what fmt's %.1f writes,
// as the full command's detail does.
func TestHoursIsPercentPointOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		d := time.Duration(rng.Int64N(int64(48*time.Hour))) - time.Minute
		if got, want := Hours(d), fmt.Sprintf("%.1f", d.Hours()); got != want {
			t.Fatalf("%v: %q, want %q", d, got, want)
		}
	}
}

// TestTextHelpersAreTheStringsFunctions: the string functions written here
// to keep package strings out agree with it.
func TestTextHelpersAreTheStringsFunctions(t *testing.T) {
	inputs := []string{"", "/", "//", "a", "a/b/", "/a//b", "key abc", "x\ny\n", "\n", "@@hours@@h", "no @@hours@@ here @@hours@@"}
	seps := []string{" ", "\n", "/", Marker, "ab", "x"}
	for _, s := range inputs {
		if got, want := trimSlashes(s), strings.TrimRight(s, "/"); got != want {
			t.Errorf("trimSlashes(%q) = %q, want %q", s, got, want)
		}
		if got, want := lastSlash(s), strings.LastIndexByte(s, '/'); got != want {
			t.Errorf("lastSlash(%q) = %d, want %d", s, got, want)
		}
		if got, want := lines(s), strings.Split(s, "\n"); !slices.Equal(got, want) {
			t.Errorf("lines(%q) = %q, want %q", s, got, want)
		}
		for _, sep := range seps {
			b1, a1, f1 := cut(s, sep)
			b2, a2, f2 := strings.Cut(s, sep)
			if b1 != b2 || a1 != a2 || f1 != f2 || index(s, sep) != strings.Index(s, sep) || hasPrefix(s, sep) != strings.HasPrefix(s, sep) {
				t.Errorf("cut/index/hasPrefix(%q, %q) disagree with package strings", s, sep)
			}
			r1, ok1 := cutPrefix(s, sep)
			r2, ok2 := strings.CutPrefix(s, sep)
			if r1 != r2 || ok1 != ok2 {
				t.Errorf("cutPrefix(%q, %q) = %q %v, want %q %v", s, sep, r1, ok1, r2, ok2)
			}
		}
	}
}

// TestFingerprintSeesThroughSymlinks: a symlink's fingerprint holds its
// target's, so re-pointing it, or changing what it points at, is seen.
func TestFingerprintSeesThroughSymlinks(t *testing.T) {
	dir := t.TempDir()
	a, b, link := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "link")
	mustWrite(t, a, "one")
	mustWrite(t, b, "two")
	must(t, os.Symlink(a, link))
	fp1, _, err := fingerprint(link)
	must(t, err)
	if !strings.HasPrefix(fp1, kindSymlink) || !strings.Contains(fp1, ">"+kindRegular) {
		t.Fatalf("fingerprint %q: want the link's, then its target's", fp1)
	}
	mustWrite(t, a, "ONE")
	fp2, _, err := fingerprint(link)
	must(t, err)
	if fp2 == fp1 {
		t.Fatal("the target changed, the fingerprint did not")
	}
	must(t, os.Remove(a))
	fp3, _, err := fingerprint(link)
	must(t, err)
	if !strings.HasSuffix(fp3, ">absent") {
		t.Fatalf("dangling: %q", fp3)
	}
	fp4, _, err := fingerprint(filepath.Join(dir, "no", "such", "file"))
	must(t, err)
	if !strings.HasPrefix(fp4, "absent<absent<absent<"+kindDir) {
		t.Fatalf("absent: %q, want its nearest existing parent's", fp4)
	}
}

// FuzzParse: any bytes in a record file are parsed without panicking,
// and a record that parses is formatted back to what parses the same.
func FuzzParse(f *testing.F) {
	r := record{key: strings.Repeat("ab", fnv128Size), last: 1, wait: 2, skew: 3, before: "no dream: ", after: "h \"quoted\"\n",
		files: []fileState{{path: "/a b/c", fp: "f:1:2:3:4:5:6"}, {path: "/x", fp: "absent<d:1:2:3:4:5:6"}}}
	f.Add(r.format())
	f.Add("dream-gate-stamp 1\nkey \nend\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, data string) {
		r, err := parse(data)
		if err != nil {
			return
		}
		again, err := parse(r.format())
		if err != nil {
			t.Fatalf("a parsed record does not parse once formatted: %v", err)
		}
		if again.key != r.key || again.last != r.last || again.wait != r.wait || again.skew != r.skew ||
			again.before != r.before || again.after != r.after || !slices.Equal(again.files, r.files) {
			t.Fatalf("round trip changed the record: %+v\n%+v", r, again)
		}
	})
}
