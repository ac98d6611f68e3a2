package tools

import "fmt"

// credentialNote tells the model that a listing left credential locations
// out (see sandbox.ErrCredential), so an incomplete answer is not taken for
// the whole directory, without naming what was left out.
func credentialNote(n int) string {
	return fmt.Sprintf("%d credential location(s) skipped: refused: credentials location", n)
}
