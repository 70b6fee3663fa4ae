package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/runtime"
)

// writeServers writes an mcpServers file whose servers are all the
// reference server (this test binary, run again as `mcprt serve`).
func writeServers(t *testing.T, names ...string) string {
	t.Helper()
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = map[string]any{"command": os.Args[0],
			"env": map[string]string{clientTestServe: "1", "GORACE": "atexit_sleep_ms=0", "LOG_LEVEL": "warn"}}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	file := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func runVerbArgs(t *testing.T, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runClientVerb(clientVerbByName(t, name), args, &out, &errb)
	return out.String(), errb.String(), code
}

// The client verbs take their server from an mcpServers file as well as
// from after --.
func TestClientVerbsConfig(t *testing.T) {
	t.Parallel()
	one := writeServers(t, "ref")
	two := writeServers(t, "ref", "other")
	if out, errs, code := runVerbArgs(t, "call", "-config", one, "echo", `{"text":"from the file"}`); code != runtime.ExitOK || out != "from the file\n" {
		t.Errorf("call -config (one server): exit %d, %q, %s", code, out, errs)
	}
	if out, errs, code := runVerbArgs(t, "list", "tools", "-config", two, "-server", "other"); code != runtime.ExitOK || !strings.Contains(out, "echo(text: string)") {
		t.Errorf("list -config -server: exit %d, %q, %s", code, out, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"mcpServers": {"x": {"args": []}}}`), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-config", two}, `has 2 servers (other, ref): name one with -server`},
		{[]string{"-config", two, "-server", "nope"}, `has no server "nope" (it has other, ref)`},
		{[]string{"-server", "ref", "--", "x"}, `-server needs -config FILE`},
		{[]string{"-config", one, "--", "x"}, `-config and a server command after -- are two servers`},
		{[]string{"-config", one, "-url", "http://127.0.0.1:1/mcp"}, `-config and -url are two servers`},
		{[]string{"-config", bad}, `backend "x": key "command": missing`},
		{[]string{"-config", bad + ".missing"}, `no such file`},
	} {
		if _, errs, code := runVerbArgs(t, "ping", tc.args...); code != runtime.ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("ping %q: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestClientVerbsConfigOneServer: a client verb checks only the server it
// runs; another server of the file that is broken, disabled or remote
// does not stop it, and the one it runs is still checked.
func TestClientVerbsConfigOneServer(t *testing.T) {
	t.Parallel()
	ref, err := json.Marshal(map[string]any{"command": os.Args[0],
		"env": map[string]string{clientTestServe: "1", "GORACE": "atexit_sleep_ms=0", "LOG_LEVEL": "warn"}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "servers.jsonc")
	os.WriteFile(file, []byte(`{
  // as VS Code writes it: comments and trailing commas
  "mcpServers": {
    "ref": `+string(ref)+`,
    "nocommand": {"args": ["x"]},
    "unset": {"command": "${MCPRT_TEST_UNSET_VARIABLE}"},
    "off": {"command": "x", "disabled": true},
    "remote": {"url": "http://127.0.0.1:1/mcp"},
  },
}`), 0o600)
	if out, errs, code := runVerbArgs(t, "list", "tools", "-config", file, "-server", "ref"); code != runtime.ExitOK || !strings.Contains(out, "echo(text: string)") {
		t.Errorf("list -server ref beside broken servers: exit %d, %q, %s", code, out, errs)
	}
	for _, tc := range []struct{ server, want string }{
		{"nocommand", `backend "nocommand": key "command": missing`},
		{"unset", `MCPRT_TEST_UNSET_VARIABLE`},
		{"off", `backend "off": key "disabled": the server is disabled in this file`},
		{"remote", `server "remote" is a remote one ("url"): give -url http://127.0.0.1:1/mcp instead of -config`},
		{"", `has 5 servers (ref, nocommand, unset, off, remote): name one with -server`},
	} {
		_, errs, code := runVerbArgs(t, "ping", "-config", file, "-server", tc.server)
		if code != runtime.ExitUsage || !strings.Contains(errs, tc.want) || tc.server != "" && strings.Contains(errs, "nocommand") != (tc.server == "nocommand") {
			t.Errorf("ping -server %q: exit %d, stderr %q; want 2 and %q, about that server alone", tc.server, code, errs, tc.want)
		}
	}
}
