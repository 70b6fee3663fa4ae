package streamhttp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// testServer offers an echo, a sleep that reports whether it was
// cancelled, a tool that panics, one that reports progress and one that
// asks the client for input.
func testServer(cancelled chan<- string) *handlers.Server {
	srv := handlers.NewServer(mcp.Implementation{Name: "http-test", Version: "1"}, "")
	srv.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "echo",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		},
	}, func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		text, _ := handlers.StringArg(args, "text")
		return mcp.TextResult(text), nil
	})
	srv.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "sleep",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"},"tag":{"type":"string"}}}`),
		},
	}, func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		ms, _ := handlers.IntArg(args, "ms")
		tag, _ := handlers.StringArg(args, "tag")
		req.Progress(0, float64(ms), "started") // sent only when the client gave a progressToken
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return mcp.TextResult("slept"), nil
		case <-ctx.Done():
			if cancelled != nil {
				cancelled <- tag
			}
			return nil, ctx.Err()
		}
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "panic"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		panic("on purpose")
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "progress"}}, func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			req.Progress(float64(i), 3, "")
		}
		return mcp.TextResult("done"), nil
	})
	handlers.AddTool(srv, mcp.Tool{Name: "ask"}, func(ctx context.Context, req *handlers.Request, _ struct{}) (struct {
		Name string `json:"name"`
	}, error) {
		res, err := req.Elicit(ctx, "Name?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))
		if err != nil {
			return struct {
				Name string `json:"name"`
			}{}, err
		}
		name, _ := res.Content["name"].(string)
		return struct {
			Name string `json:"name"`
		}{name}, nil
	})
	return srv
}

type fixture struct {
	t   *testing.T
	h   *streamhttp.Handler
	srv *handlers.Server
	url string
}

func start(t *testing.T, srv *handlers.Server, o streamhttp.Options) *fixture {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := streamhttp.New(e, srv, o)
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
	return &fixture{t: t, h: h, srv: srv, url: ts.URL}
}

// reply is one HTTP answer: its status and headers, and the JSON-RPC
// messages of its body (one for JSON, each event's for SSE).
type reply struct {
	status int
	header http.Header
	msgs   []map[string]json.RawMessage
	sse    bool
}

// String shows the reply as the client read it.
func (r *reply) String() string {
	b, _ := json.Marshal(r.msgs)
	return fmt.Sprintf("HTTP %d %s", r.status, b)
}

func (r *reply) last() map[string]json.RawMessage {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}

// send makes a request with the headers every request carries and hdr,
// and returns the response for the caller to read and close.
func (f *fixture) send(ctx context.Context, method, body string, hdr map[string]string) *http.Response {
	f.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, f.url, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

func (f *fixture) do(method, body string, hdr map[string]string) *reply {
	f.t.Helper()
	resp := f.send(context.Background(), method, body, hdr)
	defer resp.Body.Close()
	return readReply(f.t, resp)
}

func readReply(t *testing.T, resp *http.Response) *reply {
	t.Helper()
	r := &reply{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.sse = true
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				r.msgs = append(r.msgs, decode(t, []byte(data)))
			}
		}
		return r
	}
	b, _ := io.ReadAll(resp.Body)
	if len(bytes.TrimSpace(b)) > 0 {
		r.msgs = append(r.msgs, decode(t, b))
	}
	return r
}

func decode(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %q", b)
	}
	return m
}

func errCode(m map[string]json.RawMessage) int {
	var e struct{ Code int }
	if json.Unmarshal(m["error"], &e) != nil {
		return 0
	}
	return e.Code
}

// initialize opens a legacy session and returns its id.
func (f *fixture) initialize(caps string) string {
	f.t.Helper()
	r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" || r.last()["result"] == nil {
		f.t.Fatalf("initialize: status %d, session %q, %v", r.status, sid, r.msgs)
	}
	if r2 := f.do("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid}); r2.status != http.StatusAccepted {
		f.t.Fatalf("initialized: status %d", r2.status)
	}
	return sid
}

