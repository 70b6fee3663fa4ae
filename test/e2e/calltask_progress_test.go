package e2e

import (
	"bytes"
	"os/exec"
	"regexp"
	"testing"
)

// TestCallTaskProgressModern: the 2026-07-28 tasks extension has no
// progress notification on tasks; the progress the reference server's
// sleep reports is shown in the task's statusMessage, which mcprt call
// -task shows as it polls (2025-11-25 has it as notifications/progress).
func TestCallTaskProgressModern(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binPath, "call", "-era", "modern", "-task", "sleep", "ms=4000", "--", binPath, "serve", "-tasks")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcprt call -task: %v\nstderr:\n%s", err, stderr.String())
	}
	if stdout.String() != "slept\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	if !regexp.MustCompile(`(?m)^mcprt call: task \S+ working: slept \d+ of 4000 ms$`).MatchString(stderr.String()) {
		t.Errorf("no progress shown:\n%s", stderr.String())
	}
}
