//go:build !linux

package lock

import "os"

// Without user xattrs (or where dream does not use them) the state-dir
// record alone carries the prior mtime of a dead dream.

func writeHolderAttr(*os.File, record) {}

func readHolderAttr(*os.File) (record, bool) { return record{}, false }

func clearHolderAttr(*os.File) {}
