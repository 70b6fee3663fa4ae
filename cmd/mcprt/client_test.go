package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/runtime"
)

// The client verbs are tested in process (runClientVerb with buffers for
// stdout and stderr) against the real reference server: this test binary,
// run again with clientTestServe set, is `mcprt serve`.
const clientTestServe = "MCPRT_CLIENT_TEST_SERVE"

func init() {
	if os.Getenv(clientTestServe) == "1" {
		os.Exit(run([]string{"serve"}, streams{Stdout: os.Stdout, Stderr: os.Stderr}))
	}
}

// serverArgs end a client verb's command line: the server's environment
// and the server command.
func serverArgs() []string {
	// The race runtime sleeps a second at exit unless told not to.
	return []string{"-env", clientTestServe + "=1", "-env", "GORACE=atexit_sleep_ms=0", "-env", "LOG_LEVEL=warn", "--", os.Args[0]}
}

func clientVerbByName(t *testing.T, name string) clientVerb {
	t.Helper()
	i := slices.IndexFunc(clientVerbs, func(v clientVerb) bool { return v.name == name })
	if i < 0 {
		t.Fatalf("no client verb %s", name)
	}
	return clientVerbs[i]
}

// runVerb runs `mcprt NAME ARGS -env ... -- <reference server>`.
func runVerb(t *testing.T, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runClientVerb(clientVerbByName(t, name), append(args, serverArgs()...), &out, &errb)
	return out.String(), errb.String(), code
}

func TestClientList(t *testing.T) {
	t.Parallel()
	out, errs, code := runVerb(t, "list")
	if code != runtime.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"tools (", "  echo ", "resources (", "mcprt://reference/readme", "templates (", "mcprt://reference/greeting/{name}", "prompts (", "review(code*, language)"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}

	out, errs, code = runVerb(t, "list", "-json", "-era", "legacy", "tool")
	if code != runtime.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string][]struct{ Name string }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-json output %q: %v", out, err)
	}
	if len(got) != 1 || !slices.ContainsFunc(got["tools"], func(t struct{ Name string }) bool { return t.Name == "echo" }) {
		t.Errorf("list -json tools: %s", out)
	}

	if _, errs, code = runVerb(t, "list", "widgets"); code != runtime.ExitUsage || !strings.Contains(errs, `unknown kind "widgets"`) {
		t.Errorf("unknown kind: exit %d, %s", code, errs)
	}
}

