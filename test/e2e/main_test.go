// Package e2e runs the mcprt binary as a child process and speaks MCP to it
// over stdio, the way real clients do.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binPath is the mcprt binary built once by TestMain.
var binPath string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcprt-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "mcprt")
	if err := build(binPath); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building mcprt:", err)
		return 1
	}
	return m.Run()
}

// build compiles cmd/mcprt. `go test` puts GOROOT/bin first on PATH; GOROOT
// is the fallback.
func build(out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goroot := os.Getenv("GOROOT")
		if goroot == "" {
			return fmt.Errorf("no go command on PATH and GOROOT unset: %w", err)
		}
		goBin = filepath.Join(goroot, "bin", "go")
	}
	cmd := exec.Command(goBin, "build", "-o", out, "github.com/mcprt/mcprt/cmd/mcprt")
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run()
}
