//go:build !linux

package gateway

import "syscall"

// dieWithParent has no Pdeathsig to use here: a backend of a gateway that
// was killed sees its stdin close, which ends well-behaved servers.
var dieWithParent func(*syscall.SysProcAttr)

// guardDiesWithParent: the guard watches for its parent's death itself.
var guardDiesWithParent func(*syscall.SysProcAttr)
