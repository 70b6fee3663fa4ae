//go:build linux

package client_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// The parent of TestSysProcAttrPdeathsig is this test binary run again
// with MCPRT_PDEATH_PARENT set: it connects to a fake server that ignores
// stdin EOF and SIGTERM, with Pdeathsig set to SIGKILL when the variable
// is "kill" (and nothing set when it is "none"), prints the server's pid
// and waits to be killed.
func init() {
	mode := os.Getenv("MCPRT_PDEATH_PARENT")
	if mode == "" {
		return
	}
	o := &client.Options{Logger: quiet}
	if mode == "kill" {
		o.SysProcAttr = func(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
	}
	c, err := client.Connect(context.Background(), client.Command{
		Path: os.Args[0],
		Env:  []string{"MCPRT_FAKE=ignore-term", "MCPRT_PDEATH_PARENT="},
	}, o)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(c.PID())
	for {
		time.Sleep(time.Hour)
	}
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting for its reaper has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces, the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestSysProcAttrPdeathsig checks the hook's point: a server started with
// Pdeathsig SIGKILL dies with the process that started it, even when it
// ignores stdin EOF and SIGTERM; without it, the same server outlives its
// parent (which is why the hook exists).
func TestSysProcAttrPdeathsig(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		survive bool
	}{{"kill", false}, {"none", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			parent := exec.Command(os.Args[0], "-test.run=^$")
			parent.Env = append(os.Environ(), "MCPRT_PDEATH_PARENT="+tc.mode, "GORACE=atexit_sleep_ms=0")
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			parent.Stderr = os.Stderr
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			pid, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				parent.Process.Kill()
				parent.Wait()
				t.Fatalf("parent said %q (%v)", line, err)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if !alive(pid) {
				t.Fatalf("server %d is not running while its parent is", pid)
			}
			parent.Process.Kill()
			parent.Wait()
			if tc.survive {
				time.Sleep(time.Second) // plenty to see that nothing kills it
			} else {
				for deadline := time.Now().Add(hangTimeout); alive(pid) && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
			}
			if got := alive(pid); got != tc.survive {
				t.Fatalf("server %d alive after its parent was killed: %v, want %v", pid, got, tc.survive)
			}
		})
	}
}
