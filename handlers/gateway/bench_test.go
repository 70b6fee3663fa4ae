package gateway

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
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
	call := func(buf []byte) []byte {
		r := req("tools/call", `{"name":"ref__echo","arguments":{"text":"hi"}}`, &peer{})
		res, err := m.Run(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		buf, err = res.(*handlers.CallToolResult).AppendJSON(buf[:0])
		if err != nil || string(buf) != `{"content":[{"type":"text","text":"hi"}]}` {
			b.Fatalf("%s, %v", buf, err)
		}
		return buf
	}
	b.Run("seq", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = call(buf)
		}
	})
	b.Run("par", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(64)
		b.RunParallel(func(pb *testing.PB) {
			var buf []byte
			for pb.Next() {
				buf = call(buf)
			}
		})
	})
	// start: the call as the session makes it when the tool's Start
	// takes it (client.Go), answered on the goroutine that reads the
	// backend.
	if m.Start == nil {
		b.Fatal("tools/call has no Start")
	}
	start := func(buf []byte) []byte {
		r := req("tools/call", `{"name":"ref__echo","arguments":{"text":"hi"}}`, &peer{})
		d := &deferred{done: make(chan struct{})}
		if !m.Start(ctx, r, d) {
			b.Fatal("Start did not take the call")
		}
		<-d.done
		if d.err != nil {
			b.Fatal(d.err)
		}
		buf, err := d.res.(*handlers.CallToolResult).AppendJSON(buf[:0])
		if err != nil || string(buf) != `{"content":[{"type":"text","text":"hi"}]}` {
			b.Fatalf("%s, %v", buf, err)
		}
		return buf
	}
	b.Run("start-seq", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = start(buf)
		}
	})
	b.Run("start-par", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(64)
		b.RunParallel(func(pb *testing.PB) {
			var buf []byte
			for pb.Next() {
				buf = start(buf)
			}
		})
	})
}

// deferred is a handlers.Deferred that hands the answer to the benchmark.
type deferred struct {
	res  any
	err  error
	done chan struct{}
}

func (d *deferred) Reply(res any, err error) { d.res, d.err = res, err; close(d.done) }
func (d *deferred) Fallback()                { d.err = errors.New("fallback"); close(d.done) }
