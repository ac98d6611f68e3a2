package offline

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream/internal/fsutil"
)

// writeAtomic replaces path with data so that a reader sees the old file or
// the new one and never half of either: a temporary file beside it, renamed
// over it.
//
// It does not fsync. The engine writes a dream's staging copy, which the
// journal's commit makes durable when it lands (a crash before that throws
// the staging copy away), so a sync per file here would only cost time: on
// a busy disk, tens of seconds for a few thousand files.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	if perm == 0 {
		perm = 0o644
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), fsutil.TempPrefix+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}
