package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcprt/mcprt/runtime/gateway"
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

// TestParseConfigRestartWait: -restart-wait is the restartWait of the
// backends whose entry sets none; an entry's own wins.
func TestParseConfigRestartWait(t *testing.T) {
	data := []byte(`{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b", "restartWait": "1s"}, "c": {"command": "c", "restartWait": 0}}}`)
	cfg, err := parseConfig(filepath.Join(t.TempDir(), "mcp.json"), data, 500*time.Millisecond, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Duration{}
	for _, b := range cfg.Backends {
		got[b.Name] = b.RestartWait
	}
	if got["a"] != 500*time.Millisecond || got["b"] != time.Second || got["c"] >= 0 {
		t.Errorf("restartWait by backend: %v", got)
	}
}
