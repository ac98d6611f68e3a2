package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dreamkit/dream/internal/fsutil"
)

// The files a commit replaced, kept (CommitOptions.KeepReplaced).
//
// While the renames run they are hard links in the transaction's
// replacedName dir, spread over replacedDirs subdirectories so that the
// renames of several directories at once do not all wait on one
// directory's lock. Before the transaction is finished the dir moves
// beside the transactions as replacedPrefix + id: a name no transaction
// can have (an id does not start with a dot), which list skips and
// Recover removes once no process is left to.
const (
	replacedName   = "replaced"
	replacedPrefix = ".replaced-"
	replacedDirs   = 8
)

// moveReplaced moves the transaction's kept files out of its dir and
// returns where to ("" when it kept none, or could not move them: then
// finish frees them with the transaction).
func (t *Txn) moveReplaced(kept string) string {
	to := filepath.Join(filepath.Dir(t.txnDir), replacedPrefix+t.rec.ID)
	if err := os.Rename(kept, to); err != nil {
		return ""
	}
	return to
}

// RemoveReplaced removes a directory CommitResult.Replaced named, its
// subdirectories side by side: each removal frees files, and a file system
// mounted with discard waits on the device for each. It refuses a path not
// named like one. Anything at that name that is no directory (a symlink
// among them) is removed itself, never followed: the removal of the
// subdirectories goes through an os.Root of the directory.
func RemoveReplaced(dir string) error {
	if !strings.HasPrefix(filepath.Base(dir), replacedPrefix) {
		return fmt.Errorf("journal: remove replaced files: %s is not a dir of them", dir)
	}
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("journal: remove replaced files: %w", err)
	case !info.IsDir():
		if err := os.Remove(dir); err != nil {
			return fmt.Errorf("journal: remove replaced files: %w", err)
		}
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("journal: remove replaced files: %w", err)
	}
	defer root.Close()
	f, err := root.Open(".")
	if err != nil {
		return fmt.Errorf("journal: remove replaced files: %w", err)
	}
	subs, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("journal: remove replaced files: %w", err)
	}
	errs := make([]error, len(subs)+1)
	var wg sync.WaitGroup
	for i, sub := range subs {
		wg.Go(func() { errs[i] = root.RemoveAll(sub.Name()) })
	}
	wg.Wait()
	crashPoint("replaced:freed")
	errs[len(subs)] = os.RemoveAll(dir) // a symlink put there meanwhile is removed itself
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("journal: remove replaced files: %w", err)
	}
	return nil
}

// removeLeftReplaced removes, best effort, the kept files under root that
// no commit's caller freed (it died first).
func removeLeftReplaced(root string) {
	dirs, _ := fsutil.Glob(root, replacedPrefix+"*")
	for _, dir := range dirs {
		_ = RemoveReplaced(dir)
	}
}
