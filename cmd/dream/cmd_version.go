package main

import (
	"fmt"
	"runtime"
)

func cmdVersion(a *app, args []string) error {
	fmt.Fprintf(a.stdout, "dream %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