func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func TestLegacySession(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{})
	sid := f.initialize(`{}`)
	s := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}

	r := f.do("POST", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, s)
	if r.status != 200 || r.sse || string(r.last()["id"]) != `"a"` || !strings.Contains(string(r.last()["result"]), `"text":"hi"`) {
		t.Fatalf("echo: %d sse=%v %v", r.status, r.sse, r.msgs)
	}
	// Progress comes first, so the answer is a stream, the response last.
	r = f.do("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p"}}}`, s)
	if !r.sse || len(r.msgs) != 4 || string(r.last()["id"]) != "2" || string(r.msgs[0]["method"]) != `"notifications/progress"` {
		t.Fatalf("progress: sse=%v %v", r.sse, r.msgs)
	}
	// A tool's panic is a tool error.
	r = f.do("POST", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"panic"}}`, s)
	if !strings.Contains(string(r.last()["result"]), `"isError":true`) {
		t.Fatalf("panic: %v", r.msgs)
	}
	// The same id twice in the session is fine once the first is answered.
	r = f.do("POST", `{"jsonrpc":"2.0","id":"a","method":"ping"}`, s)
	if r.status != 200 || string(r.last()["result"]) != "{}" {
		t.Fatalf("ping: %d %v", r.status, r.msgs)
	}
	// A protocol version header must name a revision served here.
	r = f.do("POST", `{"jsonrpc":"2.0","id":4,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01"})
	if r.status != 400 {
		t.Fatalf("unsupported version header: %d %v", r.status, r.msgs)
	}
	r = f.do("POST", `{"jsonrpc":"2.0","id":4,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"})
	if r.status != 200 {
		t.Fatalf("another supported version header: %d %v", r.status, r.msgs)
	}
	// No session id and no initialize: 400; an unknown one: 404.
	if r = f.do("POST", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, nil); r.status != 400 {
		t.Fatalf("no session: %d", r.status)
	}
	if r = f.do("POST", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, map[string]string{"Mcp-Session-Id": "nosuch"}); r.status != 404 {
		t.Fatalf("unknown session: %d", r.status)
	}
	// DELETE ends it: its id is unknown from then on.
	if r = f.do("DELETE", "", map[string]string{"Mcp-Session-Id": sid}); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.status)
	}
	if r = f.do("POST", `{"jsonrpc":"2.0","id":6,"method":"ping"}`, s); r.status != 404 {
		t.Fatalf("after DELETE: %d", r.status)
	}
}

// TestLegacyElicitation: a server-to-client request goes out on the call's
// own stream; the client answers with a POST of its own; the call ends the
// stream.
func TestLegacyElicitation(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{})
	sid := f.initialize(`{"elicitation":{}}`)
	resp := f.send(context.Background(), "POST", `{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"ask"}}`, map[string]string{"Mcp-Session-Id": sid})
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var got []map[string]json.RawMessage
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		m := decode(t, []byte(data))
		got = append(got, m)
		if string(m["method"]) == `"elicitation/create"` {
			a := f.do("POST", `{"jsonrpc":"2.0","id":`+string(m["id"])+`,"result":{"action":"accept","content":{"name":"Ada"}}}`, map[string]string{"Mcp-Session-Id": sid})
			if a.status != http.StatusAccepted {
				t.Fatalf("answer: %d", a.status)
			}
		}
		if string(m["id"]) == `"q"` {
			break
		}
	}
	if len(got) != 2 || !strings.Contains(string(got[1]["result"]), `"name":"Ada"`) {
		t.Fatalf("stream: %v", got)
	}
}

