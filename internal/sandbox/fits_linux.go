package sandbox

import "syscall"

// fsLimits returns NAME_MAX as the file systems holding dirs report it
// (statfs's f_namelen: 255 on ext4, xfs and tmpfs, less on some) and
// Linux's PATH_MAX, the smallest over dirs.
func fsLimits(dirs []string) (nameMax, pathMax int) {
	nameMax, pathMax = 255, 4096
	for _, dir := range dirs {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err == nil && st.Namelen > 0 && int(st.Namelen) < nameMax {
			nameMax = int(st.Namelen)
		}
	}
	return nameMax, pathMax
}
