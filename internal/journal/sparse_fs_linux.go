//go:build linux

package journal

import "github.com/dreamkit/dream/internal/fsutil"

// kernelCtime reports whether the file system holding path keeps ctime as
// the local kernel's change time (fsutil.LocalKernelFS); where it does
// not, a sparse staging compares every written file's original by
// content.
func kernelCtime(path string) bool { return fsutil.LocalKernelFS(path) }
