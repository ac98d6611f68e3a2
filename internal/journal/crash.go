package journal

import "fmt"

// crashHook, when non-nil, is called at every named crash point of Begin,
// Commit and Recover. Only this package's tests and a binary built with
// -tags dreamcrashtest (crash_env.go, for the end-to-end crash tests) set it,
// to kill the process there and prove recovery; a release build leaves it
// nil, so no environment variable can crash a real dream.
//
// Points: "begin:copied:N" after the N-th file is copied into staging,
// "begin:done", "commit:record" after the commit record is durable,
// "commit:link:N" when the N-th file is hard-linked under its temporary
// name and its staged name not yet removed, "commit:tmp:N" after the N-th
// temp file is ready (copied, or linked and out of staging), "commit:rename:N"
// after it is renamed into place, "commit:delete:N" after the N-th removal,
// "commit:synced" after the directories are synced, "commit:replaced" after
// the kept replaced files moved out of the transaction (KeepReplaced),
// "commit:marked" after the record says committed, "replaced:freed" when
// RemoveReplaced has freed the kept files but not yet removed their dir,
// and "recover:forward:ID" before a roll-forward.
var crashHook func(point string)

func crashPoint(format string, args ...any) {
	if crashHook != nil {
		crashHook(fmt.Sprintf(format, args...))
	}
}
