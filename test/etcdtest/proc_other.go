//go:build !linux

package etcdtest

import "os/exec"

// dieWithTest: only Linux has a parent-death signal; elsewhere the
// test's cleanups stop the members.
func dieWithTest(*exec.Cmd) {}
