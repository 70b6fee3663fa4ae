//go:build unix

package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Claim takes the real fd 0 and fd 1 and the process's SIGPIPE handling,
// so each test runs it in a fresh copy of the test binary, whose stdout is
// a pipe nobody reads (its read end closed), and reads its verdict from
// stderr.

const claimScenario = "MCPRT_CLAIM_SCENARIO"

// runClaimScenario runs scenario in a child test binary and returns how it
// ended and its stderr.
func runClaimScenario(t *testing.T, scenario string) (*os.ProcessState, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestClaimHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), claimScenario+"="+scenario, "GORACE=atexit_sleep_ms=0")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // a write to w is a broken pipe
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errOut
	err = cmd.Run()
	w.Close()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("helper %s: %v", scenario, err)
	}
	return cmd.ProcessState, errOut.String()
}

// TestClaimRestoreSIGPIPE: after Restore, SIGPIPE is Go's default again,
// so a write to a broken stdout ends the process by SIGPIPE, as it did
// before Claim.
func TestClaimRestoreSIGPIPE(t *testing.T) {
	st, stderr := runClaimScenario(t, "restore")
	ws, _ := st.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
		t.Fatalf("after Restore a write to a broken stdout did not end the process by SIGPIPE: %v\nstderr:\n%s", st, stderr)
	}
	if !strings.Contains(stderr, "claimed: SIGPIPE ignored\n") {
		t.Errorf("Claim did not ignore SIGPIPE:\n%s", stderr)
	}
}

// TestClaimRestoreKeepsIgnoredSIGPIPE: a process that ignored SIGPIPE
// before Claim still does after Restore.
func TestClaimRestoreKeepsIgnoredSIGPIPE(t *testing.T) {
	st, stderr := runClaimScenario(t, "ignored-before")
	if !st.Success() || !strings.Contains(stderr, "write: EPIPE\n") {
		t.Fatalf("%v\nstderr:\n%s", st, stderr)
	}
}

// TestClaimFailureLeavesNothing: when pointing fd 1 at stderr fails, Claim
// closes every descriptor it duplicated and stops ignoring SIGPIPE.
func TestClaimFailureLeavesNothing(t *testing.T) {
	st, stderr := runClaimScenario(t, "dup2-fails")
	if !st.Success() || !strings.Contains(stderr, "ok\n") {
		t.Fatalf("%v\nstderr:\n%s", st, stderr)
	}
}

// TestClaimHelperProcess is not a test: it is the body of the child
// processes the Claim tests start.
func TestClaimHelperProcess(t *testing.T) {
	scenario := os.Getenv(claimScenario)
	if scenario == "" {
		return
	}
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
		os.Exit(1)
	}
	// writeStdout writes until the broken pipe says so: by SIGPIPE (the
	// process ends here) or by EPIPE.
	writeStdout := func() {
		for range 1000 {
			if _, err := os.Stdout.Write([]byte("x\n")); err != nil {
				if errors.Is(err, syscall.EPIPE) {
					fmt.Fprintln(os.Stderr, "write: EPIPE")
					return
				}
				fail("write: %v", err)
			}
		}
		fail("a thousand writes to a broken pipe succeeded")
	}
	switch scenario {
	case "restore", "ignored-before":
		if scenario == "ignored-before" {
			signal.Ignore(syscall.SIGPIPE)
		} else if signal.Ignored(syscall.SIGPIPE) {
			fail("SIGPIPE ignored before Claim")
		}
		c, err := Claim()
		if err != nil {
			fail("Claim: %v", err)
		}
		if signal.Ignored(syscall.SIGPIPE) {
			fmt.Fprintln(os.Stderr, "claimed: SIGPIPE ignored")
		}
		c.Restore()
		writeStdout()
	case "dup2-fails":
		before := openFds(fail)
		_, err := claim(func(from, to int) error { return syscall.EBADF })
		if err == nil || !errors.Is(err, syscall.EBADF) {
			fail("claim with a failing dup2: %v", err)
		}
		if after := openFds(fail); after != before {
			fail("open descriptors: %d before the failed Claim, %d after", before, after)
		}
		if signal.Ignored(syscall.SIGPIPE) {
			fail("SIGPIPE still ignored after the failed Claim")
		}
		fmt.Fprintln(os.Stderr, "ok")
	default:
		fail("unknown scenario %q", scenario)
	}
	os.Exit(0)
}

// openFds counts the process's open file descriptors.
func openFds(fail func(string, ...any)) int {
	ents, err := os.ReadDir("/dev/fd")
	if err != nil {
		fail("%v", err)
	}
	return len(ents)
}
