// Package gatestamp lets `dream maybe` answer a closed time gate it has
// already decided without deciding it again: the early start (package
// early) records, beside its answer, every input the decision read (the
// command line, the working directory, the environment, the executable,
// and the files: the user's config, the absent project config, the lock
// file, the journal), and the next run of the same command answers from
// that record in this package's init, after about two dozen initialisers
// instead of about 145, when every input is as it was and the gate's own
// rule, evaluated again against the clock, still says closed.
//
// It is a cache, and a cache may only ever be right: any difference in
// any input, or any doubt, is a miss, and a miss is the early start and
// then the full command, as before.
//   - The command line, the working directory, the executable (its path,
//     inode and times: an upgrade is a new inode) and the whole
//     environment, sorted, are hashed into the record's name (FNV-1a, 128
//     bits: SHA-256 would wait for the FIPS module's thirty initialisers;
//     no value of the environment is written anywhere, and the records,
//     0600 in a 0700 dir, are the user's alone). An environment naming a
//     variable twice is never recorded: which value a lookup sees depends
//     on an order the hash ignores.
//   - Every file is compared by lstat (and stat, through a symlink):
//     device, inode, mode, size, mtime and ctime. ctime cannot be set back
//     by a user, so a rewrite that restores the mtime still differs. A
//     file that was absent is compared with its nearest existing parent
//     too, whose times change when an entry is created in it.
//   - A record is only written when every file's times are more than
//     RacyMargin older than the start of the decision (git's "racily
//     clean" rule): a file changed while the decision read it could
//     otherwise keep its new times with the old decision.
//   - The answer's only part that depends on the clock, the hours since
//     the last consolidation, is formatted again; the rest (the gate's
//     words, the time it opens) is the full command's own text, as the
//     early start rendered it.
//
// It imports only packages the Go runtime's neighbours initialise anyway
// or that have no initialisation work, so that its init runs before
// everything heavy (see package early and bench/startfloor). Records live
// in the user's default state dir ($XDG_STATE_HOME/dream/gate, where the
// trust store lives too), the only place the init can find without the
// settings; at most Keep of them are kept.
package gatestamp

import (
	"errors"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strconv"
	"time"
)

const (
	// Marker stands for the hours figure in an answer handed to Record.
	Marker = "@@hours@@"
	// RacyMargin is how much older than the decision every file's times
	// must be for the decision to be recorded: more than the coarsest
	// timestamp granularity of the file systems dream runs on.
	RacyMargin = 2 * time.Second
	// Keep is how many records the gate dir keeps (the newest).
	Keep = 64

	header     = "dream-gate-stamp 1"
	fnv128Size = 16
	maxBytes   = 64 << 10
)

// Want is what an input file must be for a decision to be recorded.
type Want int

const (
	// AnyState is any file, or none: the decision read what is there.
	AnyState Want = iota
	// Absent is no file at all (not even a dangling symlink).
	Absent
	// Regular is a regular file, not through a symlink.
	Regular
	// AbsentOrEmptyDir is no file, or a directory with no entries: a
	// directory whose entries were read is only proven unchanged by its own
	// times if there were none to change inside.
	AbsentOrEmptyDir
)

// Input is one file a decision read.
type Input struct {
	Path string
	Want Want
}

// Decision is a closed time gate as the early start decided it: the gate's
// rule (closed while the last consolidation is less than Wait ago and not
// more than Skew in the future) and the answer printed for it, with Marker
// where the hours since the last consolidation go.
type Decision struct {
	Last   time.Time
	Wait   time.Duration
	Skew   time.Duration
	Answer string
	Inputs []Input
}

// Key is what, besides the files, one run's decision depends on.
type Key struct {
	Exe     string // the executable's path and fingerprint
	Cwd     string
	Args    []string // os.Args[1:]
	Environ []string // os.Environ()
}

// ErrNotRecorded says why Record wrote nothing (wrapped with the reason).
var ErrNotRecorded = errors.New("gate stamp not recorded")

// Closed is the time gate's rule for "closed": a last consolidation that
// is known, not more than skew ahead of now (clock skew opens the gate),
// and less than wait ago. quickgate decides with it too.
func Closed(last, now time.Time, wait, skew time.Duration) bool {
	return !last.IsZero() && !last.After(now.Add(skew)) && now.Sub(last) < wait
}

// Hours is the hours figure of the closed gate's detail: d in hours, one
// decimal (what fmt's %.1f writes).
func Hours(d time.Duration) string {
	return strconv.FormatFloat(d.Hours(), 'f', 1, 64)
}

// Dir is where the records live: $XDG_STATE_HOME/dream/gate, else
// ~/.local/state/dream/gate (the default state dir's rule, settings.Defaults;
// a test holds them equal). "" when neither can be formed.
func Dir(env func(string) (string, bool)) string {
	if v, ok := env("XDG_STATE_HOME"); ok && hasPrefix(v, "/") {
		return trimSlashes(v) + "/dream/gate"
	}
	home, _ := env("HOME")
	if home == "" {
		return ""
	}
	return trimSlashes(home) + "/.local/state/dream/gate"
}

