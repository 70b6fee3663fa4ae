package sessionactor_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/internal/sessionactor"
	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// pipe is the in-memory transport: decoded messages in (sessionactor.In), and
// out, each request's on its own replier and the rest on sink.
type pipe struct {
	t       *testing.T
	inbox   *supervisor.Inbox
	backlog *wire.Backlog
	sink    *replier // what belongs to no request's Replier (Config.Deliver)
	root    *supervisor.Root
}

var pipes int

func startPipe(t *testing.T, srv *handlers.Server) *pipe {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	pipes++
	name := "pipe-" + strconv.Itoa(pipes)
	p := &pipe{t: t, inbox: supervisor.NewInbox(), backlog: wire.NewBacklog(1 << 20), sink: newReplier()}
	p.root, err = supervisor.Start(e, name, supervisor.Spec{
		Name: name, Strategy: supervisor.OneForOne, Logger: quiet,
		Children: []supervisor.ChildSpec{
			{ID: "handlers", Start: supervisor.New(supervisor.Spec{Name: name + "/handlers", Strategy: supervisor.OneForOne, Logger: quiet}),
				Restart: supervisor.Permanent, Shutdown: 2 * time.Second},
			{ID: "session", Start: sessionactor.New(sessionactor.Config{
				Server: srv, Deliver: func(m wire.Out) { p.sink.Notify(m) }, Inbox: p.inbox,
				Handlers: supervisor.ChildPID(supervisor.RootPID(e, name), "handlers"),
				Backlog:  p.backlog, Logger: quiet,
			}), Restart: supervisor.Transient, Significant: true, Shutdown: 2 * time.Second},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.inbox.Send(sessionactor.Drain{})
		select {
		case <-p.root.Done():
		case <-time.After(hang):
			_ = p.root.Stop(context.Background())
		}
	})
	return p
}

// send decodes line and hands it to the session as a transport would.
func (p *pipe) send(line string, key string, r sessionactor.Replier, values context.Context) {
	p.t.Helper()
	in := &sessionactor.In{Key: key, Reply: r, Values: values}
	if _, jerr := jsonrpc.Decode([]byte(line), &in.Msg); jerr != nil {
		p.t.Fatalf("decode %s: %v", line, jerr)
	}
	p.backlog.Add(1)
	p.inbox.Send(in)
}

// sent is one message a replier took.
type sent struct {
	data  string
	final bool
	code  int
	o     sessionactor.Outcome
}

// replier records what the session sends for one request.
type replier struct{ ch chan sent }

func newReplier() *replier { return &replier{ch: make(chan sent, 64)} }

func (r *replier) Notify(m wire.Out) {
	r.ch <- sent{data: string(m.Data) + m.Text + string(m.Tail)}
	if m.Done != nil {
		m.Done()
	}
}

func (r *replier) Respond(m wire.Out, o sessionactor.Outcome) {
	r.ch <- sent{data: string(m.Data) + m.Text + string(m.Tail), final: true, code: o.Code, o: o}
	if m.Done != nil {
		m.Done()
	}
}

func (r *replier) next(t *testing.T) sent {
	t.Helper()
	select {
	case s := <-r.ch:
		return s
	case <-time.After(hang):
		t.Fatal("nothing sent")
		return sent{}
	}
}

func (r *replier) none(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case s := <-r.ch:
		t.Fatalf("unexpected: %+v", s)
	case <-time.After(within):
	}
}

// seamServer has a tool that reports progress, then waits for release (if
// set) and answers with the value its context carries under callerKey.
type callerKey struct{}

