//go:build unix

package main

import "syscall"

// detachedAttr puts the background dream in a session (and so a process
// group) of its own: the agent's terminal closing, or the agent killing its
// hook's process group, does not reach it.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
