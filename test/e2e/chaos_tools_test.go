package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestChaosUnknownPanicTool: `mcprt chaos -panic-tool NAME` of a tool the
// server does not list is refused (exit 2) with the tools it does list,
// rather than PASS without a panic; behind -behind-gateway the error
// names the prefixed tool that was meant.
func TestChaosUnknownPanicTool(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"stdio", []string{"-panic-tool", "nosuch"}, []string{`the panic tool "nosuch" is not one the server lists`, "echo, work, sleep, panic"}},
		{"behind-gateway", []string{"-behind-gateway", "-panic-tool", "panic"}, []string{`the panic tool "panic" is not one the server lists`, `"target__panic"?`, "target__echo"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{"chaos", "-requests", "20"}, c.args...), "--", binPath, "serve")
			cmd := exec.Command(binPath, args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Fatalf("exit: %v, want status 2; output:\n%s", err, out.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Contains(out.String(), "PASS") {
				t.Errorf("a campaign ran:\n%s", out.String())
			}
		})
	}
}
