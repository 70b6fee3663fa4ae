// Package interop checks mcprt against the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) in both directions: the SDK's
// client drives `mcprt serve`, and mcprt's client drives a server written
// with the SDK (./sdkserver). It is a separate module so that mcprt itself
// does not depend on the SDK; run it with
//
//	cd test/interop && go test -race ./...
package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// hangTimeout only turns a hang into a failure.
const hangTimeout = 60 * time.Second

// Binaries built by TestMain.
var (
	mcprtBin, sdkServerBin string
	buildErr               error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcprt-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mcprtBin = filepath.Join(dir, "mcprt")
	sdkServerBin = filepath.Join(dir, "sdkserver")
	buildErr = build("../..", mcprtBin, "./cmd/mcprt")
	if buildErr == nil {
		buildErr = build(".", sdkServerBin, "./sdkserver")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build runs go build in dir: ../.. builds mcprt with the main module's
// own go.mod, exactly as a user would.
func build(dir, out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s (in %s): %v\n%s", pkg, dir, err, b)
	}
	return nil
}

func needBinaries(t *testing.T) {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	t.Cleanup(cancel)
	return ctx
}
