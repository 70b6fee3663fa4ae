//go:build unix

package client_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/skillmd"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/supervisor"
)

// An httpFake is an HTTP MCP server scripted by each test: handle answers
// every request the client sends, and every request is recorded.
type httpFake struct {
	t      *testing.T
	srv    *httptest.Server
	handle func(w http.ResponseWriter, r *http.Request, m fakeMsg)

	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	method string // HTTP method
	header http.Header
	msg    fakeMsg
}

func newHTTPFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, m fakeMsg)) *httpFake {
	f := &httpFake{t: t, handle: handle}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m fakeMsg
		if len(body) > 0 {
			if err := json.Unmarshal(body, &m); err != nil {
				t.Errorf("the client sent a body that is not a JSON-RPC message: %q", body)
			}
		}
		f.mu.Lock()
		f.seen = append(f.seen, seenRequest{r.Method, r.Header.Clone(), m})
		f.mu.Unlock()
		f.handle(w, r, m)
	}))
	t.Cleanup(f.srv.Close) // after the client's Close (cleanups run last first)
	return f
}

func (f *httpFake) url() string { return f.srv.URL + "/mcp" }

// requests returns what was recorded, optionally only one JSON-RPC method
// ("GET" and "DELETE" for those HTTP methods).
func (f *httpFake) requests(method string) []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seenRequest
	for _, s := range f.seen {
		if method == "" || s.msg.Method == method || s.method == method {
			out = append(out, s)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func result(id json.RawMessage, res any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": res}
}

func rpcError(id json.RawMessage, code int, msg string, data any) map[string]any {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": e}
}

// sse starts an event stream and returns a func that sends one message.
func sse(w http.ResponseWriter) func(v any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	return func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
}

func initResult(version string) map[string]any {
	return map[string]any{"protocolVersion": version, "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo": map[string]any{"name": "fake-http", "version": "1"}}
}

// legacyFake is a 2025-11-25 server with sessions, as the 2025-11-25
// transport describes one: server/discover without a session is a 400
// with a plain body; the session id comes with the initialize result and
// must be on every later request, with MCP-Protocol-Version; the GET
// stream carries a roots/list request and a list_changed; tools/call slow
// reports progress and waits for its cancellation; DELETE ends it.
type legacyFake struct {
	*httpFake
	rootsAnswer chan json.RawMessage
	cancelled   chan json.RawMessage // requestId of notifications/cancelled
	slowClosed  chan bool            // whether the cancellation came before the stream closed
	gone        chan struct{}        // closed to make the session unknown (404)
	goneOnce    sync.Once
}

func newLegacyFake(t *testing.T) *legacyFake {
	lf := &legacyFake{rootsAnswer: make(chan json.RawMessage, 1), cancelled: make(chan json.RawMessage, 10),
		slowClosed: make(chan bool, 1), gone: make(chan struct{})}
	var listed int
	var mu sync.Mutex
	listedOnce := make(chan struct{})
	lf.httpFake = newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
		sid := r.Header.Get("Mcp-Session-Id")
		if r.Method == http.MethodPost && m.Method == "initialize" {
			if sid != "" || r.Header.Get("Mcp-Protocol-Version") != "" {
				t.Errorf("initialize with headers %v", r.Header)
			}
			w.Header().Set("Mcp-Session-Id", "sess-1")
			writeJSON(w, 200, result(m.ID, initResult("2025-11-25")))
			return
		}
		if sid == "" {
			http.Error(w, "Bad Request: Mcp-Session-Id required", http.StatusBadRequest)
			return
		}
		select {
		case <-lf.gone:
			http.Error(w, "session not found", http.StatusNotFound)
			return
		default:
		}
		if sid != "sess-1" || r.Method != http.MethodDelete && r.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
			t.Errorf("%s %s with session %q, version %q", r.Method, m.Method, sid, r.Header.Get("Mcp-Protocol-Version"))
		}
		switch r.Method {
		case http.MethodGet:
			send := sse(w)
			send(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})
			select {
			case <-listedOnce: // the change is news only to a client that listed
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
			case <-r.Context().Done():
				return
			}
			<-r.Context().Done()
			return
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		}
		switch {
		case m.ID == nil && m.Method == "":
			t.Errorf("an empty POST")
		case m.Method == "" && string(m.ID) == `"srv-1"`: // the answer to roots/list
			lf.rootsAnswer <- m.Result
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "notifications/cancelled":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			json.Unmarshal(m.Params, &p)
			lf.cancelled <- p.RequestID
			w.WriteHeader(http.StatusAccepted)
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "tools/list":
			mu.Lock()
			listed++
			n := listed
			mu.Unlock()
			send := sse(w)
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "listing"}})
			send(result(m.ID, map[string]any{"tools": []map[string]any{{"name": fmt.Sprintf("tool-%d", n), "inputSchema": map[string]any{"type": "object"}}}}))
			if n == 1 {
				close(listedOnce)
			}
		case m.Method == "tools/call":
			var p struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			json.Unmarshal(m.Params, &p)
			send := sse(w)
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": p.Meta.ProgressToken, "progress": 1}})
			select {
			case id := <-lf.cancelled:
				if string(id) != string(m.ID) {
					t.Errorf("cancelled %s, want %s", id, m.ID)
				}
				<-r.Context().Done()
				lf.slowClosed <- true
			case <-r.Context().Done():
				// Both may be ready by the time this goroutine runs: the
				// cancellation is sent before its 202, so if it is there
				// it came first.
				select {
				case <-lf.cancelled:
					lf.slowClosed <- true
				default:
					lf.slowClosed <- false
				}
			}
		default:
			writeJSON(w, 200, result(m.ID, map[string]any{}))
		}
	})
	return lf
}

