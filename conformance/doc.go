// Package conformance runs the real agents dream works beside — Claude
// Code, Codex CLI and Gemini CLI, at the versions pinned in agents.txt —
// offline against the project's fake model server (llm/llmtest), with
// `dream init` installed, and checks dream's layouts against what each
// agent does: the hook runs and returns in time, the sessions dream counts
// are the files the agent wrote, the memory dream consolidates is the
// memory the agent loads (a marker planted in dream's memory dir must
// appear in the agent's request), limits are counted the agent's way, and
// after a dream the agent still loads its memory.
//
// The agents are the oracle, so they are installed, not faked:
//
//	bash conformance/install.sh          # npm, into $DREAM_CONFORMANCE_DIR or the user's cache dir
//	go test -v -count=1 ./conformance    # the suite; a table of every check at the end
//
// An agent that is not installed has its tests skipped with one line saying
// how to install it. Everything an agent writes goes to a private HOME per
// test; nothing leaves the machine.
//
// The package has no exported API: the suite is its tests. The harness
// (harness_test.go, pty_test.go) knows no agent; each agent's
// environment and checks live in its own <agent>_test.go.
package conformance
