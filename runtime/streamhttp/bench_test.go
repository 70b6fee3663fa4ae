package streamhttp_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"

	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// benchHandler starts a Handler serving testServer, stopped when b ends,
// and returns a function that POSTs a body to it in process (no sockets),
// with extra headers and, when ctx is not nil, on that context.
func benchHandler(b *testing.B) func(body string, hdr map[string]string, ctx context.Context) *httptest.ResponseRecorder {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		b.Fatal(err)
	}
	h, err := streamhttp.New(e, testServer(nil), streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
	})
	return func(body string, hdr map[string]string, ctx context.Context) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		if ctx != nil {
			r = r.WithContext(ctx)
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
}

// BenchmarkHandler: one POST of tools/call echo through the handler's
// ServeHTTP, in process (no sockets): the transport's and the session's
// cost per request, decoding the body to writing the answer. serial is one
// request at a time; parallel runs GOMAXPROCS×4 clients at once.
func BenchmarkHandler(b *testing.B) {
	post := benchHandler(b)
	// A caller on the request's context, as resourceserver's Guard puts
	// it there: the session makes it the handler's Request.Caller.
	withCaller := handlers.WithCaller(context.Background(), &handlers.Caller{Subject: "bench", Scopes: []string{"mcp:tools"}})
	w := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`, nil, nil)
	sid := w.Header().Get("Mcp-Session-Id")
	if w.Code != 200 || sid == "" {
		b.Fatalf("initialize: %d", w.Code)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid}, nil)
	legacy := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	modern := modernHeaders("tools/call", "echo")
	for _, bc := range []struct {
		name, params string
		hdr          map[string]string
		parallel     bool
		caller       bool
	}{
		{"modern/serial", `{` + modernMeta + `,"name":"echo","arguments":{"text":"hello, world"}}`, modern, false, false},
		{"modern/parallel", `{` + modernMeta + `,"name":"echo","arguments":{"text":"hello, world"}}`, modern, true, false},
		{"legacy/serial", `{"name":"echo","arguments":{"text":"hello, world"}}`, legacy, false, false},
		{"modern/serial/caller", `{` + modernMeta + `,"name":"echo","arguments":{"text":"hello, world"}}`, modern, false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var ctx context.Context
			if bc.caller {
				ctx = withCaller
			}
			call := func(i int) {
				w := post(`{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":`+bc.params+`}`, bc.hdr, ctx)
				if w.Code != 200 || !strings.Contains(w.Body.String(), `"text":"hello, world"`) {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			b.ReportAllocs()
			if !bc.parallel {
				for i := range b.N {
					call(i + 2)
				}
				return
			}
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for i := 2; pb.Next(); i++ {
					call(i)
				}
			})
		})
	}
}
