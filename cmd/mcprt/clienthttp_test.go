package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/fixture"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// serveReferenceHTTP serves the reference server over Streamable HTTP in
// this process for one test, and returns its endpoint.
func serveReferenceHTTP(t *testing.T, o streamhttp.Options) string {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	o.Logger = slog.New(slog.DiscardHandler)
	h, err := streamhttp.New(e, fixture.Reference(version), o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return ts.URL + "/mcp"
}

func runURLVerb(t *testing.T, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runClientVerb(clientVerbByName(t, name), args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestClientURL: every client verb with -url, in both eras, against the
// reference server over Streamable HTTP; -header carries credentials.
func TestClientURL(t *testing.T) {
	t.Parallel()
	url := serveReferenceHTTP(t, streamhttp.Options{Authorize: streamhttp.BearerToken("t0k")})
	auth := []string{"-url", url, "-header", "Authorization: Bearer t0k"}
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			with := func(args ...string) []string { return append(append([]string{"-era", era}, auth...), args...) }
			out, errs, code := runURLVerb(t, "list", with()...)
			if code != runtime.ExitOK || !strings.Contains(out, "echo(text: string)") || !strings.Contains(out, "review(code, language?)") {
				t.Errorf("list: exit %d\n%s%s", code, out, errs)
			}
			out, errs, code = runURLVerb(t, "call", with("sleep", `{"ms":300}`)...)
			if code != runtime.ExitOK || out != "slept\n" || !strings.Contains(errs, "progress ") {
				t.Errorf("call sleep: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			out, errs, code = runURLVerb(t, "call", with("-log-level", "info", "log", `{"levels":["debug","error"],"message":"psst"}`)...)
			if code != runtime.ExitOK || !strings.Contains(errs, "server log [error] reference: psst") || strings.Contains(errs, "[debug]") {
				t.Errorf("call log: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			out, errs, code = runURLVerb(t, "call", with("panic")...)
			if code != runtime.ExitFailure || !strings.Contains(errs, "tool panic reported an error") {
				t.Errorf("call panic: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			out, errs, code = runURLVerb(t, "read", with("mcprt://reference/greeting/Ada")...)
			if code != runtime.ExitOK || out != "Hello, Ada!\n" {
				t.Errorf("read: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			out, errs, code = runURLVerb(t, "get", with("review", "code=x := 1")...)
			if code != runtime.ExitOK || !strings.Contains(out, "x := 1") {
				t.Errorf("get: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			out, errs, code = runURLVerb(t, "ping", with()...)
			if code != runtime.ExitOK || !strings.Contains(out, "ok: mcprt-reference") || !strings.Contains(out, "("+era+")") {
				t.Errorf("ping: exit %d, stdout %q, stderr %q", code, out, errs)
			}
		})
	}
	t.Run("unauthorized", func(t *testing.T) {
		t.Parallel()
		_, errs, code := runURLVerb(t, "ping", "-url", url)
		if code != runtime.ExitFailure || !strings.Contains(errs, "HTTP 401") {
			t.Errorf("ping without the token: exit %d, stderr %q", code, errs)
		}
	})
}

// TestClientURLUsage: -url stands instead of a server command, not beside
// one, and the flags about a server process do not go with it.
func TestClientURLUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-url", "http://127.0.0.1:1/mcp", "--", "true"}, "two servers"},
		{[]string{"-header", "X-A: b", "--", "true"}, "-header is for -url"},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-env", "A=b"}, "not -url"},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-header", "no colon"}, `want "Name: value"`},
	} {
		_, errs, code := runURLVerb(t, "ping", tc.args...)
		if code != runtime.ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("ping %v: exit %d, stderr %q", tc.args, code, errs)
		}
	}
	_, errs, code := runURLVerb(t, "ping", "-url", "ftp://example.com/mcp")
	if code != runtime.ExitFailure || !strings.Contains(errs, "not an http:// or https:// URL") {
		t.Errorf("ping with an ftp URL: exit %d, stderr %q", code, errs)
	}
}
