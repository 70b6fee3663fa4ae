package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session/client"
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
	for _, want := range []string{"tools (", "  echo(text: string) ", "resources (", "mcprt://reference/readme", "templates (", "mcprt://reference/greeting/{name}", "prompts (", "review(code, language?)"} {
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
	out, errs, code = runVerb(t, "call", "-protocol", "2025-11-25", "echo", `{"text":1}`)
	if code != runtime.ExitFailure || !strings.Contains(out, "must be string") || !strings.Contains(errs, "tool echo reported an error") {
		t.Errorf("call with bad arguments: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	_, errs, code = runVerb(t, "call", "no-such-tool")
	if code != runtime.ExitFailure || errs != "mcprt call: the server has no tool \"no-such-tool\" (mcprt list tools shows the tools it has)\n" {
		t.Errorf("unknown tool: exit %d, stderr %q", code, errs)
	}
	_, errs, code = runVerb(t, "call", "-timeout", "3s", "sleep", `{"ms":20000}`) // -timeout bounds the handshake too: room for a loaded machine
	if code != runtime.ExitFailure || !strings.Contains(errs, "timed out after 3s") {
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
	if _, errs, code = runVerb(t, "get", "review", "oops"); code != runtime.ExitUsage || !strings.Contains(errs, "neither a JSON object nor NAME=VALUE") {
		t.Errorf("get with a bad argument: exit %d, stderr %q", code, errs)
	}

	for _, flags := range [][]string{{"-era", "legacy"}, {"-era", "modern"}, {"-protocol", "2024-11-05"}} {
		out, errs, code = runVerb(t, "ping", flags...)
		if code != runtime.ExitOK || !strings.HasPrefix(out, "ok: mcprt-reference") {
			t.Errorf("ping %v: exit %d, stdout %q, stderr %s", flags, code, out, errs)
		}
	}
	out, _, _ = runVerb(t, "ping", "-json", "-protocol", "2025-06-18")
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
		{"ping", []string{"-protocol", "2030-01-01", "--", "true"}, `-protocol "2030-01-01"`},
		{"ping", []string{"-era", "legacy", "-protocol", "2026-07-28", "--", "true"}, "not of the legacy era"},
		{"ping", []string{"-log-level", "loud", "--", "true"}, `-log-level "loud"`},
		{"ping", []string{"extra", "--", "true"}, "want no arguments"},
		{"call", []string{"--", "true"}, "want TOOL"},
		{"call", []string{"echo", "[1]", "--", "true"}, "arguments [1] are a JSON array, not an object: want one JSON object ('{\"text\":\"hi\"}') or NAME=VALUE pairs (text=hi)"},
		{"call", []string{"echo", "oops", "--", "true"}, `argument 1, "oops", is neither a JSON object nor NAME=VALUE`},
		{"call", []string{"echo", "{}", "x=1", "--", "true"}, "a JSON object must be the only argument"},
		{"call", []string{"echo", `{"text":"hi"`, "--", "true"}, "arguments are not valid JSON (unexpected end of JSON input) at column 13: want one JSON object"},
		{"get", []string{"review", `{"code":1}`, "--", "true"}, `prompt arguments are strings, and "code" is 1`},
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

// TestClientListSignatures: list shows each tool's arguments from its
// input schema, in the schema's order, optional ones marked with ?. The
// expected names come from the reference server's own schemas (list -json).
func TestClientListSignatures(t *testing.T) {
	t.Parallel()
	out, errs, code := runVerb(t, "list", "tools")
	if code != runtime.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"  echo(text: string)  ", "  sleep(ms: integer)  ", "  add(a: number, b: number", "  panic()  ",
		"  print(text: string, count?: integer, goroutines?: integer, child?: boolean)  "} {
		if !strings.Contains(out, want) {
			t.Errorf("list tools lacks %q:\n%s", want, out)
		}
	}
	js, errs, code := runVerb(t, "list", "-json", "tools")
	var got struct {
		Tools []struct {
			Name        string
			InputSchema struct {
				Properties map[string]json.RawMessage
				Required   []string
			}
		}
	}
	if code != runtime.ExitOK || json.Unmarshal([]byte(js), &got) != nil || len(got.Tools) == 0 {
		t.Fatalf("list -json: exit %d, %s %s", code, js, errs)
	}
	lines := strings.Split(out, "\n")
	for _, tool := range got.Tools {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  "+tool.Name+"(") })
		if i < 0 {
			t.Errorf("no line for %s:\n%s", tool.Name, out)
			continue
		}
		sig, _, _ := strings.Cut(lines[i], ")")
		for name := range tool.InputSchema.Properties {
			mark := "?"
			if slices.Contains(tool.InputSchema.Required, name) {
				mark = ""
			}
			if !strings.Contains(sig, name+mark+": ") || mark == "" && strings.Contains(sig, name+"?") {
				t.Errorf("%s: signature %q does not show argument %s (required: %v)", tool.Name, sig, name, mark == "")
			}
		}
	}
}

func TestToolSignature(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"precision":{"type":"integer"}},"required":["a","b"]}`,
			"f(a: number, b: number, precision?: integer)"},
		// The server's order, not the alphabet's.
		{`{"type":"object","properties":{"z":{"type":"string"},"a":{}},"required":["a"]}`, "f(z?: string, a: any)"},
		{`{"type":"object","properties":{"tags":{"type":["array","null"],"items":{"type":"string"}},"mode":{"enum":["fast","slow"]}}}`,
			`f(tags?: string[]|null, mode?: "fast"|"slow")`},
		{`{"type":"object"}`, "f()"},
		{``, "f()"},
		// An object's fields, one level deep; deeper ones are "object"
		// (-json has them).
		{`{"type":"object","properties":{"who":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"home":{"type":"object","properties":{"city":{"type":"string"}}}},"required":["name"]}},"required":["who"]}`,
			`f(who: {name: string, age?: integer, home?: object})`},
		{`{"type":"object","properties":{"people":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}},"opts":{"type":"object"}}}`,
			`f(people?: {name?: string}[], opts?: object)`},
	} {
		if got := toolSignature("f", json.RawMessage(tc.schema)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.schema, got, tc.want)
		}
	}
}

// TestClientVerbose: with -v every line of the server's stderr is shown as
// written, prefixed with the server's name: none dropped by a throttle,
// none re-escaped inside a log record.
func TestClientVerbose(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	script := `i=0; while [ $i -lt 30 ]; do echo "line $i: \"quoted\" \\ back" >&2; i=$((i+1)); done; exit 3`
	code := runClientVerb(clientVerbByName(t, "ping"), []string{"-v", "--", "sh", "-c", script}, &out, &errb)
	if code != runtime.ExitFailure {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	last := -1
	for i := range 30 {
		want := fmt.Sprintf("[sh] line %d: \"quoted\" \\ back\n", i)
		at := strings.Index(errb.String(), want)
		if at < 0 || at < last {
			t.Fatalf("line %d missing or out of order: want %q in\n%s", i, want, errb.String())
		}
		last = at
	}
	if strings.Contains(errb.String(), "throttling") || strings.Contains(errb.String(), `msg="server stderr"`) {
		t.Errorf("-v went through the log:\n%s", errb.String())
	}
}

// TestClientServerFailsOnItsFlags: a server that rejects its command line
// says why first and then prints its usage; the reason is shown.
func TestClientServerFailsOnItsFlags(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	script := `echo "flag provided but not defined: -bogus" >&2; i=0; while [ $i -lt 40 ]; do echo "  -flag$i  usage" >&2; i=$((i+1)); done; exit 2`
	code := runClientVerb(clientVerbByName(t, "ping"), []string{"--", "sh", "-c", script}, &out, &errb)
	got := errb.String()
	if code != runtime.ExitFailure || !strings.Contains(got, "server exited with status 2\nserver stderr:\n  flag provided but not defined: -bogus\n") ||
		!strings.Contains(got, "lines omitted") || !strings.HasSuffix(got, "  -flag39  usage\n") {
		t.Errorf("exit %d, stderr:\n%s", code, got)
	}
}

// TestClientProgress: off a terminal, one line per notification, and no
// carriage returns.
func TestClientProgress(t *testing.T) {
	t.Parallel()
	out, errs, code := runVerb(t, "call", "sleep", `{"ms":500}`)
	if code != runtime.ExitOK || out != "slept\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	n := 0
	for l := range strings.SplitSeq(strings.TrimSuffix(errs, "\n"), "\n") {
		if !strings.HasPrefix(l, "progress ") || !strings.Contains(l, "/500 slept ") {
			t.Errorf("stderr line %q is not a progress line", l)
		}
		n++
	}
	if n < 2 || strings.Contains(errs, "\r") {
		t.Errorf("%d progress lines, want one per notification (several), none redrawn:\n%q", n, errs)
	}
}

// TestStatusLine: on a terminal progress is one line redrawn in place, cut
// to fit 80 columns; other output erases it, is written, and the line is
// drawn again below; at the end it is erased.
func TestStatusLine(t *testing.T) {
	var term bytes.Buffer
	lw := &lockedWriter{w: &term, tty: true}
	lw.setStatus("mcprt call: " + progressText(client.Progress{Progress: 1, Total: 4}))
	lw.setStatus("mcprt call: " + progressText(client.Progress{Progress: 2, Total: 4, Message: "half"}))
	fmt.Fprintln(lw, "server log [info] hello")
	lw.setStatus(strings.Repeat("é", 100))
	lw.setStatus("")
	lw.setStatus("")
	want := "\rmcprt call: progress 1/4\x1b[K" +
		"\rmcprt call: progress 2/4 half\x1b[K" +
		"\r\x1b[Kserver log [info] hello\n\rmcprt call: progress 2/4 half\x1b[K" +
		"\r" + strings.Repeat("é", 78) + "…\x1b[K" +
		"\r\x1b[K"
	if got := term.String(); got != want {
		t.Errorf("terminal got\n%q\nwant\n%q", got, want)
	}

	var plain bytes.Buffer
	lw = &lockedWriter{w: &plain}
	lw.setStatus("progress 1/4")
	fmt.Fprintln(lw, "a line")
	lw.setStatus("")
	if plain.String() != "a line\n" {
		t.Errorf("off a terminal: %q", plain.String())
	}
}

// TestProtocolFlagsEveryClientVerb: every client verb takes -era and
// -protocol, with the same meaning.
func TestProtocolFlagsEveryClientVerb(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verb string
		args []string
	}{
		{"list", []string{"tools"}},
		{"call", []string{"echo", `{"text":"x"}`}},
		{"read", []string{"mcprt://reference/readme"}},
		{"get", []string{"review", "code=x"}},
		{"ping", nil},
	} {
		for _, flags := range [][]string{{"-era", "modern", "-protocol", "2026-07-28"}, {"-era", "legacy", "-protocol", "2025-06-18"}, {"-protocol", "2024-11-05"}} {
			_, errs, code := runVerb(t, tc.verb, append(slices.Clone(tc.args), flags...)...)
			if code != runtime.ExitOK {
				t.Errorf("%s %v: exit %d, %s", tc.verb, flags, code, errs)
			}
		}
		var out, errb bytes.Buffer
		code := runClientVerb(clientVerbByName(t, tc.verb), append(slices.Clone(tc.args), "-era", "modern", "-protocol", "2025-06-18", "--", "true"), &out, &errb)
		if code != runtime.ExitUsage || !strings.Contains(errb.String(), "-protocol 2025-06-18 is not of the modern era") {
			t.Errorf("%s with a mismatched -protocol: exit %d, %s", tc.verb, code, errb.String())
		}
	}
	out, _, _ := runVerb(t, "ping", "-json", "-protocol", "2026-07-28")
	if !strings.Contains(out, `"era": "modern"`) {
		t.Errorf("-protocol 2026-07-28 did not imply the modern era: %s", out)
	}
}

// TestClientBinary drives the built mcprt as a user does: a server that
// rejects its flags is shown saying why, and -timeout bounds a connect to a
// server that never answers, which is then gone.
func TestClientBinary(t *testing.T) {
	t.Parallel()
	bin := buildChaos(t)
	run := func(t *testing.T, args ...string) (stderr string, code int, took time.Duration) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(chaosHang):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("mcprt %q hung; stderr:\n%s", args, errb.String())
		}
		return errb.String(), cmd.ProcessState.ExitCode(), time.Since(start)
	}

	t.Run("server with a bad flag", func(t *testing.T) {
		t.Parallel()
		stderr, code, _ := run(t, "call", "echo", `{"text":"hi"}`, "--", bin, "serve", "-bogus")
		if code != runtime.ExitFailure || !strings.Contains(stderr, "flag provided but not defined: -bogus") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})

	// The server never answers: exec'd, so its pid is sleep's; or with
	// sleep as its child, which must go too.
	for name, script := range map[string]string{
		"sleep":            `echo $$ >"$0"; exec sleep 100`,
		"sleep grandchild": `sleep 100 & echo $! >"$0"; wait`,
	} {
		t.Run("timeout/"+name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			stderr, code, took := run(t, "ping", "-timeout", "1s", "--", "sh", "-c", script, pidFile)
			if code != runtime.ExitFailure || !strings.Contains(stderr, "within -timeout 1s") {
				t.Errorf("exit %d, stderr:\n%s", code, stderr)
			}
			// The timeout, then SIGTERM at once: a server that never
			// completed the handshake is not given the 2s stdin-EOF grace
			// (with it, this took 3s).
			if took > 2500*time.Millisecond {
				t.Errorf("ping -timeout 1s took %v, want about 1s", took)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			// An orphan's exit is collected by init, maybe a moment later
			// (or, in some containers, never: a zombie is gone enough).
			deadline := time.Now().Add(5 * time.Second)
			for processRuns(pid) {
				if time.Now().After(deadline) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("the server's sleep (pid %d) outlived mcprt ping", pid)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// processRuns reports whether pid is a process that has not exited.
func processRuns(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestClientArgumentForms: call and get both take a JSON object or
// NAME=VALUE pairs; a pair is a string when the tool's schema says so and
// a JSON value otherwise.
func TestClientArgumentForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verb string
		args []string
		want string
	}{
		{"call", []string{"echo", "text=hi there"}, "hi there\n"},
		// echo's text is a string in its schema: 123 stays one.
		{"call", []string{"echo", "text=123"}, "123\n"},
		{"call", []string{"add", "a=1", "b=2.5"}, `{"sum":3.5}` + "\n"},
		{"call", []string{"add", `{"a":1,"b":2}`}, `{"sum":3}` + "\n"},
		{"get", []string{"review", `{"code":"x := 1","language":"Go"}`}, "user: Please review this Go code"},
		{"get", []string{"review", "code=x := 1", "language=Go"}, "user: Please review this Go code"},
	} {
		out, errs, code := runVerb(t, tc.verb, tc.args...)
		if code != runtime.ExitOK || !strings.HasPrefix(out, tc.want) {
			t.Errorf("%s %q: exit %d, stdout %q, want %q; stderr %s", tc.verb, tc.args, code, out, tc.want, errs)
		}
	}
}

// TestClientUnknownName: a tool or prompt the server does not list is
// said once, with the closest listed name and where to see them all.
func TestClientUnknownName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verb string
		args []string
		want string
	}{
		{"call", []string{"ech", `{"text":"x"}`}, `mcprt call: the server has no tool "ech"; did you mean "echo"? (mcprt list tools shows the tools it has)` + "\n"},
		{"call", []string{"Echo", "text=x"}, `mcprt call: the server has no tool "Echo"; did you mean "echo"? (mcprt list tools shows the tools it has)` + "\n"},
		{"get", []string{"revue", "code=x"}, `mcprt get: the server has no prompt "revue"; did you mean "review"? (mcprt list prompts shows the prompts it has)` + "\n"},
	} {
		out, errs, code := runVerb(t, tc.verb, tc.args...)
		if code != runtime.ExitFailure || errs != tc.want || out != "" {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %q, want %q", tc.verb, tc.args, code, out, errs, tc.want)
		}
	}
}

func TestClosestName(t *testing.T) {
	names := []string{"echo", "sleep", "ref__panic", "ref__work", "review"}
	for want, got := range map[string]string{
		"ech": "echo", "ECHO": "echo", "slep": "sleep", "panic": "ref__panic", "pnic": "ref__panic",
		"ref__wrk": "ref__work", "reviews": "review", "zzzzzz": "", "": "",
	} {
		if c := closest(want, names); c != got {
			t.Errorf("closest(%q) = %q, want %q", want, c, got)
		}
	}
}

func TestToolArguments(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"},"tags":{"type":"array"}}}`)
	a, problem := parseVerbArgs([]string{"text=42", "n=3", "tags=[\"a\"]", "other=plain words", "on=true", "n=4", "eq=a=b", "empty="})
	if problem != "" {
		t.Fatal(problem)
	}
	want := `{"text":"42","n":4,"tags":["a"],"other":"plain words","on":true,"eq":"a=b","empty":""}`
	if got := string(a.toolArguments(schema)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without a schema, a value is JSON where it can be.
	if got := string(a.toolArguments(nil)); !strings.HasPrefix(got, `{"text":42,`) {
		t.Errorf("without a schema: %s", got)
	}
}

