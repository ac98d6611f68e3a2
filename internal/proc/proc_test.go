package proc

import (
	"os"
	"os/exec"
	"testing"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) || !Alive(os.Getppid()) {
		t.Fatal("this process or its parent is not alive")
	}
	for _, pid := range []int{0, -1, MaxPID + 1} {
		if Alive(pid) {
			t.Errorf("Alive(%d) = true", pid)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(cmd.Process.Pid) {
		t.Errorf("a reaped child (pid %d) is alive", cmd.Process.Pid)
	}
}
