//go:build !unix

package main

import "syscall"

// detachedAttr: off Unix the child is simply not waited for.
func detachedAttr() *syscall.SysProcAttr { return nil }
