package hookinstall

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/jsonc"
)

// BackupSuffix names the copy of a settings file kept before dream first
// changes it.
const BackupSuffix = ".dream-backup"

// Result is what InstallFile or RemoveFile did (or, dry, would do).
type Result struct {
	// Path is the file written: the settings path with symbolic links
	// resolved, so that a settings file linked from a dotfiles checkout
	// stays a link.
	Path          string
	Before, After []byte
	// Existed: the file was there before.
	Existed bool
	Changed bool
	// Backup is the backup file, when one was written or used (and, by
	// --remove, removed).
	Backup string
	// Command is the command of the dream hook the file held before: by
	// InstallFile when it replaced it (another dream binary), by RemoveFile
	// the one it removed.
	Command string
	// Restored: --remove put the backup back byte for byte, because the
	// file was exactly as dream's install left it.
	Restored bool
	// Deleted: the file did not exist before dream created it, and was
	// removed again.
	Deleted bool
}

// read returns the settings file's real path and bytes (nil when absent).
func read(path string) (real string, data []byte, existed bool, err error) {
	real = path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	data, err = os.ReadFile(real)
	if errors.Is(err, fs.ErrNotExist) {
		return real, nil, false, nil
	}
	if err != nil {
		return real, nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	return real, data, true, nil
}

// InstallFile adds the hook to t.Path, or points a dream hook that runs
// another binary at t.Command. Unless dry, it keeps the file's previous
// bytes in <path>.dream-backup before adding a hook, and writes the new
// bytes atomically with the file's permissions.
func InstallFile(t Target, dry bool) (Result, error) {
	real, before, existed, err := read(t.Path)
	if err != nil {
		return Result{}, err
	}
	prior, _, err := InstalledCommand(t, before)
	if err != nil {
		return Result{}, err
	}
	after, changed, err := Install(t, before)
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: real, Before: before, After: after, Existed: existed, Changed: changed, Command: prior}
	if !changed || dry {
		return res, nil
	}
	perm := fs.FileMode(0o600)
	if existed {
		info, err := os.Stat(real)
		if err != nil {
			return res, err
		}
		perm = info.Mode().Perm()
		// Replacing a stale dream hook's command keeps the backup taken
		// before dream's first change: --remove must give back that file,
		// not one holding the stale hook.
		if prior == "" {
			res.Backup = real + BackupSuffix
			if err := fsutil.WriteFileAtomic(res.Backup, before, perm, true); err != nil {
				return res, fmt.Errorf("keeping a backup of %s: %w", real, err)
			}
		}
	} else if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return res, err
	}
	if err := fsutil.WriteFileAtomic(real, after, perm, true); err != nil {
		return res, fmt.Errorf("writing %s: %w", real, err)
	}
	return res, nil
}

// RemoveFile takes the hook out of t.Path. When the file is exactly what
// installing into the backup gives (with the command the file holds, so a
// dream binary that moved since still restores), the backup is put back
// byte for byte; otherwise (the user edited it since) only the hook's own
// bytes are cut. Either way the backup has served and is removed with the
// hook. A file dream created that holds nothing else afterwards is deleted.
func RemoveFile(t Target, dry bool) (Result, error) {
	real, before, existed, err := read(t.Path)
	if err != nil || !existed {
		return Result{Path: real}, err
	}
	installed, _, err := InstalledCommand(t, before)
	if err != nil {
		return Result{}, err
	}
	after, changed, err := Remove(t, before)
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: real, Before: before, After: after, Existed: true, Changed: changed, Command: installed}
	if !changed {
		return res, nil
	}
	backup := real + BackupSuffix
	as := t
	as.Command = installed
	if b, err := os.ReadFile(backup); err == nil {
		res.Backup = backup
		if again, _, err := Install(as, b); err == nil && bytes.Equal(again, before) {
			res.After, res.Restored = b, true
		}
	} else if isEmptyObject(after) {
		res.After, res.Deleted = nil, true
	}
	if dry {
		return res, nil
	}
	if res.Deleted {
		return res, os.Remove(real)
	}
	info, err := os.Stat(real)
	if err != nil {
		return res, err
	}
	if err := fsutil.WriteFileAtomic(real, res.After, info.Mode().Perm(), true); err != nil {
		return res, fmt.Errorf("writing %s: %w", real, err)
	}
	if res.Backup != "" {
		if err := os.Remove(res.Backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("the hook is removed; removing the backup %s: %w", res.Backup, err)
		}
	}
	return res, nil
}

// isEmptyObject: {} with nothing else, not even a comment.
func isEmptyObject(src []byte) bool {
	v, comments, err := jsonc.Parse(src)
	return err == nil && !comments && v.Kind == jsonc.Object && len(v.Members) == 0
}
