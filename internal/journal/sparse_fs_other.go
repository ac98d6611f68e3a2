//go:build !linux

package journal

// kernelCtime is false off Linux: the file-system allowlist is Linux's
// statfs magic numbers, so a sparse staging compares every written file's
// original by content (see resolveBase).
func kernelCtime(string) bool { return false }
