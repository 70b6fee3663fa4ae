package sessionactor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/supervisor"
)

const (
	initLegacy = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	initDone   = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
)

// chattyServer has a tool that reports progress and logs at two levels.
func chattyServer() *handlers.Server {
	srv := testServer()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "chatty"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			req.Progress(float64(i), 3, "")
		}
		req.Progress(2, 3, "") // not increasing: dropped
		req.Log("debug", "chatty", "fine detail")
		req.Logger().Info("step done", "n", 3)
		return mcp.TextResult("done"), nil
	})
	return srv
}

func (c *client) handshake() {
	c.t.Helper()
	c.send(initLegacy)
	if got := c.recv(); !strings.Contains(got, `"id":0,"result"`) {
		c.t.Fatalf("initialize: %s", got)
	}
	c.send(initDone)
}

func TestProgressAndLogLegacy(t *testing.T) {
	c := startClientWith(t, chattyServer(), runtime.Options{})
	c.handshake()
	// Neither progressToken nor setLevel: nothing but the result.
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty"}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":2,"result":{}}`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,`) {
		t.Fatalf("bad level: got %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"chatty","_meta":{"progressToken":"p"}}}`)
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":3}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2,"total":3}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":3,"total":3}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"message":"step done","n":3}}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"done"}]}}`,
	}
	for _, w := range want {
		if got := c.recv(); got != w {
			t.Fatalf("got  %s\nwant %s", got, w)
		}
	}
	c.finish()
}

func TestProgressAndLogModern(t *testing.T) {
	c := startClientWith(t, chattyServer(), runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty",` + modernMeta[:len(modernMeta)-1] +
		`,"progressToken":7,"io.modelcontextprotocol/logLevel":"debug"}}}`)
	var lines []string
	for {
		l := c.recv()
		lines = append(lines, l)
		if strings.Contains(l, `"id":1`) {
			break
		}
	}
	if len(lines) != 6 {
		t.Fatalf("got %d lines, want 3 progress, 2 messages, 1 result:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], `"progressToken":7,"progress":1`) || !strings.Contains(lines[3], `"level":"debug"`) ||
		!strings.Contains(lines[4], `"level":"info"`) || !strings.Contains(lines[5], `"resultType":"complete"`) {
		t.Fatalf("unexpected sequence:\n%s", strings.Join(lines, "\n"))
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatty",` + modernMeta[:len(modernMeta)-1] + `,"io.modelcontextprotocol/logLevel":"verbose"}}}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,`) {
		t.Fatalf("bad logLevel: got %s", got)
	}
	c.finish()
}

// TestServerLogBacklog: server-wide logs wait for notifications/initialized,
// the oldest past the bound replaced by one drop notice, then follow the
// client's level.
func TestServerLogBacklog(t *testing.T) {
	c := startClientWith(t, testServer(), runtime.Options{Options: session.Options{DefaultLogLevel: "info", LogBuffer: 3}})
	for i := range 5 {
		c.inst.Log("info", "stdout", string(rune('a'+i)))
	}
	c.inst.Log("debug", "stdout", "below the default level")
	c.inst.Notify("notifications/custom", map[string]int{"n": 1})
	c.handshake()
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"dropped":3,"message":"3 messages dropped before initialization"},"level":"warning","logger":"mcprt"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"stdout","data":"e"}}`,
		`{"jsonrpc":"2.0","method":"notifications/custom","params":{"n":1}}`,
	}
	// 5 infos + 1 debug + 1 custom = 7 into a buffer of 3: a, b, c, d
	// dropped... the debug one is kept but filtered at replay.
	want[0] = strings.Replace(want[0], `"dropped":3,"message":"3 `, `"dropped":4,"message":"4 `, 1)
	for _, w := range want {
		if got := c.recv(); got != w {
			t.Fatalf("got  %s\nwant %s", got, w)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}`)
	if got := c.recv(); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("setLevel: %s", got)
	}
	c.inst.Log("warning", "app", "filtered")
	c.inst.Log("error", "app", "kept")
	if got, w := c.recv(), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"app","data":"kept"}}`; got != w {
		t.Fatalf("got  %s\nwant %s", got, w)
	}
	c.finish()
}

// TestServerLogModernNeverSent: 2026-07-28 forbids unsolicited messages.
func TestServerLogModernNeverSent(t *testing.T) {
	c := startClientWith(t, testServer(), runtime.Options{Options: session.Options{DefaultLogLevel: "debug"}})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`)
	if got := c.recv(); !strings.Contains(got, `"id":1,"result"`) {
		t.Fatalf("discover: %s", got)
	}
	c.inst.Log("error", "app", "never")
	c.inst.Notify("notifications/custom", nil)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + modernMeta + `}}`)
	if got := c.recv(); !strings.Contains(got, `"id":2,"result"`) {
		t.Fatalf("want the tools/list result next, got %s", got)
	}
	c.finish()
}

