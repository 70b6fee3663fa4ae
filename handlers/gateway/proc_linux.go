package gateway

import "syscall"

// dieWithParent makes the kernel kill a backend when the gateway dies, even
// by SIGKILL, when no Close can run: no backend outlives its gateway.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
