//go:build !linux

package sandbox

// fsLimits returns the limits of macOS (NAME_MAX 255, PATH_MAX 1024), the
// smallest of the systems dream runs on besides Linux, whose statfs has no
// name length.
func fsLimits([]string) (nameMax, pathMax int) { return 255, 1024 }
