package dream

import (
	"bytes"
	"os/exec"
	"testing"

	"golang.org/x/mod/module"
)

// TestEveryFileFitsAModuleZip: the Go module proxy serves a release as a zip
// of the module, and refuses the whole module when one file name is not
// allowed in it (shell specials such as < > * ? ", for example). A test
// memory with such a name would make `go install …@version` fail for every
// user, so every tracked file is checked with the rule the go command uses.
func TestEveryFileFitsAModuleZip(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil || len(out) == 0 {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, name := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if err := module.CheckFilePath(string(name)); err != nil {
			t.Errorf("%v", err)
		}
	}
}
