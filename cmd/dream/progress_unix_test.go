//go:build unix

package main

import (
	"bytes"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// /dev/null is a character device, not a terminal: output sent there (a
// hook's, a cron line's) gets plain lines. A file and a pipe are not
// terminals either; a pseudo-terminal is.
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"/dev/null": null, "a file": file, "a pipe": w} {
		if isTerminal(f) {
			t.Errorf("isTerminal(%s) = true", name)
		}
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Error("isTerminal(a buffer) = true")
	}
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Logf("no pseudo-terminal here (%v): the positive case is not checked", err)
		return
	}
	pty := os.NewFile(uintptr(fd), "ptmx")
	defer pty.Close()
	if !isTerminal(pty) {
		t.Error("isTerminal(a pseudo-terminal) = false")
	}
}
