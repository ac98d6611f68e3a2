package cmdline

import (
	"fmt"
	"io"
)

// SayGateClosed writes `dream maybe`'s answer for a closed gate, as text:
// the full funnel and the early start print this one line.
func SayGateClosed(w io.Writer, gate, detail string) {
	fmt.Fprintf(w, "no dream: the %s gate is closed: %s\n", gate, detail)
}
