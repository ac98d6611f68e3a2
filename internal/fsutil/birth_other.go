//go:build !linux && !darwin

package fsutil

import (
	"os"
	"time"
)

// BornBefore reports whether the file system says rel was created before
// t; here it cannot say.
func BornBefore(*os.Root, string, time.Time) bool { return false }