// TestLegacyGetStream: list_changed, which belongs to no request, reaches
// the session's GET stream.
func TestLegacyGetStream(t *testing.T) {
	srv := testServer(nil)
	f := start(t, srv, streamhttp.Options{})
	sid := f.initialize(`{}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	// A client may hold several; each message goes on one of them only
	// (here the first).
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	req2, _ := http.NewRequestWithContext(ctx2, "GET", f.url, nil)
	req2.Header.Set("Accept", "text/event-stream")
	req2.Header.Set("Mcp-Session-Id", sid)
	resp2, err := http.DefaultClient.Do(req2)
	if err != nil || resp2.StatusCode != 200 {
		t.Fatalf("second GET: %v %v", err, resp2)
	}
	defer resp2.Body.Close()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "late"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("late"), nil
	})
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "notifications/tools/list_changed") {
			return
		}
	}
	t.Fatalf("the stream ended without list_changed: %v", sc.Err())
}

// TestHeaderMismatchNamesTheMetaKeys: a 2026-07-28 request whose headers
// and body disagree on the version is told the full _meta key the body
// needs (a curl user has nothing else to go by), and, when the body has
// no _meta at all, the other keys a request carries.
func TestHeaderMismatchNamesTheMetaKeys(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{})
	for name, c := range map[string]struct {
		meta, want string
		code       int
	}{
		// No version in the body: malformed (-32602), the spec says,
		// before any header can mismatch it; the message says what the
		// body needs.
		"no _meta": {"", `Invalid params: _meta["io.modelcontextprotocol/protocolVersion"] is required: ` +
			`a 2026-07-28 request carries, in params._meta, "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities" and "io.modelcontextprotocol/clientInfo"`, -32602},
		"other version": {`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`,
			`Header mismatch: MCP-Protocol-Version header "2026-07-28" does not match params._meta["io.modelcontextprotocol/protocolVersion"] "2025-11-25"`, jsonrpc.CodeHeaderMismatch},
	} {
		r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}`+c.meta+`}}`, modernHeaders("tools/call", "echo"))
		var e struct{ Message string }
		_ = json.Unmarshal(r.last()["error"], &e)
		if r.status != 400 || errCode(r.last()) != c.code || e.Message != c.want {
			t.Errorf("%s: %d %d %q\nwant %d %q", name, r.status, errCode(r.last()), e.Message, c.code, c.want)
		}
	}
}

func TestModernRequests(t *testing.T) {
	cancelled := make(chan string, 1)
	f := start(t, testServer(cancelled), streamhttp.Options{})
	call := func(id, name, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + modernMeta + `}}`
	}
	r := f.do("POST", call("1", "echo", `{"text":"m"}`), modernHeaders("tools/call", "echo"))
	if r.status != 200 || string(r.last()["id"]) != "1" || !strings.Contains(string(r.last()["result"]), `"resultType":"complete"`) {
		t.Fatalf("echo: %d %v", r.status, r.msgs)
	}
	// Two clients may use the same id at once: inside they differ.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			text := fmt.Sprint("c", i)
			r := f.do("POST", call("1", "echo", `{"text":"`+text+`"}`), modernHeaders("tools/call", "echo"))
			if !strings.Contains(string(r.last()["result"]), `"text":"`+text+`"`) || string(r.last()["id"]) != "1" {
				t.Errorf("client %d: %v", i, r.msgs)
			}
		})
	}
	wg.Wait()
	// Headers that disagree with the body, or are missing: 400 and -32020.
	for name, hdr := range map[string]map[string]string{
		"no version":    {"Mcp-Method": "tools/call", "Mcp-Name": "echo"},
		"other version": {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/call", "Mcp-Name": "echo"},
		"no method":     {"MCP-Protocol-Version": "2026-07-28", "Mcp-Name": "echo"},
		"other method":  {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Mcp-Name": "echo"},
		"no name":       {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"},
		"other name":    {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "sleep"},
	} {
		r := f.do("POST", call("2", "echo", `{"text":"x"}`), hdr)
		if r.status != 400 || errCode(r.last()) != jsonrpc.CodeHeaderMismatch {
			t.Errorf("%s: %d %v", name, r.status, r.msgs)
		}
	}
	// A name in the base64 sentinel form is decoded before comparing.
	if r := f.do("POST", call("3", "echo", `{"text":"b"}`), modernHeaders("tools/call", "=?base64?ZWNobw==?=")); r.status != 200 {
		t.Errorf("base64 Mcp-Name: %d %v", r.status, r.msgs)
	}
	// Unknown method: 404 and -32601; a missing capability: 400 and -32021.
	if r := f.do("POST", `{"jsonrpc":"2.0","id":4,"method":"nosuch","params":{`+modernMeta+`}}`, modernHeaders("nosuch", "")); r.status != 404 || errCode(r.last()) != -32601 {
		t.Errorf("unknown method: %d %v", r.status, r.msgs)
	}
	if r := f.do("POST", call("5", "ask", `{}`), modernHeaders("tools/call", "ask")); r.status != 400 || errCode(r.last()) != -32021 {
		t.Errorf("missing capability: %d %v", r.status, r.msgs)
	}
	// GET has no meaning without a session.
	if r := f.do("GET", "", nil); r.status != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", r.status)
	}
	// Closing the stream cancels the request.
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000,"tag":"gone"},` +
		`"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	resp := f.send(ctx, "POST", body, modernHeaders("tools/call", "sleep"))
	// The call runs once its first progress notification is in.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "data: ") {
	}
	cancel()
	resp.Body.Close()
	select {
	case tag := <-cancelled:
		if tag != "gone" {
			t.Fatalf("cancelled %q", tag)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("closing the stream did not cancel the request")
	}
}

