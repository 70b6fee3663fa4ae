//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// guard runs argv as guardUsage says and returns the exit status.
func guard(argv []string, s streams) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	ppid := os.Getppid()
	// A group of its own, so that killing "the group" never reaches the
	// parent's. EPERM: a session leader, which leads its group already.
	_ = syscall.Setpgid(0, 0)
	orphaned := func() bool { return os.Getppid() != ppid }
	signalOnParentDeath()
	if orphaned() { // the parent died before the signal was asked for
		return 1
	}
	stop := make(chan struct{})
	defer close(stop)
	go watchParent(orphaned, stop)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = childOfGuard()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(s.Stderr, "mcprt guard: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	for {
		select {
		case sig := <-sigs:
			if orphaned() {
				killGroup()
			}
			// The parent's own signal, or its death seen early (the
			// thread that started the guard went first): passed on; the
			// watch catches a death this missed.
			_ = cmd.Process.Signal(sig)
		case <-done:
			// What the command left in the group goes with it.
			killOthers()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() {
				return cmd.ProcessState.ExitCode()
			}
			// Killed by a signal: so is the guard, for its parent to see.
			signal.Reset(ws.Signal())
			_ = syscall.Kill(os.Getpid(), ws.Signal())
			time.Sleep(time.Second) // a signal whose default is to go on
			return 128 + int(ws.Signal())
		}
	}
}

// watchParent looks twice a second whether the parent has died, and then
// kills the group: the backstop for a parent-death signal that came too
// early to be told from the parent's own SIGTERM, or that this system
// does not have.
func watchParent(orphaned func() bool, stop <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if orphaned() {
				killGroup()
			}
		}
	}
}

// killGroup kills the guard's process group, the guard with it: nothing
// is left to clean up after.
func killGroup() { _ = syscall.Kill(0, syscall.SIGKILL) }
