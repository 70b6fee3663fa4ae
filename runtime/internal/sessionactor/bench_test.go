package sessionactor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/trace"
	"github.com/mcprt/mcprt/runtime/internal/sessionactor"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/stdio"
	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// benchSink is the writer's output: it counts response lines and tells the
// benchmark when the number it waits for has gone out.
type benchSink struct {
	mu     sync.Mutex
	lines  int
	errors int
	want   int
	done   chan struct{}
}

func (s *benchSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines += bytes.Count(p, []byte{'\n'})
	s.errors += bytes.Count(p, []byte(`"error":{`))
	if s.done != nil && s.lines >= s.want {
		close(s.done)
		s.done = nil
	}
	return len(p), nil
}

// count is how many lines have been written.
func (s *benchSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines
}

// expect returns a channel closed once n lines in all have been written.
func (s *benchSink) expect(n int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if s.lines >= n {
		close(ch)
		return ch
	}
	s.want, s.done = n, ch
	return ch
}

// benchTree is the runtime's tree without the reader: writer, handlers
// supervisor and session, with lines handed straight to the session.
type benchTree struct {
	e       *actor.Engine
	root    *supervisor.Root
	session *supervisor.Inbox
	writer  *supervisor.Inbox
	backlog *wire.Backlog
	sink    *benchSink
	// k bounds the requests in flight, sent the requests sent: line waits
	// for answers to keep the loop closed at depth k. The reader's backlog
	// does not (it waits only on answers not yet written), so without it
	// a benchmark would outrun the session's queue (MaxQueued) and get
	// "server busy" errors.
	k, sent int
}

var benchTrees int

func startBenchTree(b *testing.B, maxInFlight int) *benchTree {
	b.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		b.Fatal(err)
	}
	benchTrees++
	name := "bench-" + strconv.Itoa(benchTrees)
	root := supervisor.RootPID(e, name)
	t := &benchTree{e: e, session: supervisor.NewInbox(), writer: supervisor.NewInbox(), backlog: wire.NewBacklog(maxInFlight), sink: &benchSink{}, k: maxInFlight}
	srv := handlers.NewServer(mcp.Implementation{Name: "bench", Version: "1"}, "")
	srv.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "echo",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		},
	}, func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Text *string }
		if err := json.Unmarshal(args, &a); err != nil || a.Text == nil {
			return nil, fmt.Errorf("echo needs a string argument \"text\"")
		}
		return mcp.TextResult(*a.Text), nil
	})
	quiet := slog.New(slog.DiscardHandler)
	t.root, err = supervisor.Start(e, name, supervisor.Spec{
		Name:     name,
		Strategy: supervisor.OneForOne,
		Logger:   quiet,
		Children: []supervisor.ChildSpec{
			{ID: "writer", Start: stdio.NewWriter(t.sink, t.writer), Restart: supervisor.Transient, Significant: true, Shutdown: 2 * time.Second},
			{ID: "handlers", Start: supervisor.New(supervisor.Spec{Name: name + "/handlers", Strategy: supervisor.OneForOne, Logger: quiet}),
				Restart: supervisor.Permanent, Shutdown: 2 * time.Second},
			{ID: "session", Start: sessionactor.New(sessionactor.Config{
				Server: srv, Writer: t.writer, Inbox: t.session, Handlers: supervisor.ChildPID(root, "handlers"),
				Backlog: t.backlog, Logger: quiet,
				Options: session.Options{MaxInFlight: maxInFlight, Tracer: benchTracer,
					Overload: &session.Overload{}}, // counted, as under -http-metrics or -http-status
			}), Restart: supervisor.Transient, Significant: true, Shutdown: 2 * time.Second},
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(t.stop)
	return t
}

// line hands one request line to the session, once fewer than k are
// unanswered, counting it in the backlog as the reader does: a closed loop
// of depth k.
func (t *benchTree) line(data []byte) {
	if n := t.sent - t.k + 1; n > 0 && t.sink.count() < n {
		<-t.sink.expect(n)
	}
	t.sent++
	t.notify(data)
}

// notify hands the session a line that gets no answer.
func (t *benchTree) notify(data []byte) {
	t.backlog.Wait(nil)
	t.backlog.Add(1)
	t.session.Send(&sessionactor.Raw{Data: data})
}

func (t *benchTree) wait(b *testing.B, lines int) {
	select {
	case <-t.sink.expect(lines):
	case <-time.After(time.Minute): // only turns a hang into a failure
		b.Fatalf("%d of %d responses after a minute", t.sink.lines, lines)
	}
}

func (t *benchTree) stop() {
	t.session.Send(sessionactor.Closed{})
	select {
	case <-t.root.Done():
	case <-time.After(10 * time.Second):
		_ = t.root.Stop(context.Background())
	}
}

// BenchmarkSessionCall: requests handed to the session actor as the reader
// would, answered by handler actors through the writer actor into a sink.
// It is the runtime's per-request cost without the reader goroutine and
// without pipes. K is the number of requests in flight. One op is one
// request; the allocs include the line itself (1 per op), as the reader
// makes it, and at K=1 the channel the benchmark waits on for each answer.
func BenchmarkSessionCall(b *testing.B) {
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},`
	for _, bc := range []struct {
		name   string
		suffix string // after the id
		k      int
	}{
		{"echo/K=1", `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"}}}`, 1},
		{"echo/K=256", `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"}}}`, 256},
		{"echo-modern/K=256", `,"method":"tools/call","params":{` + modernMeta + `"name":"echo","arguments":{"text":"hello, world"}}}`, 256},
		{"ping/K=1", `,"method":"ping"}`, 1},
		{"ping/K=256", `,"method":"ping"}`, 256},
	} {
		b.Run(bc.name, func(b *testing.B) {
			t := startBenchTree(b, bc.k)
			t.line([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`))
			t.wait(b, 1)
			t.notify([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			b.ReportAllocs()
			g0 := benchGoroutinesCreated()
			b.ResetTimer()
			for i := range b.N {
				line := make([]byte, 0, 24+len(bc.suffix))
				line = append(line, `{"jsonrpc":"2.0","id":`...)
				line = strconv.AppendInt(line, int64(i+1), 10)
				t.line(append(line, bc.suffix...))
			}
			t.wait(b, b.N+1)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(float64(benchGoroutinesCreated()-g0)/float64(b.N), "goroutines/op")
			if t.sink.errors > 0 {
				b.Fatalf("%d error responses", t.sink.errors)
			}
		})
	}
}

// benchGoroutinesCreated counts goroutines started so far by the process.
// Per op it shows how many goroutine starts (and fresh, small stacks) one
// request costs: the actor library starts one each time an idle actor gets
// a message.
func benchGoroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// benchTracer is the sessions' Tracer in startBenchTree (nil: off, as
// BenchmarkSessionCall runs).
var benchTracer *trace.Tracer

// discardSpans is an Exporter that drops every span: what tracing costs
// the session itself, without an exporter's queue.
type discardSpans struct{}

func (discardSpans) Export(*trace.Span) {}

// BenchmarkSessionCallTraced is BenchmarkSessionCall with tracing on: an
// mcp.server span per request, sampled, handed to an exporter that drops
// it (test/bench/RESULTS.md compares the two).
func BenchmarkSessionCallTraced(b *testing.B) {
	benchTracer = &trace.Tracer{Exporter: discardSpans{}, Sampler: trace.AlwaysOn}
	defer func() { benchTracer = nil }()
	BenchmarkSessionCall(b)
}
