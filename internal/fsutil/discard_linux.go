package fsutil

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// FreeWaitsOnDevice reports whether freeing a file's blocks on the file
// system holding dir waits for the device: it is mounted with online
// discard ("discard", or btrfs's "discard=sync", among the mount or the
// super block's options in /proc/self/mountinfo, proc(5)). There every
// unlink of a file's last name, and every rename over one, sends the
// device a discard of its blocks and waits for it (ext4 without a journal
// in the call itself, with one in the journal commit a directory sync
// waits for): about 50 µs a file on a virtual disk, where a rename alone
// is a few. btrfs's default "discard=async" queues them and does not wait.
func FreeWaitsOnDevice(dir string) bool {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return false
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	return discardIn(string(info), fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
}

// discardIn reports whether a mount of device dev ("major:minor") in
// mountinfo discards synchronously. A line is: mount id, parent id,
// major:minor, root, mount point, mount options, optional fields, "-",
// file system type, source, super options.
func discardIn(mountinfo, dev string) bool {
	for line := range strings.SplitSeq(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[2] != dev {
			continue
		}
		opts := f[5]
		for i := 6; i+3 < len(f); i++ {
			if f[i] == "-" {
				opts += "," + f[i+3]
				break
			}
		}
		for o := range strings.SplitSeq(opts, ",") {
			if o == "discard" || o == "discard=sync" {
				return true
			}
		}
	}
	return false
}
