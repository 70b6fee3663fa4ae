package gateway

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// BenchmarkForward is the gateway's forwarding path without its own
// session: the tools/call method of the gateway's server, as the session
// runs it (a Peer, so the tool's timeout is the session's), with one
// mcprt serve backend, and the result encoded as the session encodes it.
// One call at a time (seq) and many in flight (par: 64 goroutines per
// CPU). Allocations are the gateway's alone: the backend is another
// process.
func BenchmarkForward(b *testing.B) {
	g, err := New(&Config{Backends: []Backend{serve("ref")}}, Options{
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
	m, ok := g.Server().Method("tools/call")
	if !ok {
		b.Fatal("no tools/call")
	}
	// Each way of calling returns the result; its encoding is checked.
	check := func(buf []byte, res any, err error) []byte {
		if err != nil {
			b.Fatal(err)
		}
		buf, err = res.(*mcp.CallToolResult).AppendJSON(buf[:0])
		if err != nil || string(buf) != `{"content":[{"type":"text","text":"hi"}]}` {
			b.Fatalf("%s, %v", buf, err)
		}
		return buf
	}
	const params = `{"name":"ref__echo","arguments":{"text":"hi"}}`
	// run: the call on a handler actor, as the tool's handler runs it.
	run := func(buf []byte) []byte {
		res, err := m.Run(ctx, req("tools/call", params, &peer{}))
		return check(buf, res, err)
	}
	// start: the call as the session makes it when the tool's Start
	// takes it (client.Go), answered on the goroutine that reads the
	// backend.
	if m.Start == nil {
		b.Fatal("tools/call has no Start")
	}
	// Start declines a call while the backend's roots are due (the handler
	// asks the client first, as the session then does): one call through
	// the handler settles them, so start- can run alone (-bench start-).
	run(nil)
	start := func(buf []byte) []byte {
		d := &deferred{done: make(chan struct{})}
		if !m.Start(ctx, req("tools/call", params, &peer{}), d) {
			b.Fatal("Start did not take the call")
		}
		<-d.done
		return check(buf, d.res, d.err)
	}
	for _, way := range []struct {
		name string
		call func([]byte) []byte
	}{{"", run}, {"start-", start}} {
		b.Run(way.name+"seq", func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = way.call(buf)
			}
		})
		b.Run(way.name+"par", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(64)
			b.RunParallel(func(pb *testing.PB) {
				var buf []byte
				for pb.Next() {
					buf = way.call(buf)
				}
			})
		})
	}
}

// deferred is a handlers.Deferred that hands the answer to the benchmark.
type deferred struct {
	res  any
	err  error
	done chan struct{}
}

func (d *deferred) Reply(res any, err error) { d.res, d.err = res, err; close(d.done) }
func (d *deferred) Fallback()                { d.err = errors.New("fallback"); close(d.done) }
