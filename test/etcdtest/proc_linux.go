package etcdtest

import (
	"os/exec"
	"syscall"
)

// dieWithTest has the member killed when the test binary dies, killed
// itself before its cleanups ran.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