func TestCrashLoopSuspend(t *testing.T) {
	c := startClientWith(t, testServer(), runtime.Options{Options: session.Options{CrashIntensity: 2, CrashPeriod: time.Hour}})
	c.handshake()
	for i := range 3 {
		c.send(`{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":"tools/call","params":{"name":"panic"}}`)
		if got := c.recv(); !strings.Contains(got, `"result":{"content":[{"type":"text","text":"Tool \"panic\" failed with an internal error."}],"isError":true}`) {
			t.Fatalf("panic %d: %s", i, got)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"panic"}}`)
	if got := c.recv(); !strings.Contains(got, `"id":9,"error":{"code":-32603,"message":"Internal error: tools/call panic is crash-looping and suspended","data":{"retryAfterMs":`) {
		t.Fatalf("suspended: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fine"}}}`)
	if got := c.recv(); got != `{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"fine"}]}}` {
		t.Fatalf("other tools must be unaffected: %s", got)
	}
	c.finish()
}

// TestCrashLoopEscalate: each crash loop fails the handler supervisor (its
// running requests are answered at once); more than the root's intensity
// allows and the tree gives up with the crash loop as the reason.
func TestCrashLoopEscalate(t *testing.T) {
	var restarts chan string = make(chan string, 16)
	c := startClientWith(t, testServer(), runtime.Options{
		Intensity: 1,
		Period:    time.Hour,
		Logger:    debugLogger(t),
		EventHook: func(ev supervisor.Event) {
			if r, ok := ev.(supervisor.EventChildRestarted); ok {
				restarts <- r.Child
			}
		},
		Options: session.Options{CrashPolicy: session.Escalate, CrashIntensity: 1, CrashPeriod: time.Hour},
	})
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"echo","arguments":{"text":"x","sleepMs":60000}}}`)
	for _, id := range []string{"1", "2"} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"panic"}}`)
	}
	got := map[string]string{}
	for range 3 {
		l := c.recv()
		var m struct{ ID json.RawMessage }
		_ = json.Unmarshal([]byte(l), &m)
		got[string(m.ID)] = l
	}
	if !strings.Contains(got[`"slow"`], `"message":"Internal error: the handler was stopped"`) {
		t.Fatalf("the running request must be answered when its supervisor fails: %v", got)
	}
	select {
	case child := <-restarts:
		if child != "handlers" {
			t.Fatalf("restarted %q, want handlers", child)
		}
	case <-time.After(hang):
		t.Fatal("handler supervisor not restarted")
	}
	// The server still serves after the restart.
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"back"}}}`)
	if l := c.recv(); l != `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"back"}]}}` {
		t.Fatalf("after restart: %s", l)
	}
	// A second crash loop is one restart too many for the root.
	for _, id := range []string{"4", "5"} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"panic"}}`)
	}
	select {
	case <-c.inst.Done():
	case <-time.After(hang):
		t.Fatal("root did not give up")
	}
	var gave *supervisor.GaveUpError
	var loop *session.CrashLoopError
	if err := c.inst.Err(); !errors.As(err, &gave) || !errors.As(err, &loop) || loop.Tool != "tools/call panic" {
		t.Fatalf("Err() = %v, want a GaveUpError caused by the panic tool's crash loop", err)
	}
	if code := runtime.ExitCode(c.inst.Err()); code != runtime.ExitFailure {
		t.Fatalf("exit code %d, want %d", code, runtime.ExitFailure)
	}
}

func debugLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return quiet
}

func noopTool(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
	return mcp.TextResult(""), nil
}

// TestListChangedLegacy: list_changed only after notifications/initialized.
func TestListChangedLegacy(t *testing.T) {
	srv := testServer()
	c := startClientWith(t, srv, runtime.Options{})
	c.send(initLegacy)
	c.recv()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "early"}}, noopTool) // not initialized yet: dropped
	c.send(initDone)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got := c.recv(); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("want the ping result first, got %s", got)
	}
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "late"}}, noopTool)
	if got := c.recv(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Fatalf("got %s", got)
	}
	srv.RemoveTool("late")
	if got := c.recv(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Fatalf("got %s", got)
	}
	c.finish()
}

// TestListenModern: a subscriptions/listen stream is acknowledged first,
// carries its subscription id on every notification, gets only what it
// asked for, and ends silently when the client cancels it.
func TestListenModern(t *testing.T) {
	srv := testServer()
	c := startClientWith(t, srv, runtime.Options{})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "before"}}, noopTool) // nobody listens yet
	c.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{` + modernMeta +
		`,"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"notifications":{"toolsListChanged":true}}}`; got != want {
		t.Fatalf("ack:\n got %s\nwant %s", got, want)
	}
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "added"}}, noopTool)
	if got, want := c.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":"L","method":"tools/list","params":{` + modernMeta + `}}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"L","error":{"code":-32600,`) {
		t.Fatalf("the listen id is in use: got %s", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)
	// A request after the cancellation is answered after the session has
	// read it: only then is the stream surely closed (a tool added before
	// could reach the session first, and the open stream rightly tell).
	c.send(`{"jsonrpc":"2.0","id":"sync","method":"server/discover","params":{` + modernMeta + `}}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"sync","result":`) {
		t.Fatalf("server/discover after the cancellation: got %s", got)
	}
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "after"}}, noopTool)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + modernMeta + `}}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":2,"result":`) {
		t.Fatalf("want the list result and nothing for the cancelled stream, got %s", got)
	}
	c.finish()
}

// TestListenEndsOnDrain: at stdin EOF the server ends an open stream with a
// result carrying the subscription id, then notifications/cancelled.
func TestListenEndsOnDrain(t *testing.T) {
	c := startClient(t, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{` + modernMeta + `,"notifications":{"toolsListChanged":true}}}`)
	c.recv() // ack
	c.in.Close()
	got := c.recv()
	var res struct {
		ID     int
		Result struct {
			ResultType string                     `json:"resultType"`
			Meta       map[string]json.RawMessage `json:"_meta"`
		}
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil || res.ID != 5 || res.Result.ResultType != "complete" ||
		string(res.Result.Meta["io.modelcontextprotocol/subscriptionId"]) != "5" || res.Result.Meta["io.modelcontextprotocol/serverInfo"] == nil {
		t.Fatalf("want a complete result with the subscription id and serverInfo, got %s", got)
	}
	if got, want := c.recv(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"server shutting down","requestId":5}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	c.finish()
}

// askServer has a tool that elicits a name and greets it.
func askServer() *handlers.Server {
	srv := testServer()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "greet"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		res, err := req.Elicit(ctx, "Who are you?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`))
		if err != nil {
			return nil, err
		}
		return mcp.TextResult("hello " + res.Action + " " + res.Content["name"].(string)), nil
	})
	return srv
}

