package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// exchangeAS is an authorization server for the gateway's client "gw":
// client credentials give "svc-N", a token exchange of "in-NAME" gives
// "as-NAME-N"; a subject "in-mallory" is refused.
type exchangeAS struct {
	srv       *httptest.Server
	exchanges atomic.Int32
	mu        sync.Mutex
	subjects  []string // the subject tokens it was shown
}

func newExchangeAS(tb testing.TB) *exchangeAS {
	as := &exchangeAS{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": as.srv.URL, "token_endpoint": as.srv.URL + "/token",
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
	})
	var n atomic.Int32
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if id, secret, ok := r.BasicAuth(); !ok || id != "gw" || secret != "gw-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
			return
		}
		tok := fmt.Sprintf("svc-%d", n.Add(1))
		if r.PostForm.Get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" {
			as.exchanges.Add(1)
			sub := r.PostForm.Get("subject_token")
			as.mu.Lock()
			as.subjects = append(as.subjects, sub)
			as.mu.Unlock()
			name, ok := strings.CutPrefix(sub, "in-")
			if !ok || name == "mallory" {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": "mallory may not be represented"})
				return
			}
			tok = fmt.Sprintf("as-%s-%d", name, n.Add(1))
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600,
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
	})
	as.srv = httptest.NewUnstartedServer(mux)
	as.srv.Start()
	tb.Cleanup(as.srv.Close)
	return as
}

// startProtected serves, at /mcp, a server whose tool who returns the
// bearer token its request came with, behind a check that wants one of
// as's ("svc-" or "as-") and names as in its 401.
func startProtected(tb testing.TB, as *exchangeAS) string {
	srv := handlers.NewServer(mcp.Implementation{Name: "protected", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "who"}}, func(_ context.Context, r *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult(r.Caller.Subject), nil
	})
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		tb.Fatal(err)
	}
	h, err := streamhttp.New(e, srv, streamhttp.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{as.srv.URL}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !strings.HasPrefix(tok, "svc-") && !strings.HasPrefix(tok, "as-") {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		who := tok
		if i := strings.LastIndexByte(tok, '-'); i > 0 {
			who = tok[:i] // as-alice-7: as-alice, the same for every token of one caller
		}
		h.ServeHTTP(w, r.WithContext(handlers.WithCaller(r.Context(), &handlers.Caller{Subject: who})))
	})
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	tb.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		h.Shutdown(ctx)
	})
	return base + "/mcp"
}

type testTokenKey struct{}

// The tests' callers carry their token under a key of their own, as
// resourceserver.Options.PassToken does under its.
func init() {
	subjectToken = func(ctx context.Context) string {
		t, _ := ctx.Value(testTokenKey{}).(string)
		return t
	}
}

// asCaller is a tools/call of name as the caller name, whose token is
// "in-NAME", from issuer.
func asCaller(name, issuer, params string) (context.Context, *handlers.Request) {
	r := req("tools/call", params, &peer{})
	ctx := context.Background()
	if name != "" {
		r.Caller = &handlers.Caller{Subject: name, Issuer: issuer}
		ctx = context.WithValue(ctx, testTokenKey{}, "in-"+name)
	}
	return ctx, r
}

func exchangeBackend(url, issuer, protocol string) Backend {
	b := remoteBackend("x", url, protocol)
	b.Auth = AuthExchange
	b.OAuth = &OAuth{Issuer: issuer, ClientID: "gw", ClientSecret: "gw-secret"}
	return b
}

func (g *testGateway) callers(name string) *callers {
	for _, b := range g.all() {
		if b.name == name {
			b.mu.Lock()
			defer b.mu.Unlock()
			return b.callers
		}
	}
	return nil
}

