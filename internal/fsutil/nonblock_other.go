//go:build !unix

package fsutil

// nonBlockFlag is zero where open(2) has no non-blocking mode; the fstat
// check after opening still refuses anything but regular files.
const nonBlockFlag = 0
