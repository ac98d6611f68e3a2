//go:build !unix

package lossguard

import "time"

// processCPU is not measured here: the CPU metrics read zero.
func processCPU() time.Duration { return 0 }