// ProcessKey is this process's key.
func ProcessKey() (Key, error) {
	exe, err := os.Executable()
	if err != nil {
		return Key{}, err
	}
	fp, _, err := fingerprint(exe)
	if err != nil {
		return Key{}, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return Key{}, err
	}
	return Key{Exe: exe + "\x00" + fp, Cwd: cwd, Args: os.Args[1:], Environ: os.Environ()}, nil
}

// sum is the key's name for its record; ok is false for an environment
// that names a variable twice.
func (k Key) sum() (name string, ok bool) {
	env := slices.Clone(k.Environ)
	slices.Sort(env)
	for i := 1; i < len(env); i++ {
		// Entries of one name are adjacent once sorted: every string
		// between two that start with "NAME=" starts with it too.
		a, _, _ := cut(env[i-1], "=")
		b, _, _ := cut(env[i], "=")
		if a == b {
			return "", false
		}
	}
	h := fnv.New128a()
	field := func(s string) {
		var n [20]byte
		h.Write(strconv.AppendInt(n[:0], int64(len(s)), 10))
		h.Write([]byte{':'})
		io.WriteString(h, s)
	}
	field(header)
	field(k.Exe)
	field(k.Cwd)
	field(strconv.Itoa(len(k.Args)))
	for _, a := range k.Args {
		field(a)
	}
	field(strconv.Itoa(len(env)))
	for _, e := range env {
		field(e)
	}
	const digits = "0123456789abcdef"
	var b []byte
	for _, c := range h.Sum(nil) {
		b = append(b, digits[c>>4], digits[c&15])
	}
	return string(b), true
}

// record is a stamp as stored.
type record struct {
	key    string
	last   int64 // unix nanoseconds
	wait   int64
	skew   int64
	before string
	after  string
	files  []fileState
}

type fileState struct {
	path string
	fp   string
}

// Record stores d as the answer for k in dir, when every input is as it
// must be and older than RacyMargin before start (when the decision began
// reading). It replaces the file atomically and keeps the newest Keep
// records. A non-nil error (ErrNotRecorded, or the file system's) only
// means the next run decides again.
func Record(dir string, k Key, d Decision, start time.Time) error {
	if dir == "" || !hasPrefix(dir, "/") {
		return errNot("no state dir")
	}
	name, ok := k.sum()
	if !ok {
		return errNot("the environment names a variable twice")
	}
	before, after, ok := cut(d.Answer, Marker)
	if !ok || index(after, Marker) >= 0 {
		return errNot("the answer does not hold the hours marker once")
	}
	r := record{key: name, last: d.Last.UnixNano(), wait: int64(d.Wait), skew: int64(d.Skew), before: before, after: after}
	for _, in := range d.Inputs {
		if in.Path == "" || !hasPrefix(in.Path, "/") {
			return errNot("input " + strconv.Quote(in.Path) + " is not an absolute path")
		}
		fp, newest, err := fingerprint(in.Path)
		if err != nil {
			return errNot(err.Error())
		}
		if err := check(in, fp); err != nil {
			return err
		}
		if !newest.Before(start.Add(-RacyMargin)) {
			return errNot(in.Path + " changed too recently to be proven unchanged later")
		}
		r.files = append(r.files, fileState{path: in.Path, fp: fp})
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return err
	}
	_, werr := f.WriteString(r.format())
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), dir+"/"+name)
	}
	if werr != nil {
		os.Remove(f.Name())
		return werr
	}
	prune(dir)
	return nil
}

func errNot(why string) error { return errors.Join(ErrNotRecorded, errors.New(why)) }

// check reports whether the fingerprint fp of in is what in.Want allows.
func check(in Input, fp string) error {
	switch in.Want {
	case Absent:
		if !hasPrefix(fp, "absent") {
			return errNot(in.Path + " exists")
		}
	case Regular:
		if !hasPrefix(fp, kindRegular) {
			return errNot(in.Path + " is not a regular file")
		}
	case AbsentOrEmptyDir:
		if hasPrefix(fp, "absent") {
			return nil
		}
		if !hasPrefix(fp, kindDir) {
			return errNot(in.Path + " is not a directory")
		}
		d, err := os.Open(in.Path)
		if err != nil {
			return errNot(err.Error())
		}
		names, err := d.Readdirnames(1)
		d.Close()
		if len(names) > 0 || (err != nil && err != io.EOF) {
			return errNot(in.Path + " has entries")
		}
	}
	return nil
}

