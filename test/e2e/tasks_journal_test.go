package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serveOnce runs `mcprt serve ARGS` with stdin at EOF and returns its exit
// status and stderr.
func serveOnce(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"serve"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return 0, ""
}

// Issue 32, item 6: a stdio server whose journal cannot be opened says
// why on stderr and exits non-zero (at 00335bc it exited 1 with nothing
// on stderr).
func TestTasksDirUnopenableStdio(t *testing.T) {
	for _, name := range []string{"tasks.journal", "tasks.v2.journal"} { // the old format's file, the new one's
		t.Run("directory for "+name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, name), 0o700)
			code, stderr := serveOnce(t, "-tasks-dir", dir)
			if code == 0 || !strings.Contains(stderr, name) || !strings.Contains(stderr, "is a directory") {
				t.Fatalf("exit %d, stderr %q; want non-zero and the cause", code, stderr)
			}
		})
	}
	t.Run("a file for the directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d")
		os.WriteFile(dir, nil, 0o600)
		code, stderr := serveOnce(t, "-tasks-dir", dir)
		if code == 0 || !strings.Contains(stderr, dir) {
			t.Fatalf("exit %d, stderr %q; want non-zero and the cause", code, stderr)
		}
	})
}

// Issue 32, item 2: a second server on the same -tasks-dir (two editor
// windows launching one stdio config) is refused, with a message naming
// the directory and the first one's pid; the first one's tasks are
// untouched (at 00335bc both ran, and the first's completed tasks were
// gone after a restart).
func TestTasksDirSecondServerRefused(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-fixture", "conformance", "-tasks-dir", dir}
	c := Start(t, Options{Args: args})
	c.Initialize("2025-11-25")
	m := c.Call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0, "label": "first"}, "task": map[string]any{}})
	if m.Error != nil {
		t.Fatalf("tools/call as a task: %s", m)
	}
	id := readTask(t, m.Result).TaskID
	if res := c.Call("tasks/result", map[string]any{"taskId": id}); res.Error != nil {
		t.Fatalf("tasks/result: %s", res)
	}
	code, stderr := serveOnce(t, args...)
	pid := fmt.Sprintf("pid %d", c.cmd.Process.Pid)
	if code == 0 || !strings.Contains(stderr, dir) || !strings.Contains(stderr, pid) {
		t.Fatalf("second server: exit %d, stderr %q; want refused, naming %s and %s", code, stderr, dir, pid)
	}
	c.stdin.Close()
	<-c.exited
	c = Start(t, Options{Args: args})
	c.Initialize("2025-11-25")
	if m := c.Call("tasks/get", map[string]any{"taskId": id}); m.Error != nil || readTask(t, m.Result).Status != "completed" {
		t.Fatalf("the first server's task after a restart: %s", m)
	}
}

// Issue 32, item 5: a server starting on 20,000 tasks whose ttl ran out
// answers SIGTERM at once (at 00335bc it settled them an fsync each, 10 s
// and more, and ignored the signal meanwhile).
func TestTasksDirManyExpiredSIGTERM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM")
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "tasks.journal")) // the format every version reads
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	created := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339Nano)
	for i := range 20000 {
		for _, st := range []string{"working", "completed"} {
			rec := map[string]any{"put": map[string]any{"id": fmt.Sprintf("%032x", i), "owner": "o", "tool": "x", "status": st,
				"created": created, "updated": created, "ttl": int64(time.Hour)}}
			b, _ := json.Marshal(rec)
			w.Write(append(b, '\n'))
		}
	}
	w.Flush()
	f.Close()
	cmd := exec.Command(binPath, "serve", "-tasks-dir", dir)
	stdin, _ := cmd.StdinPipe() // held open: only the signal ends it
	defer stdin.Close()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	time.Sleep(300 * time.Millisecond) // past the start of signal handling, within the settling
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil && !strings.Contains(err.Error(), "signal") {
			t.Fatalf("exit after SIGTERM: %v; stderr %s", err, stderr.String())
		}
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running 3 s after SIGTERM; stderr %s", stderr.String())
	}
}