// TestHTTPLegacySession: the legacy era over HTTP against a scripted
// server: the probe's 400 leads to initialize; the session id and the
// protocol version go on every later request; the GET stream's roots/list
// is answered by a POST and its list_changed refreshes the cached tools;
// a log notification on a response stream reaches Subscribe; a cancelled
// call gets notifications/cancelled before its stream is closed; Close
// ends the session with DELETE.
func TestHTTPLegacySession(t *testing.T) {
	t.Parallel()
	lf := newLegacyFake(t)
	changed := make(chan client.ListKind, 10)
	c := connectURL(t, lf.url(), opts(client.Options{
		Roots:         func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///fake"}}, nil },
		OnListChanged: func(k client.ListKind) { changed <- k },
	}))
	if c.Era() != client.EraLegacy || c.ProtocolVersion() != "2025-11-25" || c.ServerInfo().Name != "fake-http" {
		t.Fatalf("era %v version %s server %+v", c.Era(), c.ProtocolVersion(), c.ServerInfo())
	}
	var logs []string
	var mu sync.Mutex
	c.Subscribe("notifications/message", func(n client.Notification) {
		mu.Lock()
		logs = append(logs, string(n.Params))
		mu.Unlock()
	})
	tools, err := c.ListTools(ctx(t))
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %+v %v", tools, err)
	}
	mu.Lock()
	if len(logs) != 1 || !strings.Contains(logs[0], "listing") {
		t.Errorf("logs %v", logs)
	}
	mu.Unlock()

	select {
	case roots := <-lf.rootsAnswer:
		if !strings.Contains(string(roots), "file:///fake") {
			t.Errorf("roots/list answered %s", roots)
		}
	case <-time.After(hangTimeout):
		t.Fatal("roots/list on the GET stream was not answered")
	}
	// The GET stream's list_changed follows the first list: wait for the
	// refresh, which names a newer tool.
	deadline := time.After(hangTimeout)
	for {
		if ts, _ := c.CachedTools(); len(ts) == 1 && ts[0].Name != "tool-1" {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no refresh after list_changed: %v", lf.requests("tools/list"))
		}
	}

	cctx, cancel := context.WithCancel(ctx(t))
	_, err = c.CallTool(cctx, "slow", nil, client.WithProgress(func(client.Progress) { cancel() }))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	select {
	case before := <-lf.slowClosed:
		if !before {
			t.Error("the call's stream was closed before notifications/cancelled arrived")
		}
	case <-time.After(hangTimeout):
		t.Fatal("the cancelled call's stream stayed open")
	}

	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := lf.requests("DELETE"); len(d) != 1 || d[0].header.Get("Mcp-Session-Id") != "sess-1" {
		t.Errorf("DELETE requests: %+v", d)
	}
	for _, s := range lf.requests("") {
		if s.method == http.MethodPost && !strings.Contains(s.header.Get("Accept"), "text/event-stream") {
			t.Errorf("POST %s without Accept text/event-stream: %v", s.msg.Method, s.header)
		}
	}
}

