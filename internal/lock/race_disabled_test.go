//go:build !race

package lock

const raceDetector = false
