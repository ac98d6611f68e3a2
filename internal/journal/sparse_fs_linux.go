//go:build linux

package journal

import "syscall"

// Magic numbers of statfs(2)'s f_type (linux/magic.h) for file systems
// whose ctime is the kernel's own: set by the local kernel on every write,
// chmod, link and rename, and settable by no user-space call.
const (
	ext4Magic    = 0xEF53 // ext2, ext3, ext4
	xfsMagic     = 0x58465342
	btrfsMagic   = 0x9123683E
	tmpfsMagic   = 0x01021994
	f2fsMagic    = 0xF2F52010
	zfsMagic     = 0x2FC12FC1
	overlayMagic = 0x794C7630 // the ctime of the real upper or lower inode
)

// kernelCtime reports whether the file system holding path keeps ctime as
// the local kernel's change time. FUSE mounts (which may report a synced
// file's mtime as its ctime), FAT (which has no ctime) and network file
// systems (whose attributes can be cached, stale, for seconds) do not, and
// a sparse staging then compares every written file's original by content.
func kernelCtime(path string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case ext4Magic, xfsMagic, btrfsMagic, tmpfsMagic, f2fsMagic, zfsMagic, overlayMagic:
		return true
	}
	return false
}
