//go:build !linux

package fsutil

// FreeWaitsOnDevice reports whether freeing a file's blocks on the file
// system holding dir waits for the device; only Linux says (see
// discard_linux.go).
func FreeWaitsOnDevice(dir string) bool { return false }
