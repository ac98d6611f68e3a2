//go:build unix

package fsutil

import "syscall"

// nonBlockFlag makes open(2) of a FIFO return at once instead of waiting for
// a writer. On a regular file or directory it has no effect on reads.
const nonBlockFlag = syscall.O_NONBLOCK
