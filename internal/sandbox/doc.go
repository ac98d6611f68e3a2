// Package sandbox confines a dream's file access. The dream sub-agent runs
// with nobody approving its tool calls, so the checks here are the security
// boundary rather than advice in a prompt:
//
//   - Memory gives read-write access to the memory directory only, through an
//     os.Root, so that "..", absolute paths elsewhere and symbolic links that
//     leave the directory are refused by the kernel-facing layer as well as by
//     the path check. The consolidation lock and any .git directory are
//     off-limits even inside it.
//   - ReadOnly gives read access to a named set of roots (the repository, the
//     memory directory, the sessions directory), again through os.Root.
//   - CheckSecret and CheckSecretAdded refuse content that would store a
//     credential in memory, which outlives the session it came from.
//
// Paths are checked twice: once when a call is validated, so that the model
// gets an error it can correct, and again when it is executed, because
// validation is only an optimisation of the agent loop.
package sandbox
