//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package journal

import "io/fs"

// identity is unknown here: every comparison falls back to hashing.
func identity(fs.FileInfo) (uint64, int64, bool) { return 0, 0, false }
