package fsutil

import "testing"

func TestDiscardIn(t *testing.T) {
	// Lines as proc(5) documents them, and as this kind of machine has.
	info := `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict
30 27 8:1 / /data rw,noatime shared:1 - xfs /dev/sda1 rw,attr2
31 27 8:2 / /sync rw,noatime,discard - xfs /dev/sda2 rw
32 27 0:40 / /b rw,relatime shared:5 master:2 - btrfs /dev/sdb rw,ssd,discard=async,space_cache=v2
33 27 0:41 / /c rw,relatime - btrfs /dev/sdc rw,discard=sync
34 27 8:3 / /nod rw - ext4 /dev/sda3 rw,nodiscard
35 27 8:4 / /bad rw
`
	for _, tc := range []struct {
		dev  string
		want bool
	}{
		{"254:0", true}, // in the super block's options
		{"8:1", false},  // none
		{"8:2", true},   // in the mount's options
		{"0:40", false}, // btrfs's async discard does not wait
		{"0:41", true},  // btrfs's sync discard does
		{"8:3", false},  // nodiscard is no discard
		{"8:4", false},  // a line cut short
		{"0:21", false}, // proc
		{"9:9", false},  // no such device
	} {
		if got := discardIn(info, tc.dev); got != tc.want {
			t.Errorf("discardIn(%s) = %v, want %v", tc.dev, got, tc.want)
		}
	}
}
