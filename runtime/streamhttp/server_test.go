package streamhttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// TestServe: Serve answers the endpoint, its health and metrics paths
// (the caller's metrics, then the handler's); when its context ends with
// a call in flight, the call is answered, Serve returns nil, and the
// address takes no more connections.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	serving := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		served <- streamhttp.Serve(ctx, ln, testServer(nil), streamhttp.ServeOptions{
			Options:     streamhttp.Options{Logger: slog.New(slog.DiscardHandler)},
			Path:        "/rpc",
			HealthPath:  "/healthz",
			Health:      func() (int, any) { return 299, map[string]string{"status": "fine"} },
			MetricsPath: "/metrics",
			Metrics:     func(w io.Writer) { fmt.Fprintln(w, "app_things 7") },
			OnServing:   func() { close(serving) },
		})
	}()
	<-serving
	base := "http://" + ln.Addr().String()
	f := &fixture{t: t, url: base + "/rpc"}
	sid := f.initialize(`{}`)
	for path, want := range map[string]string{
		"/healthz": "299 {\"status\":\"fine\"}\n",
		"/metrics": "200 app_things 7\n# HELP mcprt_http_sessions",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := fmt.Sprint(resp.StatusCode, " ", string(b)); !strings.HasPrefix(got, want) {
			t.Errorf("GET %s: %q, want it to start with %q", path, got, want)
		}
	}

	// A call in flight (its progress came) when the context ends.
	resp := f.send(context.Background(), "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300},"_meta":{"progressToken":2}}}`,
		map[string]string{"Mcp-Session-Id": sid})
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") {
	}
	stop()
	answered := false
	for sc.Scan() {
		answered = answered || strings.Contains(sc.Text(), `"slept"`)
	}
	if !answered {
		t.Error("the call in flight when the context ended was not answered")
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v, want nil once its context ended", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the address still takes connections after Serve returned")
	}
}

// TestServeBadPaths: a health or metrics path that is the endpoint's, or
// not a path, is an error, and the listener is closed.
func TestServeBadPaths(t *testing.T) {
	for _, o := range []streamhttp.ServeOptions{
		{HealthPath: "/mcp"},
		{MetricsPath: "metrics"},
		{HealthPath: "/h", MetricsPath: "/h"},
		{Path: "mcp"},
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := streamhttp.Serve(context.Background(), ln, testServer(nil), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
		if _, err := ln.Accept(); err == nil {
			t.Errorf("%+v: the listener is still open", o)
		}
	}
}
