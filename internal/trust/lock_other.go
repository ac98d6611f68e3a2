//go:build !unix

package trust

// lockFile is a no-op where there is no flock: two concurrent `dream trust`
// may then lose one entry, which trusting again restores.
func lockFile(string) (func(), error) { return func() {}, nil }