// A backend with "auth": "exchange" is reached as each caller: their own
// token, exchanged once and kept, on their own connection; a caller
// without a token, or with one of another issuer, is told why and the
// token goes nowhere; a refused exchange says so. Past maxCallers the
// least recently used idle connection is closed; an idle one is closed
// after callerIdle.
func TestExchangePerCaller(t *testing.T) {
	maxCallers, callerIdle, callerSweep = 2, time.Hour, 10*time.Millisecond
	defer func() { maxCallers, callerIdle, callerSweep = defaultMaxCallers, defaultCallerIdle, 0 }()
	as := newExchangeAS(t)
	url := startProtected(t, as)
	g := start(t, exchangeBackend(url, as.srv.URL, ""))
	m, _ := g.Server().Method("tools/call")
	call := func(who, issuer string) (string, bool) {
		t.Helper()
		ctx, r := asCaller(who, issuer, `{"name":"x__who","arguments":{}}`)
		ctx, cancel := context.WithTimeout(ctx, hang)
		defer cancel()
		res, err := m.Run(ctx, r)
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		out, _ := json.Marshal(res)
		return toolText(t, string(out))
	}
	for range 3 {
		for _, who := range []string{"alice", "bob"} {
			if text, isErr := call(who, as.srv.URL); isErr || text != "as-"+who {
				t.Errorf("%s reaches the backend as %q (isError %v)", who, text, isErr)
			}
		}
	}
	// A tool the backend does not know is its error, and the caller's
	// connection stays.
	ctx, r := asCaller("alice", as.srv.URL, `{"name":"x__who","arguments":{}}`)
	b := g.all()[0]
	if err := b.forward(ctx, r, "tools/call", map[string]any{"name": "nope"}, new(json.RawMessage)); err == nil {
		t.Error("an unknown tool answered")
	}
	if text, _ := call("alice", as.srv.URL); text != "as-alice" {
		t.Errorf("alice after an error: %q", text)
	}
	if n := as.exchanges.Load(); n != 2 {
		t.Errorf("%d exchanges for 6 calls of 2 callers and an error, want 2", n)
	}
	if text, isErr := call("", ""); !isErr || !strings.Contains(text, "carries no OAuth access token") {
		t.Errorf("no token: %q", text)
	}
	if text, isErr := call("eve", "https://elsewhere.example"); !isErr || !strings.Contains(text, "not sent to another authorization server") {
		t.Errorf("another issuer: %q", text)
	}
	if text, isErr := call("mallory", as.srv.URL); !isErr || !strings.Contains(text, "refused to exchange your sign-in") || !strings.Contains(text, "mallory may not be represented") {
		t.Errorf("refused: %q", text)
	}
	as.mu.Lock()
	for _, s := range as.subjects {
		if s == "in-eve" {
			t.Error("eve's token went to an issuer other than hers")
		}
	}
	as.mu.Unlock()
	// Two at most: carol's takes the place of the one used least lately.
	if text, _ := call("carol", as.srv.URL); text != "as-carol" {
		t.Errorf("carol: %q", text)
	}
	cs := g.callers("x")
	if n := cs.count(); n != 2 {
		t.Errorf("%d callers' connections, want 2", n)
	}
	if st := g.state("x"); st.Auth != AuthExchange || st.Callers != 2 || len(st.RecentCallers) != 2 ||
		st.RecentCallers[0].Principal != "sub:carol" || st.RecentCallers[1].Principal != "sub:mallory" {
		t.Errorf("status: auth %q, %d callers %+v", st.Auth, st.Callers, st.RecentCallers)
	}
	if m := g.Auth("x"); m != AuthExchange {
		t.Errorf("Auth: %q", m)
	}
	cs.mu.Lock()
	_, alice := cs.m["sub:alice"]
	cs.idle = 10 * time.Millisecond
	cs.mu.Unlock()
	if alice {
		t.Error("alice's connection, used least lately, was kept")
	}
	waitFor(t, "idle connections to close", func() bool { return cs.count() == 0 })
	if text, _ := call("alice", as.srv.URL); text != "as-alice" {
		t.Errorf("alice again: %q", text)
	}
	// Neither the callers' tokens, nor the exchanged ones, nor the
	// gateway's secret reach its log.
	for _, secret := range []string{"in-alice", "in-bob", "in-mallory", "as-alice-", "as-bob-", "gw-secret"} {
		if strings.Contains(g.stderr.String(), secret) {
			t.Errorf("%q reached the gateway's log", secret)
		}
	}
}

// BenchmarkExchangeCaller is what a caller costs an "auth": "exchange"
// backend (2026-07-28, whose server keeps nothing per session):
//   - new: a caller's first call, with its connection, discovery and
//     token exchange (ns/op, allocs/op, B/op: the gateway's and the
//     in-process backend's and authorization server's together);
//   - known: a call of a caller whose connection is kept;
//   - 1000: the heap that 1,000 callers' kept connections hold, after a
//     collection (heap-B/caller; the backend keeps nothing per caller).
//     Run it with -benchtime=1x: each run connects 1,000 callers.
func BenchmarkExchangeCaller(b *testing.B) {
	as := newExchangeAS(b)
	url := startProtected(b, as)
	g, err := New(&Config{Backends: []Backend{exchangeBackend(url, as.srv.URL, "modern")}}, Options{
		Logger: slog.New(slog.DiscardHandler), Stderr: &syncBuffer{}, CloseGrace: time.Second, TermGrace: time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	m, _ := g.Server().Method("tools/call")
	n := 0
	call := func(who string) {
		cctx, r := asCaller(who, as.srv.URL, `{"name":"x__who","arguments":{}}`)
		cctx, cancel := context.WithTimeout(cctx, hang)
		defer cancel()
		res, err := m.Run(cctx, r)
		if err != nil || res.(*mcp.CallToolResult).IsError {
			b.Fatalf("%s: %+v %v", who, res, err)
		}
	}
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n++
			call(fmt.Sprintf("u%d", n))
		}
	})
	b.Run("known", func(b *testing.B) {
		call("k")
		b.ReportAllocs()
		for b.Loop() {
			call("k")
		}
	})
	b.Run("1000", func(b *testing.B) {
		var cs *callers
		for _, bk := range g.all() {
			bk.mu.Lock()
			cs = bk.callers
			bk.mu.Unlock()
		}
		for b.Loop() {
			// Start from none: the connections of the runs before closed.
			cs.mu.Lock()
			for p, e := range cs.m {
				cs.dropLocked(p, e)
			}
			cs.mu.Unlock()
			time.Sleep(200 * time.Millisecond) // for the closes, in the background
			before := heap()
			for i := range 1000 {
				call(fmt.Sprintf("m%d", i))
			}
			after := heap()
			if cs.count() != 1000 {
				b.Fatalf("%d callers kept, want 1000", cs.count())
			}
			b.ReportMetric(float64(after-before)/1000, "heap-B/caller")
		}
	})
}

func heap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
