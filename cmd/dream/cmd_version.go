package main

import (
	"fmt"
	"runtime"
)

func cmdVersion(a *app, args []string) int {
	fmt.Fprintf(a.stdout, "dream %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
