package sandbox

import (
	"io/fs"
	"os"
)

// OpenRegularFile opens name under root for reading as the tools do: without
// blocking in open(2), and only if the opened file is a regular file (a FIFO,
// socket or device is refused with ErrNotRegular). It is for readers outside
// this package that walk memory themselves (the offline engine), so that
// they need no copy of the rule.
func OpenRegularFile(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	return openRegular(root, name, false)
}
