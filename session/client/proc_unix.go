//go:build unix

package client

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the server as the leader of a new process group, so the
// SIGTERM and SIGKILL of Close also reach what it started (a shell script's
// children, an npx wrapper's node) instead of orphaning them with our
// pipes open.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the server's process group; if that fails (the group
// is gone), the process itself.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		_ = cmd.Process.Signal(sig)
	}
}
