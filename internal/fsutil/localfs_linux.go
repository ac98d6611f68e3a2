package fsutil

import "syscall"

// Magic numbers of statfs(2)'s f_type (linux/magic.h) for the local
// kernel's own file systems.
const (
	ext4Magic    = 0xEF53 // ext2, ext3, ext4
	xfsMagic     = 0x58465342
	btrfsMagic   = 0x9123683E
	tmpfsMagic   = 0x01021994
	f2fsMagic    = 0xF2F52010
	zfsMagic     = 0x2FC12FC1
	overlayMagic = 0x794C7630 // its real upper and lower inodes are one of these
)

// LocalKernelFS reports whether the file system holding path is one the
// local kernel keeps itself, where syncfs(2) makes everything written
// durable (SyncFS). FUSE mounts (whose syncfs never reaches the server), FAT
// and network file systems (CIFS has no syncfs at all) are not.
func LocalKernelFS(path string) bool {
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