// TestHTTPSessionEnded: a 404 for the session id ends the Client with
// ErrSessionEnded; Close then sends no DELETE.
func TestHTTPSessionEnded(t *testing.T) {
	t.Parallel()
	lf := newLegacyFake(t)
	c := connectURL(t, lf.url(), opts(client.Options{}))
	lf.goneOnce.Do(func() { close(lf.gone) })
	_, err := c.CallTool(ctx(t), "echo", nil)
	if !errors.Is(err, client.ErrSessionEnded) {
		t.Fatalf("call after the session ended: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(hangTimeout):
		t.Fatal("Done not closed")
	}
	if !errors.Is(c.Err(), client.ErrSessionEnded) {
		t.Errorf("Err: %v", c.Err())
	}
	if _, err := c.ListTools(ctx(t)); !errors.Is(err, client.ErrSessionEnded) {
		t.Errorf("later request: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := lf.requests("DELETE"); len(d) != 0 {
		t.Errorf("DELETE sent for an ended session: %d", len(d))
	}
}

// modernFake is a 2026-07-28 server that checks the headers the transport
// requires against each body, as a strict server does (400 and -32020 when
// they disagree), and answers server/discover, tools/list (with
// x-mcp-header annotations, one tool's invalid) and tools/call (echoing
// the Mcp-Param headers it got). tools/call slow waits for its stream to
// be closed.
func newModernFake(t *testing.T, strictParams bool) (*httpFake, chan struct{}) {
	closed := make(chan struct{}, 1)
	tools := []map[string]any{
		{"name": "plain", "inputSchema": map[string]any{"type": "object"}},
		{"name": "region", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
			"opts": map[string]any{"type": "object", "properties": map[string]any{
				"count": map[string]any{"type": "integer", "x-mcp-header": "Count"},
				"dry":   map[string]any{"type": "boolean", "x-mcp-header": "Dry"},
			}},
		}}},
		{"name": "bad", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"list": map[string]any{"type": "array", "items": map[string]any{"type": "string", "x-mcp-header": "Item"}},
		}}},
	}
	f := newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var p struct {
			Name      string          `json:"name"`
			URI       string          `json:"uri"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      map[string]any  `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		mismatch := func(msg string) { writeJSON(w, 400, rpcError(m.ID, -32020, "Header mismatch: "+msg, nil)) }
		switch {
		case r.Header.Get("Mcp-Session-Id") != "":
			t.Errorf("a session id in 2026-07-28")
		case r.Header.Get("Mcp-Protocol-Version") != p.Meta["io.modelcontextprotocol/protocolVersion"]:
			mismatch("version")
			return
		case r.Header.Get("Mcp-Method") != m.Method:
			mismatch("method")
			return
		}
		if m.Method == "tools/call" || m.Method == "resources/read" {
			want := p.Name
			if m.Method == "resources/read" {
				want = p.URI
			}
			got := r.Header.Get("Mcp-Name")
			if inner, ok := strings.CutPrefix(got, "=?base64?"); ok {
				b, _ := base64.StdEncoding.DecodeString(strings.TrimSuffix(inner, "?="))
				got = string(b)
			}
			if got != want {
				mismatch("name " + got)
				return
			}
		}
		switch m.Method {
		case "server/discover":
			writeJSON(w, 200, result(m.ID, map[string]any{"supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{}},
				"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "fake-modern", "version": "1"}}}))
		case "tools/list":
			writeJSON(w, 200, result(m.ID, map[string]any{"tools": tools}))
		case "resources/read":
			writeJSON(w, 200, result(m.ID, map[string]any{"contents": []map[string]any{{"uri": p.URI, "text": "ok"}}}))
		case "tools/call":
			if p.Name == "slow" {
				sse(w)
				<-r.Context().Done()
				closed <- struct{}{}
				return
			}
			if p.Name == "region" && strictParams && r.Header.Get("Mcp-Param-Region") == "" && strings.Contains(string(p.Arguments), "region") {
				mismatch("missing Mcp-Param-Region")
				return
			}
			var got []string
			for _, h := range []string{"Mcp-Param-Region", "Mcp-Param-Count", "Mcp-Param-Dry"} {
				if v := r.Header.Get(h); v != "" {
					got = append(got, h+"="+v)
				}
			}
			writeJSON(w, 200, result(m.ID, map[string]any{"content": []map[string]any{{"type": "text", "text": strings.Join(got, " ")}}}))
		default:
			writeJSON(w, 404, rpcError(m.ID, -32601, "Method not found", nil))
		}
	})
	return f, closed
}

// TestHTTPModern: 2026-07-28 over HTTP: the probe finds the era; every
// request carries MCP-Protocol-Version and Mcp-Method, tools/call and
// resources/read Mcp-Name (base64 when it is not plain ASCII) and the
// Mcp-Param headers of the tool's x-mcp-header annotations; a tool whose
// annotations are invalid is left out of the list; no session, no GET
// stream, no DELETE; a cancelled call's stream is closed, with no
// notifications/cancelled.
func TestHTTPModern(t *testing.T) {
	t.Parallel()
	f, closed := newModernFake(t, false)
	c := connectURL(t, f.url(), opts(client.Options{}))
	if c.Era() != client.EraModern || c.ServerInfo().Name != "fake-modern" {
		t.Fatalf("era %v server %+v", c.Era(), c.ServerInfo())
	}
	tools, err := c.ListTools(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"plain", "region"}) {
		t.Errorf("tools %v: want the invalid one left out", names)
	}
	r, err := c.CallTool(ctx(t), "region", map[string]any{"region": "eu-west 1 ✓", "opts": map[string]any{"count": 42.0, "dry": true}})
	if err != nil {
		t.Fatal(err)
	}
	want := "Mcp-Param-Region==?base64?" + base64.StdEncoding.EncodeToString([]byte("eu-west 1 ✓")) + "?= Mcp-Param-Count=42 Mcp-Param-Dry=true"
	if got := toolText(t, r); got != want {
		t.Errorf("param headers %q, want %q", got, want)
	}
	r, err = c.CallTool(ctx(t), "region", map[string]any{"region": nil})
	if err != nil || toolText(t, r) != "" {
		t.Errorf("a null argument got headers: %+v %v", r, err)
	}
	if _, err := c.ReadResource(ctx(t), "file:///naïve.txt"); err != nil {
		t.Errorf("read with a non-ASCII URI: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx(t))
	go func() {
		// Once the slow call's POST has arrived, give up on it.
		for len(f.requests("tools/call")) < 3 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := c.CallTool(cctx, "slow", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	select {
	case <-closed:
	case <-time.After(hangTimeout):
		t.Fatal("the cancelled call's stream stayed open")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, s := range f.requests("") {
		if s.method != http.MethodPost || s.msg.Method == "notifications/cancelled" {
			t.Errorf("unexpected %s %s in 2026-07-28", s.method, s.msg.Method)
		}
	}
}

// TestHTTPModernRelist: a tools/call sent before the tool was listed lacks
// its Mcp-Param headers; the server's -32020 makes the client list the
// tools and retry once, with them.
func TestHTTPModernRelist(t *testing.T) {
	t.Parallel()
	f, _ := newModernFake(t, true)
	c := connectURL(t, f.url(), opts(client.Options{}))
	r, err := c.CallTool(ctx(t), "region", map[string]any{"region": "eu"})
	if err != nil || toolText(t, r) != "Mcp-Param-Region=eu" {
		t.Fatalf("call: %+v %v", r, err)
	}
	if n := len(f.requests("tools/list")); n != 1 {
		t.Errorf("%d tools/list, want 1", n)
	}
	if n := len(f.requests("tools/call")); n != 2 {
		t.Errorf("%d tools/call, want 2", n)
	}
}

// TestHTTPProbe: how EraAuto reads the answer to its server/discover POST:
// a legacy server's 400 (plain, or a legacy JSON-RPC error) or a 200 with
// -32601 leads to initialize; -32022 listing a legacy version leads to
// initialize with that version; a modern error (-32020) is the error; a
// server that cannot be reached fails without a second try.
func TestHTTPProbe(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		answer  func(w http.ResponseWriter, m fakeMsg)
		version string // negotiated; "" means the connect fails
	}{
		{"plain 400", func(w http.ResponseWriter, m fakeMsg) { http.Error(w, "no session", 400) }, "2025-11-25"},
		{"legacy JSON-RPC 400", func(w http.ResponseWriter, m fakeMsg) {
			writeJSON(w, 400, rpcError(nil, -32600, "Bad Request: no session", nil))
		}, "2025-11-25"},
		{"method not found", func(w http.ResponseWriter, m fakeMsg) {
			writeJSON(w, 200, rpcError(m.ID, -32601, "Method not found", nil))
		}, "2025-11-25"},
		{"unsupported version", func(w http.ResponseWriter, m fakeMsg) {
			writeJSON(w, 400, rpcError(m.ID, -32022, "Unsupported protocol version", map[string]any{"supported": []string{"2025-06-18"}}))
		}, "2025-06-18"},
		{"header mismatch", func(w http.ResponseWriter, m fakeMsg) {
			writeJSON(w, 400, rpcError(m.ID, -32020, "Header mismatch", nil))
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
				switch {
				case m.Method == "server/discover":
					tc.answer(w, m)
				case m.Method == "initialize":
					var p struct {
						ProtocolVersion string `json:"protocolVersion"`
					}
					json.Unmarshal(m.Params, &p)
					writeJSON(w, 200, result(m.ID, initResult(p.ProtocolVersion)))
				case r.Method == http.MethodGet:
					w.WriteHeader(http.StatusMethodNotAllowed)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			})
			c, err := client.ConnectURL(ctx(t), f.url(), opts(client.Options{}))
			if tc.version == "" {
				if err == nil {
					c.Close()
					t.Fatal("connected")
				}
				if len(f.requests("initialize")) != 0 {
					t.Errorf("initialize after a modern error: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Era() != client.EraLegacy || c.ProtocolVersion() != tc.version {
				t.Errorf("era %v version %s", c.Era(), c.ProtocolVersion())
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = client.ConnectURL(ctx(t), "http://"+addr+"/mcp", opts(client.Options{}))
		if err == nil || !strings.Contains(err.Error(), "server/discover") {
			t.Errorf("connecting to nothing: %v", err)
		}
	})
}

// TestHTTPErrors: credentials from Options.Header reach the server; an
// HTTP error without a JSON-RPC body is an *HTTPError; one with a
// JSON-RPC error (even without an id) is an *RPCError.
func TestHTTPErrors(t *testing.T) {
	t.Parallel()
	f := newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		switch m.Method {
		case "server/discover":
			writeJSON(w, 200, result(m.ID, map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{}}))
		case "tools/call":
			writeJSON(w, 400, rpcError(nil, -32602, "Invalid params: no such tool", nil))
		default:
			http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
		}
	})
	_, err := client.ConnectURL(ctx(t), f.url(), opts(client.Options{}))
	var he *client.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		t.Fatalf("without credentials: %v", err)
	}
	c := connectURL(t, f.url(), opts(client.Options{Header: http.Header{"Authorization": {"Bearer s3cret"}}}))
	_, err = c.CallTool(ctx(t), "nope", nil)
	var re *client.RPCError
	if !errors.As(err, &re) || re.Err.Code != -32602 {
		t.Errorf("tools/call: %v", err)
	}
	_, err = c.ListPrompts(ctx(t))
	if !errors.As(err, &he) || he.Status != http.StatusBadGateway || !strings.Contains(he.Body, "bad gateway") {
		t.Errorf("prompts/list: %v", err)
	}
}

// TestHTTPProducerURL: the client actor over HTTP answers Requests, and a
// session the server ends takes the actor down abnormally, so that its
// supervisor connects again.
func TestHTTPProducerURL(t *testing.T) {
	t.Parallel()
	lf := newLegacyFake(t)
	tr := startTree(t, "http-client-test", supervisor.Spec{
		Strategy: supervisor.OneForOne, Intensity: 1, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "c", Start: client.ProducerURL(lf.url(), opts(client.Options{})),
			Restart: supervisor.Transient, Shutdown: 10 * time.Second}},
	})
	pid := supervisor.ChildPID(tr.root.PID(), "c")
	res, err := tr.e.Request(pid, client.Send{ID: 1, Method: "tools/list"}, hangTimeout).Result()
	if r, ok := res.(client.Response); err != nil || !ok || r.Err != nil || !strings.Contains(string(r.Result), "tool-") {
		t.Fatalf("Request: %#v %v", res, err)
	}
	lf.goneOnce.Do(func() { close(lf.gone) })
	_, _ = tr.e.Request(pid, client.Send{ID: 2, Method: "tools/list"}, hangTimeout).Result()
	tr.waitFor("the actor's abnormal exit", func(ev supervisor.Event) bool {
		x, ok := ev.(supervisor.EventChildExited)
		return ok && x.Child == "c" && errors.Is(x.Reason, client.ErrSessionEnded)
	})
}

// TestHTTPGetStreamReopened: a GET stream the server ends is opened again
// after the retry the server asked for, and what each one carries reaches
// the client.
func TestHTTPGetStreamReopened(t *testing.T) {
	t.Parallel()
	f := newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s")
			writeJSON(w, 200, result(m.ID, initResult("2025-11-25")))
		case m.Method == "server/discover":
			http.Error(w, "no session", 400)
		case r.Method == http.MethodGet:
			send := sse(w)
			fmt.Fprint(w, "retry: 10\n\n")
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "hello"}})
			// and the stream ends
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c := connectURL(t, f.url(), opts(client.Options{}))
	got := make(chan struct{}, 100)
	c.Subscribe("notifications/message", func(client.Notification) { got <- struct{}{} })
	for range 3 {
		select {
		case <-got:
		case <-time.After(hangTimeout):
			t.Fatalf("GET streams: %d", len(f.requests("GET")))
		}
	}
}