// TestModernListen: subscriptions/listen is a stream that stays open; its
// notifications carry the client's own id as the subscription id.
func TestModernListen(t *testing.T) {
	srv := testServer(nil)
	f := start(t, srv, streamhttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`
	resp := f.send(ctx, "POST", body, modernHeaders("subscriptions/listen", ""))
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	acked := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		if !strings.Contains(line, `"io.modelcontextprotocol/subscriptionId":"sub-1"`) {
			t.Fatalf("notification without the client's subscription id: %s", line)
		}
		switch {
		case strings.Contains(line, "notifications/subscriptions/acknowledged"):
			acked = true
			srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "new"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
				return mcp.TextResult(""), nil
			})
		case strings.Contains(line, "notifications/tools/list_changed") && acked:
			return
		}
	}
	t.Fatalf("stream ended early (acked %v): %v", acked, sc.Err())
}

func TestBounds(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{
		MaxSessions:    2,
		SessionIdle:    200 * time.Millisecond,
		MaxBodyBytes:   1024,
		AllowedOrigins: []string{"https://app.example"},
		Authorize:      streamhttp.BearerToken("s3cret"),
	})
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Authorization": "Bearer s3cret"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if r := f.do("POST", ping, nil); r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	if r := f.do("POST", ping, map[string]string{"Authorization": "Bearer wrong"}); r.status != 401 {
		t.Errorf("wrong token: %d", r.status)
	}
	for origin, want := range map[string]int{"http://evil.example": 403, "http://localhost:3000": 400, "https://app.example": 400} {
		if r := f.do("POST", ping, with("Origin", origin)); r.status != want {
			t.Errorf("Origin %s: %d, want %d", origin, r.status, want)
		}
	}
	// The refusal names the origin and where origins are allowed.
	if r := f.do("POST", ping, with("Origin", "http://evil.example")); !strings.Contains(string(r.last()["error"]), `\"http://evil.example\" is not allowed`) ||
		!strings.Contains(string(r.last()["error"]), "allowed origins") {
		t.Errorf("403: %s", r.last()["error"])
	}
	if r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 2000)+`"}}`, auth); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("big body: %d", r.status)
	}
	if r := f.do("POST", "{nope", auth); r.status != 400 || errCode(r.last()) != -32700 {
		t.Errorf("bad JSON: %d %v", r.status, r.msgs)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	var sids []string
	for range 2 {
		r := f.do("POST", init, auth)
		if r.status != 200 {
			t.Fatalf("initialize: %d", r.status)
		}
		sids = append(sids, r.header.Get("Mcp-Session-Id"))
	}
	// At the cap an initialize closes an idle session; with both in use
	// (their GET streams open) it is refused.
	var streams []*http.Response
	for _, sid := range sids {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp := f.send(ctx, "GET", "", with("Mcp-Session-Id", sid))
		if resp.StatusCode != 200 {
			t.Fatalf("GET stream: %d", resp.StatusCode)
		}
		streams = append(streams, resp)
	}
	if r := f.do("POST", init, auth); r.status != http.StatusServiceUnavailable {
		t.Errorf("third session: %d, want 503", r.status)
	}
	for _, resp := range streams {
		resp.Body.Close()
	}
	// Idle sessions end: their ids get 404, and room is made for new ones.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := f.do("POST", ping, with("Mcp-Session-Id", sids[0]))
		if r.status == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session still there after its idle time: %d", r.status)
		}
		time.Sleep(300 * time.Millisecond) // longer than the idle time: the ping itself keeps it alive
	}
	for time.Now().Before(deadline) {
		if r := f.do("POST", init, auth); r.status == 200 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no new session after the idle ones ended")
}

