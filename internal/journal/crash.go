package journal

import "fmt"

// crashHook, when non-nil, is called at every named crash point of Begin,
// Commit and Recover. Only this package's tests and a binary built with
// -tags dreamcrashtest (crash_env.go, for the end-to-end crash tests) set it,
// to kill the process there and prove recovery; a release build leaves it
// nil, so no environment variable can crash a real dream.
//
// Points: "begin:copied:N" after the N-th file is staged, "begin:done",
// "commit:record" after the commit record is durable, "commit:tmp:N" after
// the N-th temp file is copied, "commit:rename:N" after it is renamed into
// place, "commit:delete:N" after the N-th removal, "commit:synced" after the
// directories are synced, "commit:marked" after the record says committed,
// and "recover:forward:ID" before a roll-forward.
var crashHook func(point string)

func crashPoint(format string, args ...any) {
	if crashHook != nil {
		crashHook(fmt.Sprintf(format, args...))
	}
}
