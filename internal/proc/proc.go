// Package proc answers one question about another process: is it still
// alive? The lock (is the holder named in .consolidate-lock gone?) and the
// task registry (did the process running this dream die?) ask it the same
// way, so they can never disagree about one PID.
package proc

// MaxPID is the largest PID taken for a process: Linux's pid_max ceiling
// (2^22). Anything larger is garbage, not a process.
const MaxPID = 1 << 22