// prune removes all but the newest Keep records, and temporary files a
// crashed writer left more than a minute ago.
func prune(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	entries, _ := d.ReadDir(-1)
	d.Close()
	type aged struct {
		name string
		mod  time.Time
	}
	var records []aged
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if hasPrefix(e.Name(), ".tmp-") {
			if time.Since(info.ModTime()) > time.Minute {
				os.Remove(dir + "/" + e.Name())
			}
			continue
		}
		records = append(records, aged{e.Name(), info.ModTime()})
	}
	if len(records) <= Keep {
		return
	}
	slices.SortFunc(records, func(a, b aged) int { return b.mod.Compare(a.mod) })
	for _, r := range records[Keep:] {
		os.Remove(dir + "/" + r.name)
	}
}

// Answer is the answer recorded for k in dir, if there is one, every file
// it depends on is as it was, and the gate is still closed at now.
func Answer(dir string, k Key, now time.Time) ([]byte, bool) {
	if dir == "" {
		return nil, false
	}
	name, ok := k.sum()
	if !ok {
		return nil, false
	}
	data, ok := readBounded(dir + "/" + name)
	if !ok {
		return nil, false
	}
	r, err := parse(data)
	if err != nil || r.key != name {
		return nil, false
	}
	for _, f := range r.files {
		fp, _, err := fingerprint(f.path)
		if err != nil || fp != f.fp {
			return nil, false
		}
	}
	last := time.Unix(0, r.last)
	if !Closed(last, now, time.Duration(r.wait), time.Duration(r.skew)) {
		return nil, false
	}
	return []byte(r.before + Hours(now.Sub(last)) + r.after), true
}

// readBounded reads a regular file of at most maxBytes.
func readBounded(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil || len(b) > maxBytes {
		return "", false
	}
	return string(b), true
}

// format renders r, one field per line, strings quoted, ending in "end"
// (a record cut short does not parse).
func (r record) format() string {
	s := header + "\n" +
		"key " + r.key + "\n" +
		"last " + strconv.FormatInt(r.last, 10) + "\n" +
		"wait " + strconv.FormatInt(r.wait, 10) + "\n" +
		"skew " + strconv.FormatInt(r.skew, 10) + "\n" +
		"before " + strconv.Quote(r.before) + "\n" +
		"after " + strconv.Quote(r.after) + "\n"
	for _, f := range r.files {
		s += "file " + f.fp + " " + strconv.Quote(f.path) + "\n"
	}
	return s + "end\n"
}

// parse reads what format wrote; anything else is an error.
func parse(data string) (record, error) {
	var r record
	ls := lines(data)
	if len(ls) < 9 || ls[0] != header || ls[len(ls)-1] != "" || ls[len(ls)-2] != "end" {
		return r, errors.New("not a complete gate stamp")
	}
	field := func(i int, name string) (string, error) {
		v, ok := cutPrefix(ls[i], name+" ")
		if !ok {
			return "", errors.New("line " + strconv.Itoa(i+1) + ": want " + name)
		}
		return v, nil
	}
	integer := func(i int, name string) (int64, error) {
		v, err := field(i, name)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(v, 10, 64)
	}
	quoted := func(s string) (string, error) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil || q != s {
			return "", errors.New("not one quoted string")
		}
		return strconv.Unquote(q)
	}
	var err error
	if r.key, err = field(1, "key"); err != nil {
		return r, err
	}
	if len(r.key) != 2*fnv128Size || !isLowerHex(r.key) {
		return r, errors.New("bad key")
	}
	if r.last, err = integer(2, "last"); err != nil {
		return r, err
	}
	if r.wait, err = integer(3, "wait"); err != nil {
		return r, err
	}
	if r.skew, err = integer(4, "skew"); err != nil {
		return r, err
	}
	v, err := field(5, "before")
	if err != nil {
		return r, err
	}
	if r.before, err = quoted(v); err != nil {
		return r, err
	}
	if v, err = field(6, "after"); err != nil {
		return r, err
	}
	if r.after, err = quoted(v); err != nil {
		return r, err
	}
	for i := 7; i < len(ls)-2; i++ {
		v, err := field(i, "file")
		if err != nil {
			return r, err
		}
		fp, path, ok := cut(v, " ")
		if !ok || fp == "" {
			return r, errors.New("line " + strconv.Itoa(i+1) + ": want a fingerprint and a path")
		}
		if path, err = quoted(path); err != nil || !hasPrefix(path, "/") {
			return r, errors.New("line " + strconv.Itoa(i+1) + ": bad path")
		}
		r.files = append(r.files, fileState{path: path, fp: fp})
	}
	return r, nil
}

func init() {
	if len(os.Args) < 2 || os.Args[1] != "maybe" {
		return
	}
	k, err := ProcessKey()
	if err != nil {
		return
	}
	out, ok := Answer(Dir(os.LookupEnv), k, time.Now())
	if !ok {
		return
	}
	os.Stdout.Write(out)
	os.Exit(0)
}
