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
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

type callerKey struct{}

// What a middleware attaches to an HTTP request's context (an
// authenticated caller, say) reaches the handler of the MCP request it
// carries, through the handler's context, in both eras: each request to the
// session carries its own values (session.In.Values).
func TestCallerTravelsToHandler(t *testing.T) {
	srv := handlers.NewServer(handlers.Implementation{Name: "caller-test", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Name: "whoami"}, func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
		who, _ := ctx.Value(callerKey{}).(string)
		return handlers.TextResult("caller=" + who), nil
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