// TestHTTPGetStreamBeforeFirstRequest: a legacy connect returns once the
// server has answered the GET stream, so that the first request finds it
// open: a server that sends its question for a tool call only on the GET
// stream, and drops it when none is open (as the TypeScript SDK does), is
// answered.
func TestHTTPGetStreamBeforeFirstRequest(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var getStream func(v any) // the open GET stream's sender, once there is one
	answered := make(chan json.RawMessage, 1)
	f := newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s")
			writeJSON(w, 200, result(m.ID, initResult("2025-11-25")))
		case m.Method == "server/discover":
			http.Error(w, "no session", 400)
		case r.Method == http.MethodGet:
			time.Sleep(50 * time.Millisecond) // a server slow to answer the GET
			var wmu sync.Mutex
			mu.Lock()
			getStream = func(v any) {
				b, _ := json.Marshal(v)
				wmu.Lock()
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				w.(http.Flusher).Flush()
				wmu.Unlock()
			}
			wmu.Lock() // the stream is open before the client hears of it
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			wmu.Unlock()
			mu.Unlock()
			<-r.Context().Done()
		case m.Method == "tools/call":
			mu.Lock()
			send := getStream
			mu.Unlock()
			if send == nil {
				writeJSON(w, 200, result(m.ID, map[string]any{"content": []any{}, "isError": true})) // dropped
				return
			}
			send(map[string]any{"jsonrpc": "2.0", "id": "q", "method": "elicitation/create",
				"params": map[string]any{"message": "ok?", "requestedSchema": map[string]any{"type": "object"}}})
			writeJSON(w, 200, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(<-answered)}}}))
		case m.Method == "" && string(m.ID) == `"q"`:
			answered <- m.Result
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c := connectURL(t, f.url(), opts(client.Options{Elicitation: func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"action": "decline"}, nil
	}}))
	r, err := c.CallTool(ctx(t), "ask", nil)
	if err != nil || r.IsError || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, "decline") {
		t.Fatalf("the question on the GET stream was not answered: %+v, %v", r, err)
	}
}

