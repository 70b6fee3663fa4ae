package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// signalOnParentDeath asks the kernel for SIGTERM when the parent dies
// (PR_SET_PDEATHSIG): the guard's signal loop tells it from the parent's
// own SIGTERM by the parent having changed.
func signalOnParentDeath() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
}

// childOfGuard: the command dies with the guard if the guard itself is
// killed (SIGKILL, which it cannot catch).
func childOfGuard() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// killOthers kills every other process of the guard's group (found in
// /proc), again until none is left: a job that forks as it dies.
func killOthers() {
	me := os.Getpid()
	pgid := strconv.Itoa(me)
	for range 10 {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == me {
				continue
			}
			stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			// pid (comm) state ppid pgrp ...: comm may hold anything,
			// the fields follow its last ')'.
			f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
			if len(f) > 2 && string(f[2]) == pgid && string(f[0]) != "Z" {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				found = true
			}
		}
		if !found {
			return
		}
	}
}
