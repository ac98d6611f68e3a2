//go:build unix

package audit

import "syscall"

// detachedAttr puts a background roll-up in a session of its own, so that
// the terminal closing or the agent killing its hook's process group does
// not stop it halfway (which loses nothing, but redoes the work).
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
