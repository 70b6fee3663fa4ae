//go:build linux

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The curl commands that work against `mcprt serve -http 8080`, one
// script per era, in testdata: these tests run them as written (against
// the port the server got), and README.md may quote them only verbatim.
var curlScripts = []struct{ file, want string }{
	// initialize, whose Mcp-Session-Id goes with everything after it.
	{"curl-legacy.sh", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`},
	// No session: the headers and _meta on the request itself.
	{"curl-modern.sh", `"content":[{"type":"text","text":"hi"}]}}`},
}

// curlAddress is the server the scripts are written for.
const curlAddress = "http://127.0.0.1:8080/mcp"

func TestCurlScripts(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	srv := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0")
	for _, s := range curlScripts {
		t.Run(s.file, func(t *testing.T) {
			script, err := os.ReadFile(filepath.Join("testdata", s.file))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(script), curlAddress) {
				t.Fatalf("%s does not talk to %s", s.file, curlAddress)
			}
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-e", "-c", strings.ReplaceAll(string(script), curlAddress, srv.url))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\nstdout: %s\nstderr: %s\nserver:\n%s", s.file, err, out.String(), errb.String(), srv.stderr)
			}
			if got := strings.TrimSpace(out.String()); !strings.HasSuffix(got, s.want) || strings.Contains(got, `"error"`) {
				t.Errorf("%s printed\n%s\nwant it to end with\n%s", s.file, got, s.want)
			}
		})
	}
}

// TestReadmeCurlIsTested: every curl command README.md shows against an
// MCP endpoint is one of the tested scripts, line for line.
func TestReadmeCurlIsTested(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var tested strings.Builder
	for _, s := range curlScripts {
		b, err := os.ReadFile(filepath.Join("testdata", s.file))
		if err != nil {
			t.Fatal(err)
		}
		tested.Write(b)
	}
	lines := strings.Split(string(readme), "\n")
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if !strings.Contains(trimmed, "curl ") || !strings.Contains(trimmed, "/mcp") || strings.Contains(trimmed, "/.well-known/") {
			continue
		}
		// The command with its continuation lines.
		cmd := l + "\n"
		for j := i; strings.HasSuffix(lines[j], "\\") && j+1 < len(lines); j++ {
			cmd += lines[j+1] + "\n"
		}
		if !strings.Contains(tested.String(), cmd) {
			t.Errorf("README.md:%d: a curl command that is not in test/e2e/testdata/curl-*.sh verbatim:\n%s", i+1, cmd)
		}
	}
}