// TestBatch2025_03_26: a batch POST in a 2025-03-26 session is answered
// with one array holding each request's response under the client's ids;
// other revisions refuse batches.
func TestBatch2025_03_26(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{})
	r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := r.header.Get("Mcp-Session-Id")
	s := map[string]string{"Mcp-Session-Id": sid}
	f.do("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, s)
	resp := f.send(context.Background(), "POST", `[{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"one"}}},`+
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, s)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got []map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil || len(got) != 2 {
		t.Fatalf("batch answer: %s", b)
	}
	ids := map[string]string{}
	for _, m := range got {
		ids[string(m["id"])] = string(m["result"])
	}
	if !strings.Contains(ids[`"x"`], `"text":"one"`) || ids["2"] != "{}" {
		t.Fatalf("batch answer: %s", b)
	}
	// Only notifications: 202.
	if r := f.do("POST", `[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`, s); r.status != http.StatusAccepted {
		t.Fatalf("notifications-only batch: %d", r.status)
	}
	// Not in 2025-11-25.
	sid2 := f.initialize(`{}`)
	if r := f.do("POST", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, map[string]string{"Mcp-Session-Id": sid2}); r.status != 400 {
		t.Fatalf("batch in 2025-11-25: %d", r.status)
	}
}

// TestLegacyDuplicateID: a legacy client that reuses the id of a request
// still in flight gets 400 for the second. The first, cancelled by the
// client with its stream still open, ends its stream with no response.
func TestLegacyDuplicateID(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{})
	sid := f.initialize(`{}`)
	s := map[string]string{"Mcp-Session-Id": sid}
	deadline := time.Now().Add(20 * time.Second)
	// Either request may register the id first; a round in which the
	// sleep lost the race (it got the 400) is tried again with a new id.
	for round := 0; ; round++ {
		id := fmt.Sprintf(`"d%d"`, round)
		first := make(chan *reply, 1)
		go func() {
			first <- f.do("POST", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":600000}}}`, s)
		}()
		for {
			if time.Now().After(deadline) {
				t.Fatal("never saw the id in use")
			}
			r := f.do("POST", `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`, s)
			if r.status == 400 && strings.Contains(string(r.last()["error"]), "already in use") {
				if r := f.do("POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`, s); r.status != http.StatusAccepted {
					t.Fatalf("cancel: %d", r.status)
				}
				if r := <-first; r.status != 200 || len(r.msgs) != 0 {
					t.Fatalf("cancelled first: %d %v, want its stream ended with no response", r.status, r.msgs)
				}
				return
			}
			if r.status != 200 {
				t.Fatalf("ping: %d %v", r.status, r.msgs)
			}
			select {
			case r := <-first:
				if r.status != 400 {
					t.Fatalf("sleep: %d %v", r.status, r.msgs)
				}
			default:
				continue // the sleep is not registered yet
			}
			break // the ping held the id when the sleep came: again
		}
	}
}

