package lock

import (
	"encoding/json"
	"os"

	"golang.org/x/sys/unix"
)

// holderAttr is the extended attribute, on the lock file's own inode, that
// repeats the guard record (holder PID, prior mtime) for dream processes
// with another state dir. It is invisible to the other agents, which read
// only the body and mtime, and travels with the inode through their
// in-place writes; a record naming a PID that is no longer the body's is
// ignored. Where the file system has no user xattrs, the state-dir record
// alone applies.
const holderAttr = "user.dream.holder"

// writeHolderAttr records r on f's inode; best effort.
func writeHolderAttr(f *os.File, r record) {
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	_ = unix.Fsetxattr(int(f.Fd()), holderAttr, b, 0)
}

// readHolderAttr reads the record on f's inode; ok is false when there is
// none or it is unreadable.
func readHolderAttr(f *os.File) (record, bool) {
	buf := make([]byte, maxRecord)
	n, err := unix.Fgetxattr(int(f.Fd()), holderAttr, buf)
	if err != nil || n <= 0 {
		return record{}, false
	}
	return parseRecord(buf[:n])
}

// clearHolderAttr removes the record from f's inode; best effort.
func clearHolderAttr(f *os.File) {
	_ = unix.Fremovexattr(int(f.Fd()), holderAttr)
}
