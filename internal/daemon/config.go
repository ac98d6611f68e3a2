package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/dreamkit/dream/internal/fsutil"
)

// Defaults of the daemon file.
const (
	// DefaultIdle is how long a memory dir's sessions must be quiet before
	// the gate funnel is asked: long enough that a user who paused to read
	// is not dreamt over, short enough that a night is not wasted.
	DefaultIdle = 10 * time.Minute
	// DefaultMaxConcurrent is how many dreams run at once on the machine:
	// one, because a dream is a model conversation that costs money and
	// the user's machine is busy doing their real work.
	DefaultMaxConcurrent = 1
	// DefaultRescan is the fallback rescan for events the kernel dropped
	// (an inotify queue overflow, a network file system that sends none).
	DefaultRescan = 5 * time.Minute
	// MinRescan keeps a typo from turning the fallback into a polling loop.
	MinRescan = time.Minute
	// DefaultSyncInterval is how often the daemon pulls and pushes each
	// memory dir's history when the settings name a sync_remote: often
	// enough that a hand edit on another machine arrives before the next
	// session starts, rarely enough that a remote over ssh is not hammered.
	DefaultSyncInterval = 15 * time.Minute
	// MinSyncInterval keeps a typo from turning the sync into a polling
	// loop against somebody's git server.
	MinSyncInterval = time.Minute
)

// maxFileSize bounds the daemon file; real ones are a few hundred bytes.
const maxFileSize = 1 << 20

// File is the daemon's configuration file, daemon.toml beside the user's
// config.toml. It is separate from config.toml because it describes the
// machine (which projects to watch, where to listen), not one dream.
//
//	idle = "10m"
//	max_concurrent = 1
//	listen = "127.0.0.1:9464"   # off when empty; loopback only
//	rescan = "5m"
//	detect = true               # watch every project the agents' layouts show
//	sync_interval = "15m"       # with a sync_remote; "off" stops the daemon's syncs
//
//	[[project]]
//	path = "/home/me/src/app"   # the code; memory and transcripts from the host layout
//	host = "claude"
//
//	[[project]]
//	memory_dir = "/home/me/notes/memory"
//	sessions_dir = "/home/me/notes/sessions"
type File struct {
	Idle          string         `toml:"idle"`
	MaxConcurrent int            `toml:"max_concurrent"`
	Listen        string         `toml:"listen"`
	Rescan        string         `toml:"rescan"`
	Detect        *bool          `toml:"detect"`
	SyncInterval  string         `toml:"sync_interval"`
	Projects      []ProjectEntry `toml:"project"`

	// problems are the keys parseFile ignored (unknown, or of the wrong
	// type), each a warning naming the key and the file.
	problems []string
}

// ProjectEntry is one project the user asked the daemon to watch.
type ProjectEntry struct {
	Path        string `toml:"path,omitempty"`
	Host        string `toml:"host,omitempty"`
	MemoryDir   string `toml:"memory_dir,omitempty"`
	SessionsDir string `toml:"sessions_dir,omitempty"`
}

// Settings are the daemon file's values, validated, defaults filled in.
type Settings struct {
	Idle          time.Duration
	MaxConcurrent int
	Listen        string
	Rescan        time.Duration
	Detect        bool
	// SyncInterval is how often every watched memory dir is synced with
	// the settings' sync_remote; 0 is off. It has no effect without a
	// sync_remote.
	SyncInterval time.Duration
	Projects     []ProjectEntry
	// Warnings name each bad value and the default used instead.
	Warnings []string
}

// ReadFile loads the daemon file at path; a missing file is the defaults.
// A file that does not parse is an error (no value in it can be trusted);
// a bad value is a warning and its default is used, as in config.toml.
func ReadFile(path string) (Settings, error) {
	s := Settings{Idle: DefaultIdle, MaxConcurrent: DefaultMaxConcurrent, Rescan: DefaultRescan, SyncInterval: DefaultSyncInterval, Detect: true}
	f, err := readFile(path)
	if err != nil {
		return s, err
	}
	return f.settings(path), nil
}

func readFile(path string) (File, error) {
	var f File
	if path == "" {
		return f, nil
	}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("daemon file: %w", err)
	}
	if !info.Mode().IsRegular() || info.Size() > maxFileSize {
		return f, fmt.Errorf("daemon file %s: not a regular file under %d bytes", path, maxFileSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("daemon file: %w", err)
	}
	return parseFile(path, string(b))
}

// parseFile is readFile after the I/O, separate so that it can be fuzzed.
// Only a file that is not TOML is an error. Each key is decoded on its
// own, so that one unknown key (a typo, a key of a newer version) or one
// value of the wrong type is a warning naming it and the file, and every
// other key, every project above all, still applies: one bad key must not
// leave the daemon watching nothing.
func parseFile(path, data string) (File, error) {
	var raw map[string]toml.Primitive
	md, err := toml.Decode(data, &raw)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return File{}, fmt.Errorf("daemon file %s:%d: %s", path, perr.Position.Line, perr.Message)
		}
		return File{}, fmt.Errorf("daemon file %s: %w", path, err)
	}
	var f File
	warn := func(format string, args ...any) {
		f.problems = append(f.problems, fmt.Sprintf("%s: ", path)+fmt.Sprintf(format, args...))
	}
	// decode fills fields from a table's keys, warning about each key it
	// does not know or cannot decode; ok is false when one could not be.
	decode := func(where string, table map[string]toml.Primitive, fields map[string]any) (ok bool) {
		ok = true
		for _, key := range slices.Sorted(maps.Keys(table)) {
			dst, known := fields[key]
			if !known {
				warn("%sunknown key %q (ignored)", where, key)
				continue
			}
			if err := md.PrimitiveDecode(table[key], dst); err != nil {
				warn("%s%s is ignored: %v", where, key, err)
				ok = false
			}
		}
		return ok
	}
	var projects []map[string]toml.Primitive
	decode("", raw, map[string]any{"idle": &f.Idle, "max_concurrent": &f.MaxConcurrent, "listen": &f.Listen,
		"rescan": &f.Rescan, "detect": &f.Detect, "sync_interval": &f.SyncInterval, "project": &projects})
	for i, table := range projects {
		var p ProjectEntry
		where := fmt.Sprintf("project %d: ", i+1)
		if decode(where, table, map[string]any{"path": &p.Path, "host": &p.Host, "memory_dir": &p.MemoryDir, "sessions_dir": &p.SessionsDir}) {
			f.Projects = append(f.Projects, p)
		} else {
			warn("%sskipped", where)
		}
	}
	return f, nil
}