// TestLegacyCancelAfterClose: in the legacy era closing the stream does not
// cancel the request (it runs on), but the client's notifications/cancelled
// naming its own id still does, after the stream is gone.
func TestLegacyCancelAfterClose(t *testing.T) {
	cancelled := make(chan string, 1)
	f := start(t, testServer(cancelled), streamhttp.Options{})
	sid := f.initialize(`{}`)
	ctx, cancel := context.WithCancel(context.Background())
	resp := f.send(ctx, "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000,"tag":"later"},"_meta":{"progressToken":"p"}}}`, map[string]string{"Mcp-Session-Id": sid})
	// The call runs once its first progress notification is in: then the
	// client goes away.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "data: ") {
	}
	cancel()
	resp.Body.Close()
	select {
	case tag := <-cancelled:
		t.Fatalf("closing a legacy stream cancelled %q", tag)
	case <-time.After(200 * time.Millisecond):
	}
	if r := f.do("POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, map[string]string{"Mcp-Session-Id": sid}); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %d", r.status)
	}
	select {
	case tag := <-cancelled:
		if tag != "later" {
			t.Fatalf("cancelled %q", tag)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("notifications/cancelled after the stream closed did not cancel the call")
	}
}

// TestModernIgnoresSessionID: a 2026-07-28 request is served statelessly
// whatever Mcp-Session-Id it carries.
func TestModernIgnoresSessionID(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{})
	hdr := modernHeaders("tools/call", "echo")
	hdr["Mcp-Session-Id"] = "stale"
	r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s"},`+modernMeta+`}}`, hdr)
	if r.status != 200 || !strings.Contains(string(r.last()["result"]), `"text":"s"`) {
		t.Fatalf("%d %v", r.status, r.msgs)
	}
}

// TestParamHeaders: a tool whose schema mirrors arguments into Mcp-Param
// headers (x-mcp-header) is served only when the headers match the body.
func TestParamHeaders(t *testing.T) {
	srv := testServer(nil)
	srv.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name: "sql",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
				`"n":{"type":"integer","x-mcp-header":"N"},"q":{"type":"string"}},"required":["q"]}`),
		},
	}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("ran"), nil
	})
	f := start(t, srv, streamhttp.Options{})
	call := func(args string, params map[string]string) *reply {
		hdr := modernHeaders("tools/call", "sql")
		for k, v := range params {
			hdr["Mcp-Param-"+k] = v
		}
		return f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sql","arguments":`+args+`,`+modernMeta+`}}`, hdr)
	}
	for name, c := range map[string]struct {
		args   string
		params map[string]string
		ok     bool
	}{
		"matching":            {`{"region":"us-west1","n":42,"q":"x"}`, map[string]string{"Region": "us-west1", "N": "42"}, true},
		"numerically equal":   {`{"n":42,"q":"x"}`, map[string]string{"N": "42.0"}, true},
		"base64":              {`{"region":"Grüße","q":"x"}`, map[string]string{"Region": "=?base64?R3LDvMOfZQ==?="}, true},
		"absent both":         {`{"q":"x"}`, nil, true},
		"null omitted":        {`{"region":null,"q":"x"}`, nil, true},
		"missing header":      {`{"region":"eu","q":"x"}`, nil, false},
		"different value":     {`{"region":"eu","q":"x"}`, map[string]string{"Region": "us"}, false},
		"header without body": {`{"q":"x"}`, map[string]string{"Region": "us"}, false},
		"bad base64":          {`{"region":"eu","q":"x"}`, map[string]string{"Region": "=?base64?%%%?="}, false},
	} {
		r := call(c.args, c.params)
		if got := r.status == 200; got != c.ok || !c.ok && errCode(r.last()) != jsonrpc.CodeHeaderMismatch {
			t.Errorf("%s: %d %v", name, r.status, r.msgs)
		}
	}
}