func seamServer(release <-chan struct{}, started chan<- struct{}) *handlers.Server {
	srv := handlers.NewServer(mcp.Implementation{Name: "seam", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "who"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		req.Progress(1, 2, "half")
		if started != nil {
			started <- struct{}{}
		}
		if release != nil {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		who, _ := ctx.Value(callerKey{}).(string)
		return mcp.TextResult("caller=" + who), nil
	})
	return srv
}

// A request's response and what is sent on its behalf go to its Replier,
// with the client's own id; nothing of it reaches the session's sink.
func TestSeamReplierTakesItsRequest(t *testing.T) {
	p := startPipe(t, seamServer(nil, nil))
	r := newReplier()
	p.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{`+modernMeta[:len(modernMeta)-1]+`,"progressToken":7},"name":"who"}}`, "k1", r, nil)
	progress := r.next(t)
	if progress.final || !strings.Contains(progress.data, `"notifications/progress"`) || !strings.Contains(progress.data, `"progressToken":7`) {
		t.Fatalf("first message: %+v, want the progress notification", progress)
	}
	resp := r.next(t)
	if !resp.final || resp.code != 0 || !strings.HasPrefix(resp.data, `{"jsonrpc":"2.0","id":"a",`) || !strings.Contains(resp.data, `caller=`) {
		t.Fatalf("response: %+v", resp)
	}
	p.sink.none(t, 50*time.Millisecond)
}

// An error response says its code, so a transport need not read it back
// out of the bytes (Streamable HTTP maps some to HTTP statuses).
func TestSeamRespondCarriesErrorCode(t *testing.T) {
	p := startPipe(t, seamServer(nil, nil))
	r := newReplier()
	p.send(`{"jsonrpc":"2.0","id":3,"method":"nope/nothing","params":{`+modernMeta+`}}`, "", r, nil)
	resp := r.next(t)
	if !resp.final || resp.code != jsonrpc.CodeMethodNotFound || !strings.HasPrefix(resp.data, `{"jsonrpc":"2.0","id":3,`) {
		t.Fatalf("response: %+v, want code %d", resp, jsonrpc.CodeMethodNotFound)
	}
}

// Two clients of one session may both use id 1 when their transport keys
// their requests apart (In.Key); each gets its answer under its own id.
func TestSeamKeysSeparateClients(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 2)
	p := startPipe(t, seamServer(release, started))
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"who"}}`
	a, b := newReplier(), newReplier()
	p.send(call, "x1", a, nil)
	p.send(call, "x2", b, nil)
	for range 2 {
		select {
		case <-started:
		case <-time.After(hang):
			t.Fatal("both calls should run at once")
		}
	}
	close(release)
	for _, r := range []*replier{a, b} {
		var resp sent
		for resp = r.next(t); !resp.final; resp = r.next(t) {
		}
		if resp.code != 0 || !strings.HasPrefix(resp.data, `{"jsonrpc":"2.0","id":1,`) {
			t.Fatalf("response: %+v", resp)
		}
	}
}

// What a transport attaches to a request (In.Values) reaches its handler
// through the handler's context: how an authenticated caller travels.
func TestSeamValuesReachHandler(t *testing.T) {
	p := startPipe(t, seamServer(nil, nil))
	r := newReplier()
	values := context.WithValue(context.Background(), callerKey{}, "alice")
	// A transport's request context may end before the call does: only
	// its values are read.
	ended, cancel := context.WithCancel(values)
	cancel()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+modernMeta+`,"name":"who"}}`, "", r, ended)
	var resp sent
	for resp = r.next(t); !resp.final; resp = r.next(t) {
	}
	if !strings.Contains(resp.data, `caller=alice`) {
		t.Fatalf("response: %+v, want the caller the transport attached", resp)
	}
}

// Cancel settles a request by its key with no response, and its handler's
// context ends.
func TestSeamCancelByKey(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	defer close(release)
	p := startPipe(t, seamServer(release, started))
	r := newReplier()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+modernMeta+`,"name":"who"}}`, "k9", r, nil)
	select {
	case <-started:
	case <-time.After(hang):
		t.Fatal("the call did not start")
	}
	p.inbox.Send(sessionactor.Cancel{Key: "k9"})
	r.none(t, 100*time.Millisecond)
	// The session still serves the key's next request.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"nope","params":{`+modernMeta+`}}`, "k9", r, nil)
	if got := r.next(t); !got.final || got.code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("next response: %+v", got)
	}
}

// final returns the response r takes, past what is sent before it.
func (r *replier) final(t *testing.T) sent {
	t.Helper()
	resp := r.next(t)
	for !resp.final {
		resp = r.next(t)
	}
	return resp
}