func TestAskLegacy(t *testing.T) {
	c := startClientWith(t, askServer(), runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"0"}}}`)
	c.recv()
	c.send(initDone)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet"}}`)
	got := c.recv()
	want := `{"jsonrpc":"2.0","id":"mcprt-1","method":"elicitation/create","params":{"message":"Who are you?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":"unknown","result":{}}`) // ignored
	c.send(`{"jsonrpc":"2.0","id":"mcprt-1","result":{"action":"accept","content":{"name":"Ada"}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello accept Ada"}]}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	c.finish()
}

func TestAskLegacyWithoutCapability(t *testing.T) {
	c := startClientWith(t, askServer(), runtime.Options{})
	c.handshake() // no elicitation capability
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet"}}`)
	if got := c.recv(); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `elicitation`) {
		t.Fatalf("want an isError result naming the missing capability, got %s", got)
	}
	c.finish()
}

func TestAskModern(t *testing.T) {
	c := startClientWith(t, askServer(), runtime.Options{})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet",` + meta + `}}`)
	var first struct {
		Result struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	got := c.recv()
	if err := json.Unmarshal([]byte(got), &first); err != nil || first.Result.ResultType != "input_required" ||
		first.Result.InputRequests["q1"].Method != "elicitation/create" || first.Result.RequestState == "" {
		t.Fatalf("want input_required asking q1 = elicitation/create, got %s", got)
	}
	state, _ := json.Marshal(first.Result.RequestState)
	retry := func(id, name, st string) string {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `",` + meta +
			`,"inputResponses":{"q1":{"action":"accept","content":{"name":"Bo"}}},"requestState":` + st + `}}`)
		return c.recv()
	}
	if got := retry("2", "greet", string(state)); !strings.Contains(got, `"text":"hello accept Bo"`) || !strings.Contains(got, `"resultType":"complete"`) {
		t.Fatalf("retry: %s", got)
	}
	tampered, _ := json.Marshal(first.Result.RequestState[:len(first.Result.RequestState)-2] + "xx")
	if got := retry("3", "greet", string(tampered)); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,`) {
		t.Fatalf("tampered state: %s", got)
	}
	if got := retry("4", "echo", string(state)); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,`) {
		t.Fatalf("state of another request: %s", got)
	}
	c.finish()
}

