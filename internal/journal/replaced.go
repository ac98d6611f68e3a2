package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// RemoveReplaced removes a directory CommitResult.Replaced named, the
// subdirectories side by side: each removal frees files, and a file
// system waits on the device for each. It refuses a path that is not one.
func RemoveReplaced(dir string) error {
	if !strings.HasPrefix(filepath.Base(dir), replacedPrefix) {
		return fmt.Errorf("journal: remove replaced files: %s is not a dir of them", dir)
	}
	subs, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("journal: remove replaced files: %w", err)
	}
	errs := make([]error, len(subs))
	var wg sync.WaitGroup
	for i, sub := range subs {
		wg.Go(func() { errs[i] = os.RemoveAll(filepath.Join(dir, sub.Name())) })
	}
	wg.Wait()
	crashPoint("replaced:freed")
	if err := errors.Join(append(errs, os.RemoveAll(dir))...); err != nil {
		return fmt.Errorf("journal: remove replaced files: %w", err)
	}
	return nil
}

// removeLeftReplaced removes the kept files under root that no commit's
// caller removed (it died first).
func removeLeftReplaced(root string) error {
	dirs, _ := filepath.Glob(filepath.Join(root, replacedPrefix+"*"))
	var errs []error
	for _, d := range dirs {
		errs = append(errs, RemoveReplaced(d))
	}
	return errors.Join(errs...)
}