// The caller a transport vouches for (handlers.WithCaller on In.Values)
// is the handler's Request.Caller; a request without one has none.
func TestSeamCallerOnRequest(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "seam", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "whoami"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		if req.Caller == nil {
			return mcp.TextResult("nobody"), nil
		}
		if handlers.CallerFrom(ctx) != req.Caller {
			return mcp.TextResult("the context's caller is another"), nil
		}
		return mcp.TextResult(req.Caller.Principal() + " " + strings.Join(req.Caller.Scopes, ",")), nil
	})
	p := startPipe(t, srv)
	alice := handlers.WithCaller(context.Background(), &handlers.Caller{Subject: "alice", Scopes: []string{"a", "b"}})
	for _, tc := range []struct {
		values context.Context
		want   string
	}{{alice, `sub:alice a,b`}, {nil, `nobody`}, {context.Background(), `nobody`}} {
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"whoami"}}`,
		} {
			r := newReplier()
			p.send(line, "", r, tc.values)
			if resp := r.final(t); !strings.Contains(resp.data, `"text":"`+tc.want+`"`) {
				t.Fatalf("response %s, want %q", resp.data, tc.want)
			}
		}
	}
}

// A 2026-07-28 requestState is bound to the caller it was minted for:
// another subject, or nobody, presenting it is refused as a state this
// server never issued; its own subject gets the answer.
func TestSeamRequestStateBoundToCaller(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "seam", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "greet"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		res, err := req.Elicit(ctx, "Who are you?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))
		if err != nil {
			return nil, err
		}
		return mcp.TextResult("hello " + res.Content["name"].(string)), nil
	})
	p := startPipe(t, srv)
	as := func(sub string) context.Context {
		return handlers.WithCaller(context.Background(), &handlers.Caller{Subject: sub, ClientID: "c"})
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	r := newReplier()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet",`+meta+`}}`, "", r, as("alice"))
	var first struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if resp := r.final(t); json.Unmarshal([]byte(resp.data), &first) != nil || first.Result.RequestState == "" {
		t.Fatalf("want input_required with a requestState, got %s", resp.data)
	}
	state, _ := json.Marshal(first.Result.RequestState)
	retry := func(values context.Context) sent {
		r := newReplier()
		p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet",`+meta+
			`,"inputResponses":{"q1":{"action":"accept","content":{"name":"Bo"}}},"requestState":`+string(state)+`}}`, "", r, values)
		return r.final(t)
	}
	for name, values := range map[string]context.Context{"bob": as("bob"), "nobody": nil} {
		if resp := retry(values); resp.code != jsonrpc.CodeInvalidParams || !strings.Contains(resp.data, "requestState") {
			t.Errorf("alice's state presented by %s: %+v, want -32602", name, resp)
		}
	}
	if resp := retry(as("alice")); resp.code != 0 || !strings.Contains(resp.data, `hello Bo`) {
		t.Errorf("alice's state presented by alice: %+v", resp)
	}
}

// A subscription to a resource the caller may not read (handlers.Access)
// is answered as one to a URI nothing serves: the server's hook never
// hears of it, so no update reaches the caller; a caller it lets in
// subscribes.
func TestSeamSubscriptionNeedsAccess(t *testing.T) {
	srv, subs := subscriptionServer()
	srv.AddResource(handlers.Resource{Resource: mcp.Resource{URI: "test://secret", Name: "secret"}, Access: &handlers.Access{Scopes: []string{"admin"}}},
		func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{URI: "test://secret", Text: "s"}}, nil
		})
	p := startPipe(t, srv)
	as := func(scopes ...string) context.Context {
		return handlers.WithCaller(context.Background(), &handlers.Caller{Subject: "x", Scopes: scopes})
	}
	listen := func(id string, values context.Context) {
		r := newReplier()
		p.send(`{"jsonrpc":"2.0","id":"`+id+`","method":"subscriptions/listen","params":{`+modernMeta+
			`,"notifications":{"resourceSubscriptions":["test://secret","test://a"]}}}`, id, r, values)
		if got := r.next(t); !strings.Contains(got.data, "notifications/subscriptions/acknowledged") {
			t.Fatalf("ack: %+v", got)
		}
		p.inbox.Send(sessionactor.Cancel{Key: id})
	}
	listen("L1", as("read"))
	listen("L2", nil)
	listen("L3", as("admin"))
	// Each stream's hook calls come before its acknowledgment, the
	// cancels' after: take the subscriptions only.
	var got []string
	for _, c := range subs.snapshot() {
		if strings.HasSuffix(c, " true") {
			got = append(got, c)
		}
	}
	slices.Sort(got)
	want := []string{"test://a true", "test://a true", "test://a true", "test://secret true"}
	if !slices.Equal(got, want) {
		t.Fatalf("subscriptions %q, want %q: only the admin caller's to test://secret", got, want)
	}
}