// TestHTTPResumeStream: a legacy server that closes a request's event
// stream before the answer, after an event with an id and a retry field,
// gets a GET with Last-Event-ID once the retry delay has passed, and the
// answer it sends there is the request's (2025-11-25, Resumability and
// Redelivery). A 2026-07-28 stream is not resumed.
func TestHTTPResumeStream(t *testing.T) {
	t.Parallel()
	const retry = 200 * time.Millisecond
	var mu sync.Mutex
	var closedAt time.Time
	var pending json.RawMessage
	resumed := make(chan string, 4) // Last-Event-ID of each resuming GET
	f := newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s")
			writeJSON(w, 200, result(m.ID, initResult("2025-11-25")))
		case m.Method == "server/discover":
			http.Error(w, "no session", 400)
		case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
			mu.Lock()
			wait := time.Since(closedAt)
			id := pending
			mu.Unlock()
			if wait < retry {
				t.Errorf("resumed %v after the stream closed, before its retry of %v", wait, retry)
			}
			resumed <- r.Header.Get("Last-Event-ID")
			send := sse(w)
			send(result(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "resumed"}}}))
		case r.Method == http.MethodGet:
			sse(w)
			<-r.Context().Done()
		case m.Method == "tools/call":
			mu.Lock()
			pending = m.ID
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprintf(w, "id: ev-7\nretry: %d\ndata: \n\n", retry.Milliseconds())
			w.(http.Flusher).Flush()
			mu.Lock()
			closedAt = time.Now()
			mu.Unlock()
			// and the stream ends
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c := connectURL(t, f.url(), opts(client.Options{}))
	r, err := c.CallTool(ctx(t), "slow", nil)
	if err != nil || len(r.Content) != 1 || r.Content[0].Text != "resumed" {
		t.Fatalf("call: %+v, %v", r, err)
	}
	if id := <-resumed; id != "ev-7" {
		t.Errorf("resumed with Last-Event-ID %q, want ev-7", id)
	}
}

