package memory

import "testing"

// SameParse is sameParse for the external tests (table_eval_test.go), which
// reach memories through packages that import this one.
func SameParse(t *testing.T, name string, src []byte) { sameParse(t, name, src) }
