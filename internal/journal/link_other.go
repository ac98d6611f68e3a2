//go:build !unix

package journal

import (
	"errors"
	"os"
)

// linkIn is not offered here: a commit copies every file.
func linkIn(*os.Root, string, string) error { return errors.ErrUnsupported }
