//go:build !unix

package client

import (
	"os"
	"os/exec"
	"syscall"
)

func ownGroup(*exec.Cmd) {}

// signalGroup has no process groups to use here: SIGTERM cannot be
// delivered, so only SIGKILL (Process.Kill) does anything.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
}
