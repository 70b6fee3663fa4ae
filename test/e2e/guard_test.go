//go:build linux

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGuard: mcprt guard exits as its command did (status, signal, 127
// for one that cannot be found) and takes with it what the command left in
// its process group; it passes SIGTERM on; and when its parent is
// SIGKILLed it kills its whole process group, a job that ignores SIGTERM
// and SIGHUP included.
func TestGuard(t *testing.T) {
	t.Parallel()
	status := func(args ...string) *exec.ExitError {
		t.Helper()
		err := exec.Command(binPath, append([]string{"guard", "--"}, args...)...).Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("guard %q: %v, want an exit error", args, err)
		}
		return ee
	}
	if ee := status("sh", "-c", "exit 3"); ee.ExitCode() != 3 {
		t.Errorf("exit 3: got %v", ee)
	}
	if ee := status("/nonexistent/server"); ee.ExitCode() != 127 {
		t.Errorf("a missing command: got %v, want status 127", ee)
	}
	if ee := status("sh", "-c", "kill -TERM $$"); ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("a command killed by SIGTERM: got %v", ee)
	}

	dir := t.TempDir()
	// A command that exits leaving a job behind: the job goes with it.
	left := filepath.Join(dir, "left")
	if err := exec.Command(binPath, "guard", "--", "sh", "-c", `(trap "" TERM HUP; while :; do sleep 1; done) & echo $! > "$0"`, left).Run(); err != nil {
		t.Errorf("a command that exits 0: %v", err)
	}
	job := waitPID(t, left)
	t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL) })
	waitExited(t, "the job the command left, after the guard", job)

	// SIGTERM to the guard reaches the command, and the guard ends as the
	// command did.
	trapped := filepath.Join(dir, "trapped")
	g := exec.Command(binPath, "guard", "--", "sh", "-c", `trap 'exit 7' TERM; echo $$ > "$0"; while :; do sleep 0.05; done`, trapped)
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	waitPID(t, trapped)
	g.Process.Signal(syscall.SIGTERM)
	if err := g.Wait(); g.ProcessState.ExitCode() != 7 {
		t.Errorf("SIGTERM passed on: got %v, want status 7 from the command's trap", err)
	}

	// The parent SIGKILLed: the guard and all it started go.
	jobFile, guardFile := filepath.Join(dir, "job"), filepath.Join(dir, "guard")
	parent := exec.Command("sh", "-c", `"$0" guard -- sh -c '(trap "" TERM HUP; while :; do sleep 1; done) & echo $! > "$0"; exec sleep 1000' "$1" & echo $! > "$2"; wait`,
		binPath, jobFile, guardFile)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	pids := make([]int, 2)
	for i, f := range []string{jobFile, guardFile} {
		pids[i] = waitPID(t, f)
		t.Cleanup(func() { syscall.Kill(pids[i], syscall.SIGKILL) })
	}
	parent.Process.Kill()
	parent.Wait()
	waitExited(t, "the job and the guard, after the parent's SIGKILL", pids...)
}

// waitExited waits until none of pids is running.
func waitExited(t *testing.T, what string, pids ...int) {
	t.Helper()
	for deadline := time.Now().Add(exitTimeout); slices.ContainsFunc(pids, running); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still running among %v", what, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitPID reads the pid a shell wrote to file.
func waitPID(t *testing.T, file string) int {
	t.Helper()
	for deadline := time.Now().Add(exitTimeout); ; {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether pid is a process that has not exited (a zombie,
// which a container's init may never reap, has).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	return !strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z ")
}
