//go:build !unix

package fsutil

import "os"

// LockFile opens path (creating it); without flock there is no lock, so
// only one process at a time may rely on what it guards.
func LockFile(path string) (f *os.File, unlock func(), err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}
