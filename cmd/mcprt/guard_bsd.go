//go:build unix && !linux

package main

import "syscall"

// signalOnParentDeath: no such signal here; watchParent looks instead.
func signalOnParentDeath() {}

func childOfGuard() *syscall.SysProcAttr { return nil }

// killOthers has no /proc to find the group's other processes by: a
// command's leftovers are left to whoever kills the group.
func killOthers() {}
