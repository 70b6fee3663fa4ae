//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A task outlives the server process that runs it (mcprt serve
// -tasks-dir): so must `mcprt call -task` that follows it, through a kill
// -9 and a restart, and `mcprt task` comes back to it by its id.

// taskCall is a running `mcprt call -task`, whose stderr is read line by
// line.
type taskCall struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	lines  chan string
	stderr *syncBuffer
	done   chan error
}

func startTaskCall(t *testing.T, args ...string) *taskCall {
	t.Helper()
	tc := &taskCall{cmd: exec.Command(binPath, args...), lines: make(chan string, 100), stderr: &syncBuffer{}, done: make(chan error, 1)}
	tc.cmd.Stdout = &tc.stdout
	tc.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, err := tc.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			tc.stderr.Write([]byte(sc.Text() + "\n"))
			select {
			case tc.lines <- sc.Text():
			default:
			}
		}
		tc.done <- tc.cmd.Wait()
	}()
	t.Cleanup(func() { _ = tc.cmd.Process.Kill() })
	return tc
}

var taskWorking = regexp.MustCompile(`^mcprt call: task (\S+) working`)

// id waits for the task's first status, and returns the task's id.
func (tc *taskCall) id(t *testing.T) string {
	t.Helper()
	timeout := time.After(callTimeout)
	for {
		select {
		case l := <-tc.lines:
			if m := taskWorking.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		case err := <-tc.done:
			tc.done <- err
			t.Fatalf("mcprt call -task ended before its task ran: %v\nstderr:\n%s", err, tc.stderr)
		case <-timeout:
			t.Fatalf("mcprt call -task showed no task working:\n%s", tc.stderr)
		}
	}
}

// wait waits for the call to exit, and returns its error.
func (tc *taskCall) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-tc.done:
		return err
	case <-time.After(2 * callTimeout):
		_ = tc.cmd.Process.Kill()
		t.Fatalf("mcprt call -task did not end; stderr:\n%s", tc.stderr)
		return nil
	}
}

// mcprtOut runs mcprt with args and returns its stdout, failing the test
// when it does not exit 0.
func mcprtOut(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binPath, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcprt %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestCallTaskSurvivesHTTPRestart: the server behind -url is killed with
// SIGKILL while the task sleeps, and started again on the same port and
// -tasks-dir, which runs the sleep again. The call keeps polling through
// the refused connections, reaches the new server and prints the result.
// Then mcprt task get, result and cancel come back to tasks by id.
func TestCallTaskSurvivesHTTPRestart(t *testing.T) {
	dir := t.TempDir()
	p := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-tasks-dir", dir)
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatal(err)
	}
	tc := startTaskCall(t, "call", "-task", "-url", p.url, "sleep", "ms=4000")
	id := tc.id(t)
	_ = p.cmd.Process.Kill()
	<-p.exited
	// The call meets a refused connection before the server is back.
	for l := ""; !strings.Contains(l, "lost the server"); {
		select {
		case l = <-tc.lines:
		case <-time.After(callTimeout):
			t.Fatalf("the call did not notice the server gone:\n%s", tc.stderr)
		}
	}
	p = startHTTP(t, binPath, "serve", "-http", u.Host, "-tasks-dir", dir)
	if err := tc.wait(t); err != nil {
		t.Fatalf("mcprt call -task through a restart: %v\nstderr:\n%s", err, tc.stderr)
	}
	errs := tc.stderr.String()
	if tc.stdout.String() != "slept\n" {
		t.Errorf("stdout %q, want slept; stderr:\n%s", tc.stdout.String(), errs)
	}
	for _, want := range []string{"mcprt call: task " + id + " started", "connected again; polling task " + id, "mcprt call: task " + id + " completed"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}

	if got := mcprtOut(t, "task", "get", id, "-url", p.url); got != id+" completed\n" {
		t.Errorf("mcprt task get: %q", got)
	}
	if got := mcprtOut(t, "task", "result", "-url", p.url, id); got != "slept\n" {
		t.Errorf("mcprt task result: %q", got)
	}

	// A task cancelled by id from another mcprt ends the call following it.
	tc = startTaskCall(t, "call", "-task", "-url", p.url, "sleep", "ms=600000")
	id = tc.id(t)
	mcprtOut(t, "task", "cancel", id, "-url", p.url)
	err = tc.wait(t)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(tc.stderr.String(), "task "+id+" cancelled") {
		t.Errorf("call of a task cancelled by mcprt task cancel: %v, want exit 1 saying so; stderr:\n%s", err, tc.stderr)
	}
	if got := mcprtOut(t, "task", "get", "-url", p.url, id); !strings.HasPrefix(got, id+" cancelled") {
		t.Errorf("mcprt task get of the cancelled task: %q", got)
	}
}

// TestCallTaskSurvivesStdioRestart: the server command is killed with
// SIGKILL while the task sleeps; mcprt starts it again, opens a new
// session and polls the task there, which the new process (same
// -tasks-dir) runs again to completion. mcprt task, starting the command
// once more, finds the task by id and lists it.
func TestCallTaskSurvivesStdioRestart(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	tasks := filepath.Join(dir, "tasks")
	// The shell tells the test the server's pid, then becomes the server.
	server := []string{"--", "sh", "-c", `echo $$ >> "$0"; exec "$1" serve -tasks-dir "$2"`, pids, binPath, tasks}
	tc := startTaskCall(t, append([]string{"call", "-task", "sleep", "ms=4000"}, server...)...)
	id := tc.id(t)
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pids file %q: %v", b, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := tc.wait(t); err != nil {
		t.Fatalf("mcprt call -task through a restart: %v\nstderr:\n%s", err, tc.stderr)
	}
	errs := tc.stderr.String()
	if tc.stdout.String() != "slept\n" || !strings.Contains(errs, "lost the server") || !strings.Contains(errs, "task "+id+" completed") {
		t.Errorf("stdout %q, want slept; stderr:\n%s", tc.stdout.String(), errs)
	}
	if b, _ := os.ReadFile(pids); len(strings.Fields(string(b))) != 2 {
		t.Errorf("server started %d times, want 2 (pids %q)", len(strings.Fields(string(b))), b)
	}

	if got := mcprtOut(t, append([]string{"task", "get", id}, server...)...); got != id+" completed\n" {
		t.Errorf("mcprt task get: %q", got)
	}
	if got := mcprtOut(t, append([]string{"task", "result", id}, server...)...); got != "slept\n" {
		t.Errorf("mcprt task result: %q", got)
	}
	if got := mcprtOut(t, append([]string{"task", "list", "-era", "legacy"}, server...)...); got != id+" completed\n" {
		t.Errorf("mcprt task list: %q", got)
	}
}
