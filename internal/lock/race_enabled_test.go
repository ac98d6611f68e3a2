//go:build race

package lock

// raceDetector is true when the test binary, and so every helper process it
// re-executes, runs under the race detector (several times slower).
const raceDetector = true
