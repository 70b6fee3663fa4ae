package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
)

// hang only turns a hang into a failure; nothing waits for it in a
// passing run.
const hang = 60 * time.Second

// mcprtPath is the real mcprt binary, built once by TestMain: its `serve`
// is the backend of these tests.
var mcprtPath string

func TestMain(m *testing.M) {
	switch os.Getenv(testServerEnv) {
	case "dynamic":
		os.Exit(runDynamicServer())
	case "roots":
		os.Exit(runRootsServer())
	case "app":
		os.Exit(runAppServer())
	case "raw":
		os.Exit(runRawServer())
	}
	slog.SetDefault(slog.New(slog.DiscardHandler)) // hollywood logs through it
	dir, err := os.MkdirTemp("", "mcprt-gateway-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mcprtPath = filepath.Join(dir, "mcprt")
	if out, err := exec.Command("go", "build", "-o", mcprtPath, "github.com/mcprt/mcprt/cmd/mcprt").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/mcprt: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// The examples run "mcprt" as a backend, as a configuration would.
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testServerEnv makes this test binary an MCP server whose lists change
// (see runDynamicServer).
const testServerEnv = "MCPRT_GATEWAY_TEST_SERVER"

// dynamic is a backend whose tools change when asked: "grow" adds a tool
// "extra-N", "shrink" removes them all, and the server sends list_changed.
func dynamic(name string) Backend {
	return Backend{Name: name, Command: os.Args[0], Env: []string{testServerEnv + "=dynamic", "LOG_LEVEL=warn", "GORACE=atexit_sleep_ms=0"}}
}

func runDynamicServer() int {
	srv := handlers.NewServer(mcp.Implementation{Name: "dynamic", Version: "1"}, "Call grow to add a tool.")
	var mu sync.Mutex
	var extra []string
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "grow"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		name := fmt.Sprintf("extra-%d", len(extra)+1)
		extra = append(extra, name)
		srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: name}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
			return mcp.TextResult("I am " + name), nil
		})
		return mcp.TextResult("added " + name), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "meta"}}, func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		var p struct {
			Meta json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return mcp.TextResult(string(p.Meta)), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "shrink"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range extra {
			srv.RemoveTool(n)
		}
		extra = nil
		return mcp.TextResult("removed"), nil
	})
	return mcprt.ExitCode(mcprt.Serve(context.Background(), srv, mcprt.Options{}))
}

// serve is a backend that runs the reference server.
func serve(name string) Backend {
	return Backend{Name: name, Command: mcprtPath, Args: []string{"serve"},
		Env: []string{"LOG_LEVEL=warn", "GORACE=atexit_sleep_ms=0"}}
}

// syncBuffer collects what the gateway writes to stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testGateway is a started gateway closed at the end of the test.
type testGateway struct {
	*Gateway
	t      *testing.T
	stderr *syncBuffer
}

func start(t *testing.T, backends ...Backend) *testGateway {
	t.Helper()
	tg := unstarted(t, Options{}, backends...)
	tg.start()
	return tg
}

// unstarted makes a gateway of backends, closed at the end of the test,
// and leaves it to the test to start (testGateway.start). opts' Logger and
// Stderr go to the gateway's stderr buffer unless set.
func unstarted(t *testing.T, opts Options, backends ...Backend) *testGateway {
	t.Helper()
	stderr := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts.Stderr, opts.CloseGrace, opts.TermGrace = stderr, time.Second, time.Second
	g, err := New(&Config{Backends: backends}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", stderr.String())
		}
	})
	return &testGateway{Gateway: g, t: t, stderr: stderr}
}

func (g *testGateway) start() {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		g.t.Fatal(err)
	}
}

// peer is the session's side of a request, as a test sees it: it records
// notifications and answers Ask with ask.
type peer struct {
	mu    sync.Mutex
	notes []string
	// timeouts are the SetTimeout calls, when recordTimeouts (off, so
	// that BenchmarkForward counts the gateway's allocations only).
	recordTimeouts bool
	timeouts       []time.Duration
	ask            func(method string, params any) (json.RawMessage, error)
}

func (p *peer) Notify(method string, params any) bool {
	b, _ := json.Marshal(params)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, method+" "+string(b))
	return true
}

func (p *peer) SetTimeout(d time.Duration) {
	if !p.recordTimeouts {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timeouts = append(p.timeouts, d)
}

func (p *peer) Ask(_ context.Context, method string, params any) (json.RawMessage, error) {
	if p.ask == nil {
		return nil, fmt.Errorf("no Ask in this test")
	}
	return p.ask(method, params)
}

func (p *peer) notifications() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.notes...)
}

// req is a request as the session would hand it to the gateway's server.
func req(method, params string, p *peer) *handlers.Request {
	r := &handlers.Request{Method: method, Params: json.RawMessage(params), Version: "2025-11-25",
		ClientCapabilities: json.RawMessage(`{"elicitation":{},"sampling":{},"roots":{}}`), LogLevel: "debug"}
	if p != nil {
		r.Peer = p
	}
	return r
}

// run runs one method of the gateway's server and returns its result as
// JSON, or its error.
func (g *testGateway) run(ctx context.Context, r *handlers.Request) (string, error) {
	g.t.Helper()
	m, ok := g.Server().Method(r.Method)
	if !ok {
		return "", fmt.Errorf("%s: the gateway does not offer it", r.Method)
	}
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), hang)
		defer cancel()
	}
	res, err := m.Run(ctx, r)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res)
	if err != nil {
		g.t.Fatalf("%s: result does not marshal: %v", r.Method, err)
	}
	return string(b), nil
}

// must is run that fails the test on an error.
func (g *testGateway) must(method, params string) string {
	g.t.Helper()
	out, err := g.run(nil, req(method, params, nil))
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, params, err)
	}
	return out
}

// names lists the names (or URIs) of a list method's items.
func (g *testGateway) names(method, field, key string) []string {
	g.t.Helper()
	var res map[string][]map[string]any
	if err := json.Unmarshal([]byte(g.must(method, `{}`)), &res); err != nil {
		g.t.Fatal(err)
	}
	var out []string
	for _, item := range res[field] {
		out = append(out, fmt.Sprint(item[key]))
	}
	return out
}

// waitFor polls cond until it holds or hang passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (g *testGateway) state(name string) Status {
	for _, s := range g.Backends() {
		if s.Name == name {
			return s
		}
	}
	g.t.Fatalf("no backend %q", name)
	return Status{}
}

// inFlight is how many calls are in flight to the backend.
func (b *backend) inFlight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls.n
}
