//go:build !unix

package audit

import "syscall"

// detachedAttr: off Unix the roll-up is simply not waited for.
func detachedAttr() *syscall.SysProcAttr { return nil }
