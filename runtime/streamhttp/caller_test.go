package streamhttp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

type callerKey struct{}

// What a middleware attaches to an HTTP request's context (an
// authenticated caller, say) reaches the handler of the MCP request it
// carries, through the handler's context, in both eras: each request to the
// session carries its own values (session.In.Values).
func TestCallerTravelsToHandler(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "caller-test", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "whoami"}}, func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		who, _ := ctx.Value(callerKey{}).(string)
		return mcp.TextResult("caller=" + who), nil
	})
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	h, err := streamhttp.New(e, srv, streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// The caller is whoever the X-Caller header names: a stand-in for a
	// token verifier.
	withCaller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, r.Header.Get("X-Caller"))))
	})
	ts := httptest.NewServer(withCaller)
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
	})
	f := &fixture{t: t, h: h, srv: srv, url: ts.URL}

	hdr := modernHeaders("tools/call", "whoami")
	hdr["X-Caller"] = "alice"
	r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+modernMeta+`,"name":"whoami"}}`, hdr)
	if r.status != 200 || !strings.Contains(string(r.last()["result"]), `caller=alice`) {
		t.Fatalf("2026-07-28: %d %v", r.status, r.msgs)
	}

	sid := f.initialize(`{}`)
	r = f.do("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}`,
		map[string]string{"Mcp-Session-Id": sid, "X-Caller": "bob"})
	if r.status != 200 || !strings.Contains(string(r.last()["result"]), `caller=bob`) {
		t.Fatalf("legacy: %d %v", r.status, r.msgs)
	}
}

// The handlers.Caller a middleware vouches for is the handler's
// Request.Caller; a tool whose Access it lacks a scope for is refused
// with 403 and the step-up challenge (Options.ScopeChallenge) in both
// eras, and left out of its tools/list; a caller it lets in calls it.
func TestScopeChallenge(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "caller-test", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "whoami"}}, func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("caller=" + req.Caller.Principal()), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "purge"}, Access: &handlers.Access{Scopes: []string{"admin"}}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("purged"), nil
	})
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	h, err := streamhttp.New(e, srv, streamhttp.Options{
		Logger: slog.New(slog.DiscardHandler),
		ScopeChallenge: func(h http.Header, scope string) {
			h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+scope+`"`)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// X-Scopes stands in for a verified token's scopes.
	withCaller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &handlers.Caller{Subject: "alice", Scopes: strings.Fields(r.Header.Get("X-Scopes"))}
		h.ServeHTTP(w, r.WithContext(handlers.WithCaller(r.Context(), c)))
	})
	ts := httptest.NewServer(withCaller)
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
	})
	f := &fixture{t: t, h: h, srv: srv, url: ts.URL}
	sid := f.initialize(`{}`)
	for _, era := range []string{"legacy", "2026-07-28"} {
		post := func(id, method, params, scopes string) *reply {
			if era == "legacy" {
				return f.do("POST", `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":{`+params+`}}`,
					map[string]string{"Mcp-Session-Id": sid, "X-Scopes": scopes})
			}
			name := ""
			if method == "tools/call" {
				name = "purge"
			}
			hdr := modernHeaders(method, name)
			hdr["X-Scopes"] = scopes
			if params != "" {
				params = "," + params
			}
			return f.do("POST", `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":{`+modernMeta+params+`}}`, hdr)
		}
		r := post("1", "tools/call", `"name":"purge"`, "read")
		if r.status != http.StatusForbidden || r.header.Get("WWW-Authenticate") != `Bearer error="insufficient_scope", scope="read admin"` ||
			!strings.Contains(string(r.last()["error"]), `"code":403`) {
			t.Fatalf("%s: purge with scope read: %d %q %v", era, r.status, r.header.Get("WWW-Authenticate"), r.msgs)
		}
		r = post("2", "tools/call", `"name":"purge"`, "read admin")
		if r.status != 200 || !strings.Contains(string(r.last()["result"]), `purged`) {
			t.Fatalf("%s: purge with scope admin: %d %v", era, r.status, r.msgs)
		}
		r = post("3", "tools/list", "", "read")
		if r.status != 200 || strings.Contains(string(r.last()["result"]), `purge`) || !strings.Contains(string(r.last()["result"]), `whoami`) {
			t.Fatalf("%s: tools/list with scope read: %d %v", era, r.status, r.msgs)
		}
	}
}
