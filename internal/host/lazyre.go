package host

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use instead of at package init, so that
// a `dream` process that never looks at a Codex or nanobot layout (a hook
// with its time gate closed) does not pay for it.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
