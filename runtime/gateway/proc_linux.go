package gateway

import "syscall"

// dieWithParent makes the kernel kill a backend when the gateway dies, even
// by SIGKILL, when no Close can run: no backend outlives its gateway.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// guardDiesWithParent is dieWithParent for a backend run through
// Options.Guard: SIGTERM, which the guard catches to kill its whole
// process group, rather than SIGKILL, which would leave that group.
func guardDiesWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