// TestClientReadOutput: text ends with a newline on stdout; -o FILE gets
// the contents exactly, binary decoded, and stdout nothing.
func TestClientReadOutput(t *testing.T) {
	t.Parallel()
	out, errs, code := runVerb(t, "read", "mcprt://reference/greeting/bob")
	if code != runtime.ExitOK || out != "Hello, bob!\n" {
		t.Errorf("read text: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	dir := t.TempDir()
	for uri, want := range map[string]string{"mcprt://reference/pixel.png": "\x89PNG\r\n", "mcprt://reference/greeting/bob": "Hello, bob!"} {
		file := filepath.Join(dir, "out")
		out, errs, code := runVerb(t, "read", "-o", file, uri)
		got, err := os.ReadFile(file)
		if code != runtime.ExitOK || out != "" || err != nil || !strings.HasPrefix(string(got), want) ||
			uri == "mcprt://reference/greeting/bob" && string(got) != want ||
			errs != fmt.Sprintf("mcprt read: wrote %d bytes to %s\n", len(got), file) {
			t.Errorf("read -o %s: exit %d, stdout %q, stderr %q, file %q (%v)", uri, code, out, errs, got, err)
		}
	}
	var o, e bytes.Buffer
	if code := runClientVerb(clientVerbByName(t, "read"), []string{"-o", "f", "-json", "x", "--", "true"}, &o, &e); code != runtime.ExitUsage || !strings.Contains(e.String(), "give one") {
		t.Errorf("read -o -json: exit %d, stderr %q", code, e.String())
	}
}

// TestVersionIsOne: the reference server says the version mcprt version
// says, and the client verbs introduce themselves with it.
func TestVersionIsOne(t *testing.T) {
	t.Parallel()
	v, _ := buildVersions()
	out, errs, code := runVerb(t, "ping", "-json")
	var p struct{ Server struct{ Version string } }
	if code != runtime.ExitOK || json.Unmarshal([]byte(out), &p) != nil || p.Server.Version != v || !strings.Contains(versionLine(), " "+v+" ") {
		t.Errorf("mcprt version says %q, the server %q (exit %d, %s)", versionLine(), p.Server.Version, code, errs)
	}
}

// TestVersionStamped: a build stamped with -ldflags -X main.version says
// that version, as mcprt version and as the server's.
func TestVersionStamped(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "mcprt")
	if out, err := exec.Command(benchGoTool(), "build", "-o", bin, "-ldflags", "-X main.version=v9.8.7-stamped", ".").CombinedOutput(); err != nil {
		t.Fatalf("building mcprt: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "mcprt v9.8.7-stamped (") {
		t.Errorf("mcprt version: %q (%v)", out, err)
	}
	out, err = exec.Command(bin, "ping", "--", bin, "serve").Output()
	if err != nil || !strings.HasPrefix(string(out), "ok: mcprt-reference v9.8.7-stamped, ") {
		t.Errorf("mcprt ping: %q (%v)", out, err)
	}
}
