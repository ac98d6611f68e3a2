//go:build !linux && !darwin

package gatestamp

import "errors"

// errUnsupported: this system's stat is not read here; nothing is recorded
// and nothing answered.
var errUnsupported = errors.New("gate stamps are not supported on this system")

func stat(string, bool) (fileInfo, error) { return fileInfo{}, errUnsupported }
