//go:build !(linux && amd64)

package startfloor

import "os"

// mtimeAt is the mtime (Unix nanoseconds) of dir/name by lstat(2), where
// package syscall has no fstatat to call.
func mtimeAt(_ int, dir, name string) (int64, error) {
	fi, err := os.Lstat(dir + "/" + name)
	if err != nil {
		return 0, err
	}
	return fi.ModTime().UnixNano(), nil
}
