package client_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// TestCloseLeavesNothingOfTheServer: what a server left in its process
// group (here a wrapper shell's background job that ignores SIGTERM and
// reads no stdin) is killed by Close, also when the server itself exited
// at stdin EOF.
func TestCloseLeavesNothingOfTheServer(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy")
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `(trap '' TERM HUP; while :; do sleep 1; done) & echo $! > "$1"; exec "$0"`
	cmd.Args = []string{"-c", script, cmd.Path, pidFile}
	cmd.Path = "/bin/sh"
	c := connect(t, cmd, opts(client.Options{CloseGrace: 5 * time.Second}))
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	job, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL) })
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); alive(job); {
		if time.Now().After(deadline) {
			t.Fatalf("the server's background job %d outlived Close", job)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
