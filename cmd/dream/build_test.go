package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
)

// crashBin is the dreamcrashtest build used by the crash tests.
var crashBin string

// buildBinaries builds, once for the package, the binaries the end-to-end
// tests run. Without -race one build serves both: the dreamcrashtest tag
// only adds a hook that acts when DREAM_CRASH_AT is set, so the other tests
// run the same code as a release build. With -race the crash tests keep a
// binary without the race detector (a SIGKILL loop pays its start-up cost
// at every point), built at the same time as the race one.
func buildBinaries(dir string) error {
	binPath = filepath.Join(dir, "dream")
	if !raceEnabled {
		crashBin = binPath
		return goBuild(binPath, "-tags", "dreamcrashtest")
	}
	crashBin = filepath.Join(dir, "dream-crash")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = goBuild(binPath, "-race") }()
	go func() { defer wg.Done(); errs[1] = goBuild(crashBin, "-tags", "dreamcrashtest") }()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func goBuild(out string, flags ...string) error {
	args := append(append([]string{"build", "-o", out}, flags...), ".")
	if b, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go %v: %v\n%s", args, err, b)
	}
	return nil
}