// A 2026-07-28 list served to a caller is cacheable by that caller only
// (cacheScope private): what it lists may be its own. Without a caller it
// is public, as before.
func TestSeamCallerCacheScope(t *testing.T) {
	p := startPipe(t, seamServer(nil, nil))
	alice := handlers.WithCaller(context.Background(), &handlers.Caller{Subject: "alice"})
	for _, tc := range []struct {
		values context.Context
		want   string
	}{{alice, `"cacheScope":"private"`}, {nil, `"cacheScope":"public"`}} {
		r := newReplier()
		p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`, "", r, tc.values)
		if resp := r.final(t); !strings.Contains(resp.data, tc.want) || !strings.Contains(resp.data, `"ttlMs":`) {
			t.Errorf("tools/list: %s, want %s", resp.data, tc.want)
		}
	}
}

// The session validates a request once and tells its transport, beside the
// bytes, what the transport needs of the answer (Outcome): the code, the
// HTTP status, and nothing to read back out of the bytes.
func TestSeamOutcome(t *testing.T) {
	p := startPipe(t, seamServer(nil, nil))
	const noVersion = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}`
	cases := []struct {
		name         string
		line         string
		modern       bool
		refuse       *jsonrpc.Error
		code, status int
	}{
		{"result", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"who"}}`, true, nil, 0, 200},
		{"not found, 2026-07-28", `{"jsonrpc":"2.0","id":2,"method":"nope/x","params":{` + modernMeta + `}}`, true, nil, jsonrpc.CodeMethodNotFound, 404},
		{"not found, no era from the transport", `{"jsonrpc":"2.0","id":3,"method":"nope/x","params":{` + modernMeta + `}}`, false, nil, jsonrpc.CodeMethodNotFound, 200},
		{"malformed: no version", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + noVersion + `}}`, true, nil, jsonrpc.CodeInvalidParams, 400},
		{"malformed: params not an object", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1]}`, true, nil, jsonrpc.CodeInvalidParams, 400},
		{"malformed: _meta not an object", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":3}}`, true, nil, jsonrpc.CodeInvalidParams, 400},
		{"refused by the transport", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + modernMeta + `}}`, true,
			&jsonrpc.Error{Code: -32020, Message: "Header mismatch: x"}, -32020, 400},
		{"malformed before refused", `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{` + noVersion + `}}`, true,
			&jsonrpc.Error{Code: -32020, Message: "Header mismatch: x"}, jsonrpc.CodeInvalidParams, 400},
	}
	for _, c := range cases {
		r := newReplier()
		in := &sessionactor.In{Key: "o" + c.name, Reply: r, Modern: c.modern, Refuse: c.refuse}
		if _, jerr := jsonrpc.Decode([]byte(c.line), &in.Msg); jerr != nil {
			t.Fatal(jerr)
		}
		p.backlog.Add(1)
		p.inbox.Send(in)
		var resp sent
		for resp = r.next(t); !resp.final; resp = r.next(t) {
		}
		if resp.o.Code != c.code || resp.o.Status != c.status || resp.o.Version != "" {
			t.Errorf("%s: outcome %+v, want code %d, status %d (%s)", c.name, resp.o, c.code, c.status, resp.data)
		}
		if c.refuse != nil && c.code == c.refuse.Code && !strings.Contains(resp.data, c.refuse.Message) {
			t.Errorf("%s: %s, want the transport's error", c.name, resp.data)
		}
	}
}

// An initialize's Outcome carries the version it negotiated, so a transport
// learns the session's revision without decoding the result; a failed one
// carries none.
func TestSeamOutcomeVersion(t *testing.T) {
	p := startPipe(t, seamServer(nil, nil))
	r := newReplier()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "", r, nil)
	resp := r.next(t)
	if !resp.final || resp.o.Version != mcp.LegacyVersions[0] || resp.o.Status != 200 {
		t.Fatalf("initialize: %+v, want version %s (the server's offer)", resp, mcp.LegacyVersions[0])
	}
	r = newReplier()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "", r, nil)
	if resp := r.next(t); resp.o.Version != "" || resp.o.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("second initialize: %+v, want an error and no version", resp)
	}
}
