package e2e

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestPanicStackReadable: the stack of a tool's handler that panicked is
// logged on the server's stderr one frame a line ("func at file:line"),
// not as one quoted line of \n escapes.
func TestPanicStackReadable(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binPath, "call", "-v", "panic", "--", binPath, "serve")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run() // the tool reports an error: exit 1
	errs := stderr.String()
	if !strings.Contains(errs, `stack="(below, one frame a line)"`) {
		t.Fatalf("no record with a stack below it:\n%s", errs)
	}
	frame := regexp.MustCompile(`(?m)^\[[^]]+\]     \S*fixture\.Reference\.func\d+ at \S+reference\.go:\d+$`)
	if !frame.MatchString(errs) {
		t.Errorf("the panicking handler's frame is not a line of its own:\n%s", errs)
	}
	if strings.Contains(errs, `\n\t`) {
		t.Errorf("the stack is escaped on one line:\n%s", errs)
	}
}