// TestModernMalformedMeta: a 2026-07-28 request whose _meta lacks a member
// the revision requires is malformed, whatever its headers say: -32602 and
// 400, before any header is compared with the body; an initialize sent as
// a 2026-07-28 request names a method that revision does not have: -32601
// and 404, as ping does.
func TestModernMalformedMeta(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{})
	caps := `"io.modelcontextprotocol/clientCapabilities":{}`
	version := `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	for name, params := range map[string]string{
		"no params":       ``,
		"no _meta":        `,"params":{}`,
		"no version":      `,"params":{"_meta":{` + caps + `}}`,
		"null version":    `,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null,` + caps + `}}`,
		"number version":  `,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,` + caps + `}}`,
		"no capabilities": `,"params":{"_meta":{` + version + `}}`,
		"array caps":      `,"params":{"_meta":{` + version + `,"io.modelcontextprotocol/clientCapabilities":[]}}`,
	} {
		r := f.do("POST", `{"jsonrpc":"2.0","id":7,"method":"server/discover"`+params+`}`, modernHeaders("server/discover", ""))
		if r.status != http.StatusBadRequest || errCode(r.last()) != -32602 || string(r.last()["id"]) != "7" {
			t.Errorf("%s: %v", name, r)
		}
	}
	r := f.do("POST", `{"jsonrpc":"2.0","id":8,"method":"initialize","params":{`+modernMeta+`}}`, modernHeaders("initialize", ""))
	if r.status != http.StatusNotFound || errCode(r.last()) != -32601 {
		t.Errorf("initialize as a 2026-07-28 request: %v", r)
	}
	// It left nothing behind: the endpoint still serves 2026-07-28 alone.
	if r := f.do("POST", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{`+modernMeta+`}}`, modernHeaders("tools/list", "")); r.status != 200 || r.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("tools/list after: %v", r)
	}
}

// TestLegacySessionOwner: with Options.Principal, a legacy session
// answers only its opener: another principal presenting its id gets 404
// on POST, GET and DELETE, as for a session that never existed, and the
// session goes on for its owner.
func TestLegacySessionOwner(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{Principal: func(r *http.Request) string { return r.Header.Get("X-Who") }})
	open := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, map[string]string{"X-Who": "alice"})
	sid := open.header.Get("Mcp-Session-Id")
	if open.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %q", open.status, sid)
	}
	as := func(who string) map[string]string { return map[string]string{"Mcp-Session-Id": sid, "X-Who": who} }
	if r := f.do("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, as("alice")); r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d", r.status)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, who := range []string{"mallory", ""} {
		if r := f.do("POST", list, as(who)); r.status != http.StatusNotFound {
			t.Errorf("POST as %q: %d", who, r.status)
		}
		get := as(who)
		get["Accept"] = "text/event-stream"
		// Only the status is read: a stream opened in error would not end.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp := f.send(ctx, "GET", "", get)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET as %q: %d", who, resp.StatusCode)
		}
		resp.Body.Close()
		cancel()
		if r := f.do("DELETE", "", as(who)); r.status != http.StatusNotFound {
			t.Errorf("DELETE as %q: %d", who, r.status)
		}
	}
	if r := f.do("POST", list, as("alice")); r.status != 200 || r.last()["result"] == nil {
		t.Errorf("the owner after the others: %d %v", r.status, r.msgs)
	}
	if r := f.do("DELETE", "", as("alice")); r.status != http.StatusNoContent {
		t.Errorf("the owner's DELETE: %d", r.status)
	}
}
