//go:build linux || darwin

package gatestamp

import "syscall"

// stat is lstat(2), or stat(2) when follow is set, as a fileInfo (infoOf
// holds the one difference between the systems: Stat_t's field names and
// widths).
func stat(path string, follow bool) (fileInfo, error) {
	var st syscall.Stat_t
	var err error
	if follow {
		err = syscall.Stat(path, &st)
	} else {
		err = syscall.Lstat(path, &st)
	}
	if err != nil {
		return fileInfo{}, err
	}
	return infoOf(&st), nil
}
