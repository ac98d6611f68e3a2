//go:build !linux

package journal

import (
	"errors"
	"io/fs"
	"os"
)

// Elsewhere than Linux there is no lease to prove that no one can still
// write a staged file (see link_linux.go), so a commit always copies.

var linkInstalls = false

type linker struct{}

func newLinker(*os.Root, string, string, map[string]fingerprint, string) *linker { return nil }

func (l *linker) close() {}

func (l *linker) install(string, fs.FileMode, int) (string, bool, error) { return "", false, nil }

func (l *linker) restore(string, string) error { return nil }

func (l *linker) rename(string, string) (func(), error) {
	return nil, errors.New("no linked installs here")
}