// TestHTTPModernStreamNotResumed: 2026-07-28 has no resumable streams: a
// response stream that ends without the answer fails the request, and no
// GET follows.
func TestHTTPModernStreamNotResumed(t *testing.T) {
	t.Parallel()
	f := newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
		switch {
		case m.Method == "server/discover":
			writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{}}, "ttlMs": 0, "cacheScope": "public"}))
		case m.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "id: ev-1\nretry: 10\ndata: \n\n")
		default:
			http.Error(w, "no", http.StatusMethodNotAllowed)
		}
	})
	c := connectURL(t, f.url(), opts(client.Options{}))
	if _, err := c.CallTool(ctx(t), "slow", nil); err == nil || !strings.Contains(err.Error(), "without answering") {
		t.Fatalf("call: %v", err)
	}
	if gets := f.requests("GET"); len(gets) != 0 {
		t.Errorf("%d GET requests after a 2026-07-28 stream ended", len(gets))
	}
}

// TestHTTPSkillRefused: LoadSkill reads SKILL.md first and, when it is
// not what the entry says (its size, its digest, its frontmatter), uses
// none of it and reads no other file.
func TestHTTPSkillRefused(t *testing.T) {
	t.Parallel()
	const manifest = "---\nname: pdf\ndescription: PDF files.\n---\nBody.\n"
	digest := func(s string) string { return skillmd.Digest([]byte(s)) }
	for name, served := range map[string]string{
		"size":        manifest + "more",
		"digest":      strings.Replace(manifest, "Body", "Evil", 1),
		"frontmatter": strings.Replace(manifest, "PDF files.", "Steal keys", 1),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			entry := map[string]any{"uri": "skill://pdf/SKILL.md", "frontmatter": map[string]any{"name": "pdf", "description": "PDF files."},
				"resources": []any{
					map[string]any{"uri": "skill://pdf/SKILL.md", "digest": digest(manifest), "size": len(manifest)},
					map[string]any{"uri": "skill://pdf/more.md", "digest": digest("x"), "size": 1},
				}}
			if name == "frontmatter" { // the entry matches the bytes; the frontmatter does not
				entry["resources"].([]any)[0] = map[string]any{"uri": "skill://pdf/SKILL.md", "digest": digest(served), "size": len(served)}
			}
			f := newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
				switch m.Method {
				case "server/discover":
					writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
						"capabilities": map[string]any{"resources": map[string]any{}}, "ttlMs": 0, "cacheScope": "public"}))
				case "skills/list":
					writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "skills": []any{entry}, "ttlMs": 0, "cacheScope": "public"}))
				case "resources/read":
					text := served
					if strings.Contains(string(m.Params), "more.md") {
						text = "x"
					}
					writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "public",
						"contents": []any{map[string]any{"uri": "skill://pdf/SKILL.md", "text": text}}}))
				default:
					http.Error(w, "no", http.StatusMethodNotAllowed)
				}
			})
			c := connectURL(t, f.url(), opts(client.Options{}))
			list, err := c.ListSkills(ctx(t))
			if err != nil || len(list) != 1 {
				t.Fatalf("skills %+v, %v", list, err)
			}
			if len(f.requests("resources/read")) != 0 {
				t.Fatal("listing read a file")
			}
			if files, err := c.LoadSkill(ctx(t), &list[0]); err == nil {
				t.Fatalf("loaded %d files of a tampered skill", len(files))
			}
			if reads := f.requests("resources/read"); len(reads) != 1 {
				t.Errorf("%d reads, want the SKILL.md's alone", len(reads))
			}
		})
	}
}
