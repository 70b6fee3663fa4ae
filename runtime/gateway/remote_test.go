package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/session/client"
)

// remote is an in-process Streamable HTTP server, as a process serving
// one would be: stop ends it abruptly (connections cut, sessions lost),
// and a new one may be started on the same address.
type remote struct {
	t     *testing.T
	addr  string
	token string
	hs    *http.Server
	h     *streamhttp.Handler
}

// startRemote serves a small server (tools echo and whoami) on addr
// ("127.0.0.1:0" for any port); a token requires Authorization: Bearer.
func startRemote(t *testing.T, addr, token string) *remote {
	t.Helper()
	srv := handlers.NewServer(mcp.Implementation{Name: "remote", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "echo"}}, func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var in struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(args, &in)
		return mcp.TextResult(in.Text), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "version"}}, func(_ context.Context, r *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult(r.Version), nil
	})
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	o := streamhttp.Options{}
	if token != "" {
		o.Authorize = streamhttp.BearerToken(token)
	}
	h, err := streamhttp.New(e, srv, o)
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	deadline := time.Now().Add(hang)
	for {
		// The address of a stopped one may take a moment to be free.
		if ln, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	r := &remote{t: t, addr: ln.Addr().String(), token: token, hs: &http.Server{Handler: mux}, h: h}
	go r.hs.Serve(ln)
	t.Cleanup(r.stop)
	return r
}

func (r *remote) url() string { return "http://" + r.addr + "/mcp" }

// stop ends the server as a kill would: every connection cut at once.
func (r *remote) stop() {
	r.hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	_ = r.h.Shutdown(ctx)
}

func remoteBackend(name, url, protocol string) Backend {
	return Backend{Name: name, URL: url, Protocol: protocol, Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
}

func toolText(t *testing.T, out string) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a tool result: %s", out)
	}
	return r.Content[0].Text, r.IsError
}

// A remote backend is connected to, in the era it asks for, with its
// headers; its tools are offered and called like a process's. One whose
// credentials are refused fails after its restart intensity, saying why.
func TestRemoteBackend(t *testing.T) {
	t.Parallel()
	r := startRemote(t, "127.0.0.1:0", "s3cret")
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	auto, legacy, modern := remoteBackend("auto", r.url(), ""), remoteBackend("legacy", r.url(), "legacy"), remoteBackend("modern", r.url(), "2026-07-28")
	auto.Headers, legacy.Headers, modern.Headers = auth, auth, auth
	bad := remoteBackend("bad", r.url(), "")
	bad.Headers = map[string]string{"Authorization": "Bearer wrong"}
	bad.MaxRestarts = 1
	g := start(t, auto, legacy, modern, bad)
	for name, version := range map[string]string{"auto": "2026-07-28", "legacy": "2025-11-25", "modern": "2026-07-28"} {
		if st := g.state(name); st.State != Up || st.PID != 0 || st.Tools != 2 {
			t.Errorf("%s: %+v", name, st)
		}
		if text, isErr := toolText(t, g.must("tools/call", `{"name":"`+name+`__echo","arguments":{"text":"hi `+name+`"}}`)); isErr || text != "hi "+name {
			t.Errorf("%s__echo: %q (isError %v)", name, text, isErr)
		}
		if text, _ := toolText(t, g.must("tools/call", `{"name":"`+name+`__version","arguments":{}}`)); text != version {
			t.Errorf("%s speaks %q, want %s", name, text, version)
		}
	}
	waitFor(t, "bad to fail", func() bool { return g.state("bad").State == Failed })
	if st := g.state("bad"); !strings.Contains(st.LastError, "401") {
		t.Errorf("bad: %+v", st)
	}
}