func TestClientCall(t *testing.T) {
	t.Parallel()
	out, errs, code := runVerb(t, "call", "echo", `{"text":"hi there"}`)
	if code != runtime.ExitOK || out != "hi there\n" {
		t.Errorf("call echo: exit %d, stdout %q, stderr %s", code, out, errs)
	}

	// Flags may follow the arguments; progress goes to stderr only.
	out, errs, code = runVerb(t, "call", "sleep", `{"ms":300}`, "-era", "modern")
	if code != runtime.ExitOK || out != "slept\n" || !strings.Contains(errs, "progress ") || strings.Contains(out, "progress") {
		t.Errorf("call sleep: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	out, errs, code = runVerb(t, "call", "-json", "echo", `{"text":"j"}`)
	var res struct {
		Content []struct{ Text string }
	}
	if code != runtime.ExitOK || json.Unmarshal([]byte(out), &res) != nil || len(res.Content) != 1 || res.Content[0].Text != "j" {
		t.Errorf("call -json: exit %d, stdout %q, stderr %s", code, out, errs)
	}

	// A tool error result (2025-11-25: bad arguments are one) exits 1 and
	// still shows what the tool said.
	out, errs, code = runVerb(t, "call", "-version", "2025-11-25", "echo", `{"text":1}`)
	if code != runtime.ExitFailure || !strings.Contains(out, "must be string") || !strings.Contains(errs, "tool echo reported an error") {
		t.Errorf("call with bad arguments: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	_, errs, code = runVerb(t, "call", "no-such-tool")
	if code != runtime.ExitFailure || !strings.Contains(errs, "server error -32602") {
		t.Errorf("unknown tool: exit %d, stderr %q", code, errs)
	}
	_, errs, code = runVerb(t, "call", "-timeout", "300ms", "sleep", `{"ms":20000}`)
	if code != runtime.ExitFailure || !strings.Contains(errs, "timed out after 300ms") {
		t.Errorf("timeout: exit %d, stderr %q", code, errs)
	}
	_, errs, code = runVerb(t, "call", "-log-level", "info", "log", `{"levels":["debug","error"],"message":"psst"}`)
	if code != runtime.ExitOK || !strings.Contains(errs, "server log [error] reference: psst") || strings.Contains(errs, "[debug]") {
		t.Errorf("log level: exit %d, stderr %q", code, errs)
	}
}

func TestClientReadGetPing(t *testing.T) {
	t.Parallel()
	out, errs, code := runVerb(t, "read", "mcprt://reference/readme")
	if code != runtime.ExitOK || !strings.HasPrefix(out, "# mcprt reference server") {
		t.Errorf("read: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	out, _, code = runVerb(t, "read", "mcprt://reference/pixel.png")
	if code != runtime.ExitOK || !strings.HasPrefix(out, "\x89PNG\r\n") {
		t.Errorf("read blob: exit %d, stdout %q", code, out)
	}
	if _, errs, code = runVerb(t, "read", "mcprt://nope"); code != runtime.ExitFailure || !strings.Contains(errs, "server error") {
		t.Errorf("read unknown: exit %d, stderr %q", code, errs)
	}

	out, errs, code = runVerb(t, "get", "review", "code=x := 1", "language=Go")
	if code != runtime.ExitOK || !strings.HasPrefix(out, "user: Please review this Go code") || !strings.Contains(out, "x := 1") {
		t.Errorf("get: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	if _, errs, code = runVerb(t, "get", "review", "oops"); code != runtime.ExitUsage || !strings.Contains(errs, "want NAME=VALUE") {
		t.Errorf("get with a bad argument: exit %d, stderr %q", code, errs)
	}

	for _, flags := range [][]string{{"-era", "legacy"}, {"-era", "modern"}, {"-version", "2024-11-05"}} {
		out, errs, code = runVerb(t, "ping", flags...)
		if code != runtime.ExitOK || !strings.HasPrefix(out, "ok: mcprt-reference") {
			t.Errorf("ping %v: exit %d, stdout %q, stderr %s", flags, code, out, errs)
		}
	}
	out, _, _ = runVerb(t, "ping", "-json", "-version", "2025-06-18")
	var p struct {
		OK              bool
		ProtocolVersion string
		Era             string
	}
	if json.Unmarshal([]byte(out), &p) != nil || !p.OK || p.ProtocolVersion != "2025-06-18" || p.Era != "legacy" {
		t.Errorf("ping -json: %q", out)
	}
}

// TestClientServerFails: a server that dies while connecting gives exit 1
// and its last stderr lines.
func TestClientServerFails(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := runClientVerb(clientVerbByName(t, "ping"), []string{"--", "sh", "-c", "echo 'cannot open config.toml' >&2; exit 4"}, &out, &errb)
	if code != runtime.ExitFailure || !strings.Contains(errb.String(), "server exited with status 4: cannot open config.toml") || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestClientUsage: bad command lines exit 2 before starting anything, and
// every verb explains itself with --help.
func TestClientUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verb string
		args []string
		want string
	}{
		{"ping", []string{"-era", "future", "--", "true"}, `-era "future"`},
		{"ping", []string{"-version", "2030-01-01", "--", "true"}, `-version "2030-01-01"`},
		{"ping", []string{"-era", "legacy", "-version", "2026-07-28", "--", "true"}, "not of the legacy era"},
		{"ping", []string{"-log-level", "loud", "--", "true"}, `-log-level "loud"`},
		{"ping", []string{"extra", "--", "true"}, "want no arguments"},
		{"call", []string{"--", "true"}, "want TOOL"},
		{"call", []string{"echo", "[1]", "--", "true"}, "want a JSON object"},
		{"call", []string{"echo"}, "no server command"},
		{"list", []string{"-bogus", "--", "true"}, "flag provided but not defined"},
	} {
		var out, errb bytes.Buffer
		code := runClientVerb(clientVerbByName(t, tc.verb), tc.args, &out, &errb)
		if code != runtime.ExitUsage || !strings.Contains(errb.String(), tc.want) || out.Len() != 0 {
			t.Errorf("%s %v: exit %d, stderr %q", tc.verb, tc.args, code, errb.String())
		}
	}
	for _, v := range clientVerbs {
		var out, errb bytes.Buffer
		if code := run([]string{v.name, "--help"}, streams{Stdout: &out, Stderr: &errb}); code != runtime.ExitOK ||
			!strings.Contains(out.String(), "Usage: mcprt "+v.name) || !strings.Contains(out.String(), "-timeout") || errb.Len() != 0 {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", v.name, code, out.String(), errb.String())
		}
	}
}