func (f File) settings(path string) Settings {
	s := Settings{Idle: DefaultIdle, MaxConcurrent: DefaultMaxConcurrent, Rescan: DefaultRescan, SyncInterval: DefaultSyncInterval,
		Detect: true, Listen: strings.TrimSpace(f.Listen)}
	s.Warnings = append(s.Warnings, f.problems...)
	warn := func(format string, args ...any) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: ", path)+fmt.Sprintf(format, args...))
	}
	if f.Idle != "" {
		if d, err := time.ParseDuration(f.Idle); err != nil || d <= 0 {
			warn("idle = %q is not a positive duration; using %s", f.Idle, DefaultIdle)
		} else {
			s.Idle = d
		}
	}
	if f.Rescan != "" {
		d, err := time.ParseDuration(f.Rescan)
		switch {
		case err != nil || d <= 0:
			warn("rescan = %q is not a positive duration; using %s", f.Rescan, DefaultRescan)
		case d < MinRescan:
			warn("rescan = %q is under %s, which would be a polling loop; using %s", f.Rescan, MinRescan, MinRescan)
			s.Rescan = MinRescan
		default:
			s.Rescan = d
		}
	}
	if v := strings.TrimSpace(f.SyncInterval); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case v == "off" || (err == nil && d == 0):
			s.SyncInterval = 0
		case err != nil || d < 0:
			warn("sync_interval = %q is not a positive duration or \"off\"; using %s", f.SyncInterval, DefaultSyncInterval)
		case d < MinSyncInterval:
			warn("sync_interval = %q is under %s, which would be a polling loop; using %s", f.SyncInterval, MinSyncInterval, MinSyncInterval)
			s.SyncInterval = MinSyncInterval
		default:
			s.SyncInterval = d
		}
	}
	switch {
	case f.MaxConcurrent < 0:
		warn("max_concurrent = %d is not positive; using %d", f.MaxConcurrent, DefaultMaxConcurrent)
	case f.MaxConcurrent > 0:
		s.MaxConcurrent = f.MaxConcurrent
	}
	if f.Detect != nil {
		s.Detect = *f.Detect
	}
	for i, p := range f.Projects {
		if err := p.validate(); err != nil {
			warn("project %d: %v; skipped", i+1, err)
			continue
		}
		s.Projects = append(s.Projects, p.clean())
	}
	return s
}

func (p ProjectEntry) validate() error {
	for _, v := range []struct{ name, val string }{{"path", p.Path}, {"memory_dir", p.MemoryDir}, {"sessions_dir", p.SessionsDir}} {
		if v.val != "" && !filepath.IsAbs(v.val) {
			return fmt.Errorf("%s %q is not an absolute path", v.name, v.val)
		}
		if strings.ContainsRune(v.val, 0) {
			return fmt.Errorf("%s holds a NUL byte", v.name)
		}
	}
	if p.MemoryDir == "" && (p.Path == "" || p.Host == "") {
		return errors.New("needs memory_dir, or path and host")
	}
	return nil
}

func (p ProjectEntry) clean() ProjectEntry {
	for _, s := range []*string{&p.Path, &p.MemoryDir, &p.SessionsDir} {
		if *s != "" {
			*s = filepath.Clean(*s)
		}
	}
	return p
}

// AddProject appends p to the daemon file at path, creating it, unless an
// equal entry is there already (added reports which). Every other byte of
// the file is kept: the entry is appended as text, not re-encoded, so the
// user's comments survive. The write is atomic.
func AddProject(path string, p ProjectEntry) (added bool, err error) {
	if err := p.validate(); err != nil {
		return false, err
	}
	p = p.clean()
	f, err := readFile(path)
	if err != nil {
		return false, err
	}
	for _, q := range f.Projects {
		if q.clean() == p {
			return false, nil
		}
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("daemon file: %w", err)
	}
	var b strings.Builder
	b.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteByte('\n')
	}
	if len(old) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString("[[project]]\n")
	enc := toml.NewEncoder(&b)
	if err := enc.Encode(p); err != nil {
		return false, fmt.Errorf("daemon file: encoding the project: %w", err)
	}
	// Re-parse what will be written: an entry that made the file unreadable
	// must never replace a good one.
	if _, err := parseFile(path, b.String()); err != nil {
		return false, fmt.Errorf("daemon file: the new entry does not parse back: %w", err)
	}
	return true, fsutil.WriteFileAtomic(path, []byte(b.String()), 0o600, true)
}