// A remote server that goes away and comes back (a new process on the
// same address: legacy sessions are gone) is connected to again, in both
// eras, and its tools work again. A call while it is away is answered at
// once, saying so.
func TestRemoteBackendReconnects(t *testing.T) {
	t.Parallel()
	r := startRemote(t, "127.0.0.1:0", "")
	legacy, modern := remoteBackend("legacy", r.url(), "legacy"), remoteBackend("modern", r.url(), "modern")
	legacy.MaxRestarts, modern.MaxRestarts = 1000, 1000
	legacy.PingInterval, modern.PingInterval = -1, -1 // only the connection's loss tells
	g := start(t, legacy, modern)
	for _, name := range []string{"legacy", "modern"} {
		if text, _ := toolText(t, g.must("tools/call", `{"name":"`+name+`__echo","arguments":{"text":"before"}}`)); text != "before" {
			t.Fatalf("%s: %q", name, text)
		}
	}
	r.stop()
	// The modern backend's listen stream breaks; the legacy one learns
	// it from the next request.
	waitFor(t, "modern to notice", func() bool { return g.state("modern").State != Up })
	text, isErr := toolText(t, g.must("tools/call", `{"name":"legacy__echo","arguments":{"text":"while away"}}`))
	if !isErr || !strings.Contains(text, `backend "legacy"`) {
		t.Errorf("a call while it is away: %q (isError %v)", text, isErr)
	}
	waitFor(t, "legacy to notice", func() bool { return g.state("legacy").State != Up })

	startRemote(t, r.addr, "")
	for _, name := range []string{"legacy", "modern"} {
		waitFor(t, name+" to come back", func() bool {
			out, err := g.run(nil, req("tools/call", `{"name":"`+name+`__echo","arguments":{"text":"back"}}`, nil))
			if err != nil {
				return false
			}
			text, isErr := toolText(t, out)
			return !isErr && text == "back"
		})
		if st := g.state(name); st.State != Up || st.Restarts == 0 {
			t.Errorf("%s: %+v", name, st)
		}
	}
}

// connectionGone: a 4xx other than 404 is one request refused; a 5xx,
// a 404 and a network error are the connection lost.
func TestConnectionGone(t *testing.T) {
	for _, tc := range []struct {
		err  error
		gone bool
	}{
		{&client.HTTPError{Status: 413}, false},
		{&client.HTTPError{Status: 401}, false},
		{&client.HTTPError{Status: 404}, true},
		{&client.HTTPError{Status: 502}, true},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true},
	} {
		if got := connectionGone(tc.err); got != tc.gone {
			t.Errorf("%v: %v", tc.err, got)
		}
	}
}

// cutOnce is a proxy in front of a remote server that cuts the first
// 2026-07-28 subscriptions/listen stream through it right after its
// first bytes, as a proxy with a read timeout or a dropped connection
// would.
type cutOnce struct {
	proxy *httputil.ReverseProxy
	cut   atomic.Bool
}

func (p *cutOnce) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Method") == "subscriptions/listen" && p.cut.CompareAndSwap(false, true) {
		rp := *p.proxy
		rp.ModifyResponse = func(resp *http.Response) error {
			resp.Body = &cutBody{ReadCloser: resp.Body}
			return nil
		}
		rp.ServeHTTP(w, r)
		return
	}
	p.proxy.ServeHTTP(w, r)
}

// cutBody gives its first read, then fails as a cut connection does.
type cutBody struct {
	io.ReadCloser
	read bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.read {
		return 0, io.ErrUnexpectedEOF
	}
	b.read = true
	return b.ReadCloser.Read(p)
}

// A remote backend's listen stream that breaks is opened again: the
// backend stays up, with no restart, and its tools work. (A backend whose
// streams keep breaking as they open is gone: TestRemoteBackendReconnects.)
func TestRemoteListenStreamReopened(t *testing.T) {
	t.Parallel()
	r := startRemote(t, "127.0.0.1:0", "")
	p := &cutOnce{proxy: httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: r.addr})}
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	b := remoteBackend("cut", ps.URL+"/mcp", "modern")
	b.MaxRestarts = 1000
	g := start(t, b)
	waitFor(t, "the stream to be cut", p.cut.Load)
	waitFor(t, "the stream to be opened again", func() bool {
		return strings.Contains(g.stderr.String(), "subscriptions/listen stream ended; opening it again")
	})
	if text, isErr := toolText(t, g.must("tools/call", `{"name":"cut__echo","arguments":{"text":"still"}}`)); isErr || text != "still" {
		t.Errorf("after the cut: %q (isError %v)", text, isErr)
	}
	if st := g.state("cut"); st.State != Up || st.Restarts != 0 {
		t.Errorf("after the cut: %+v, want up with no restart", st)
	}
}
