package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionInfo is `dream version --json`.
type versionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	// Commit and Modified come from the build's VCS stamp, when it has one.
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
}

func cmdVersion(a *app, args []string) error {
	if _, err := a.standardCommand("version", args, nil); err != nil {
		return err
	}
	v := versionInfo{Version: version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if a.jsonOut {
		a.printJSON(v)
		return nil
	}
	fmt.Fprintf(a.stdout, "dream %s (%s, %s/%s)\n", v.Version, v.Go, v.OS, v.Arch)
	return nil
}