// TestRootsCached: roots/list is asked once and cached until the client
// says its roots changed.
func TestRootsCached(t *testing.T) {
	srv := testServer()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "roots"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		roots, err := req.Roots(ctx)
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(roots[0].URI), nil
	})
	c := startClientWith(t, srv, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"t","version":"0"}}}`)
	c.recv()
	c.send(initDone)
	call := func(id, wantURI string, answer string) {
		t.Helper()
		c.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"roots"}}`)
		got := c.recv()
		if answer != "" {
			var req struct {
				ID     json.RawMessage
				Method string
			}
			if json.Unmarshal([]byte(got), &req); req.Method != "roots/list" {
				t.Fatalf("want a roots/list request, got %s", got)
			}
			c.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"roots":[{"uri":"` + answer + `"}]}}`)
			got = c.recv()
		}
		if want := `{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[{"type":"text","text":"` + wantURI + `"}]}}`; got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	call("a", "file:///one", "file:///one")
	call("b", "file:///one", "") // cached: no request
	c.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	call("c", "file:///two", "file:///two")
	c.finish()
}

// TestAskModernRounds: a handler's requests go out under the keys it
// chose, several in one round (AskAll) and one round after another
// (answers of earlier rounds come back in the requestState); answers that
// are not results of the request asked, or inputResponses that are not an
// object of objects, are invalid params.
func TestAskModernRounds(t *testing.T) {
	srv := testServer()
	nameSchema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "two"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		answers, err := req.AskAll(ctx, map[string]handlers.InputRequest{
			"user_name":    {Method: "elicitation/create", Params: map[string]any{"message": "Name?", "requestedSchema": nameSchema}},
			"client_roots": {Method: "roots/list"},
		})
		if err != nil {
			return nil, err
		}
		var e handlers.ElicitResult
		var r struct{ Roots []mcp.Root }
		_ = json.Unmarshal(answers["user_name"], &e)
		_ = json.Unmarshal(answers["client_roots"], &r)
		return mcp.TextResult(fmt.Sprint(e.Content["name"], " ", r.Roots[0].URI)), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "steps"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		var got []string
		for _, step := range []string{"step1", "step2"} {
			raw, err := req.AskAs(ctx, step, "elicitation/create", map[string]any{"message": step, "requestedSchema": nameSchema})
			if err != nil {
				return nil, err
			}
			var e handlers.ElicitResult
			_ = json.Unmarshal(raw, &e)
			got = append(got, fmt.Sprint(e.Content["name"]))
		}
		return mcp.TextResult(strings.Join(got, "+")), nil
	})
	c := startClientWith(t, srv, runtime.Options{})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{}}}`
	type round struct {
		Result struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
			Content       []mcp.Content              `json:"content"`
		} `json:"result"`
		Error *struct{ Code int } `json:"error"`
	}
	call := func(id int, tool, extra string) round {
		t.Helper()
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,%s%s}}`, id, tool, meta, extra))
		got := c.recv()
		var r round
		if err := json.Unmarshal([]byte(got), &r); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		return r
	}
	state := func(r round) string {
		b, _ := json.Marshal(r.Result.RequestState)
		return `,"requestState":` + string(b)
	}
	accept := func(name string) string { return `{"action":"accept","content":{"name":"` + name + `"}}` }

	r := call(1, "two", "")
	if r.Result.ResultType != "input_required" || len(r.Result.InputRequests) != 2 ||
		r.Result.InputRequests["user_name"] == nil || r.Result.InputRequests["client_roots"] == nil {
		t.Fatalf("want both requests in one round, got %+v", r)
	}
	done := call(2, "two", `,"inputResponses":{"user_name":`+accept("Ada")+`,"client_roots":{"roots":[{"uri":"file:///r"}]},"extra":{"x":1}}`+state(r))
	if done.Result.ResultType != "complete" || len(done.Result.Content) != 1 || done.Result.Content[0].Text != "Ada file:///r" {
		t.Fatalf("second round: %+v", done)
	}
	// One answer of two: asked again for the other alone.
	again := call(3, "two", `,"inputResponses":{"user_name":`+accept("Ada")+`}`+state(r))
	if again.Result.ResultType != "input_required" || len(again.Result.InputRequests) != 1 || again.Result.InputRequests["client_roots"] == nil {
		t.Fatalf("partial answer: %+v", again)
	}

	r1 := call(4, "steps", "")
	if r1.Result.InputRequests["step1"] == nil || len(r1.Result.InputRequests) != 1 {
		t.Fatalf("round 1: %+v", r1)
	}
	r2 := call(5, "steps", `,"inputResponses":{"step1":`+accept("a")+`}`+state(r1))
	if r2.Result.InputRequests["step2"] == nil || len(r2.Result.InputRequests) != 1 || r2.Result.RequestState == r1.Result.RequestState {
		t.Fatalf("round 2: %+v", r2)
	}
	// The client sends this round's answer only; step1's is in the state.
	r3 := call(6, "steps", `,"inputResponses":{"step2":`+accept("b")+`}`+state(r2))
	if r3.Result.ResultType != "complete" || r3.Result.Content[0].Text != "a+b" {
		t.Fatalf("round 3: %+v", r3)
	}

	for name, extra := range map[string]string{
		"null inputResponses":    `,"inputResponses":null`,
		"array inputResponses":   `,"inputResponses":[]`,
		"number answer":          `,"inputResponses":{"step1":12345}`,
		"elicitation no action":  `,"inputResponses":{"step1":{"content":{"name":"a"}}}`,
		"elicitation bad action": `,"inputResponses":{"step1":{"action":"maybe"}}`,
	} {
		if r := call(7, "steps", extra); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("%s: want -32602, got %+v", name, r)
		}
	}
	c.finish()
}
