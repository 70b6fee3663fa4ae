//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `mcprt gateway` without -config serves the servers the user's MCP
// client lists already. Each test has a fresh home (HOME, XDG_CONFIG_HOME),
// so that the files of whoever runs the tests are not found.

// writeJSON writes v to path as JSON, making its folder.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// listThroughGateway runs `mcprt list tools -v -- mcprt gateway` in dir
// with home as the home folder, and returns its stdout and stderr (-v:
// the gateway's stderr lines among them).
func listThroughGateway(t *testing.T, dir, home string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binPath, "list", "tools", "-v", "-timeout", "30s", "--", binPath, "gateway")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "LOG_LEVEL=warn")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestGatewayNoConfigProject: in a folder with a .mcp.json (and a fresh
// home), the gateway serves its servers and says which file it serves.
func TestGatewayNoConfigProject(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	writeJSON(t, filepath.Join(dir, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"ref": map[string]any{"command": binPath, "args": []string{"serve"}},
	}})
	stdout, stderr, err := listThroughGateway(t, dir, home)
	if err != nil {
		t.Fatalf("mcprt list -- mcprt gateway: %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "ref__echo(") {
		t.Errorf("the gateway does not serve .mcp.json's server:\n%s", stdout)
	}
	if !strings.Contains(stderr, "serving the servers of ./.mcp.json") {
		t.Errorf("stderr does not say which file is served:\n%s", stderr)
	}
}

// TestGatewayNoConfigSkipsItself: Claude Desktop's file (in the fresh
// home's ~/.config/Claude) lists the gateway itself, as users are told
// to, beside a server: the gateway serves the server and leaves itself
// out, rather than start itself without end.
func TestGatewayNoConfigSkipsItself(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	writeJSON(t, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), map[string]any{"mcpServers": map[string]any{
		"gateway": map[string]any{"command": binPath, "args": []string{"gateway"}},
		"ref":     map[string]any{"command": binPath, "args": []string{"serve"}},
	}})
	stdout, stderr, err := listThroughGateway(t, dir, home)
	if err != nil {
		t.Fatalf("mcprt list -- mcprt gateway: %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "ref__echo(") || strings.Contains(stdout, "gateway__") {
		t.Errorf("tools, want ref's alone:\n%s", stdout)
	}
	for _, want := range []string{"claude_desktop_config.json (Claude Desktop's)", `server "gateway" is this gateway`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestGatewayNoConfigNone: with no file to serve, the gateway says where
// it looked and shows an example, and exits 2.
func TestGatewayNoConfigNone(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	cmd := exec.Command(binPath, "gateway")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"./.mcp.json", "./.vscode/mcp.json", filepath.Join(home, ".cursor", "mcp.json"),
		filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), `{"mcpServers": {"ref": {"command": "mcprt", "args": ["serve"]}`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
