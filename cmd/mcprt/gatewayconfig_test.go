package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcprt/mcprt/handlers/gateway"
)

// TestRunsGateway: an entry that runs mcprt gateway on the file being
// served (no -config, or -config naming it) is the gateway itself; one on
// another file, or another verb, is not.
func TestRunsGateway(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	other := filepath.Join(dir, "other.json")
	for _, f := range []string{file, other} {
		if err := os.WriteFile(f, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		b    gateway.Backend
		want bool
	}{
		{gateway.Backend{Command: "mcprt", Args: []string{"gateway"}}, true},
		{gateway.Backend{Command: "/usr/local/bin/mcprt.exe", Args: []string{"gateway", "-http", ":0"}}, true},
		{gateway.Backend{Command: self, Args: []string{"gateway"}}, true},
		{gateway.Backend{Command: "mcprt", Args: []string{"gateway", "-config", file}}, true},
		{gateway.Backend{Command: "mcprt", Args: []string{"gateway", "--config=mcp.json"}, Dir: dir}, true},
		{gateway.Backend{Command: "mcprt", Args: []string{"gateway", "-config", other}}, false},
		{gateway.Backend{Command: "mcprt", Args: []string{"serve"}}, false},
		{gateway.Backend{Command: "npx", Args: []string{"gateway"}}, false},
		{gateway.Backend{URL: "http://localhost/mcp"}, false},
	} {
		if got := runsGateway(c.b, file); got != c.want {
			t.Errorf("runsGateway(%s %q) = %v, want %v", c.b.Command, c.b.Args, got, c.want)
		}
	}
}
