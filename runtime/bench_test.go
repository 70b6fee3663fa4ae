package runtime_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
)

// benchServer has the reference server's echo tool.
func benchServer() *handlers.Server {
	s := handlers.NewServer(mcp.Implementation{Name: "bench", Version: "1"}, "")
	s.AddTool(handlers.Tool{
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
	return s
}

// benchClient is an embedded server over io.Pipe and the client end of it.
type benchClient struct {
	inst *runtime.Instance
	in   *io.PipeWriter
	out  *io.PipeReader
	br   *bufio.Reader
}

func startBenchClient(b *testing.B) *benchClient {
	b.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	inst, err := runtime.Start(e, benchServer(), inR, outW, runtime.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	c := &benchClient{inst: inst, in: inW, out: outR, br: bufio.NewReaderSize(outR, 64<<10)}
	b.Cleanup(func() {
		inW.Close() // stdin EOF: the server drains and ends
		// Keep reading so a late write cannot block the drain.
		go io.Copy(io.Discard, outR)
		select {
		case <-inst.Done():
		case <-time.After(10 * time.Second): // only turns a hang into a failure
			b.Error("the server did not end after stdin EOF")
		}
		outW.Close()
	})
	return c
}

func (c *benchClient) handshake(b *testing.B) {
	b.Helper()
	c.send(b, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"))
	if line := c.read(b); !bytes.Contains(line, []byte(`"protocolVersion"`)) {
		b.Fatalf("initialize: %s", line)
	}
}

func (c *benchClient) send(b *testing.B, p []byte) {
	if _, err := c.in.Write(p); err != nil {
		b.Fatal(err)
	}
}

func (c *benchClient) read(b *testing.B) []byte {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		b.Fatalf("reading a response: %v", err)
	}
	return line
}

// roundTrips runs b.N requests with k in flight at all times: a reader
// goroutine counts responses and hands their number back to the writing
// loop, which answers every batch with as many new requests in one write.
// It checks every response is a result; request builds request i into dst.
func (c *benchClient) roundTrips(b *testing.B, k int, request func(dst []byte, id int) []byte) {
	got := make(chan int, k)
	readErr := make(chan error, 1)
	g0 := benchGoroutinesCreated()
	b.ResetTimer()
	go func() {
		for n := 0; n < b.N; n++ {
			line, err := c.br.ReadSlice('\n')
			if err == nil && !bytes.Contains(line, []byte(`"result":`)) {
				err = fmt.Errorf("not a result: %s", line)
			}
			if err != nil {
				readErr <- err
				return
			}
			got <- 1
		}
		readErr <- nil
	}()
	var buf []byte
	sent := 0
	batch := min(k, b.N)
	for sent < b.N {
		buf = buf[:0]
		for range batch {
			sent++
			buf = request(buf, sent)
		}
		c.send(b, buf)
		if sent == b.N {
			break
		}
		// Wait for at least one answer, then take all that are in.
		select {
		case <-got:
		case err := <-readErr:
			b.Fatal(err)
		}
		batch = 1
	more:
		for {
			select {
			case <-got:
				batch++
			default:
				break more
			}
		}
		batch = min(batch, b.N-sent)
	}
	if err := <-readErr; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(benchGoroutinesCreated()-g0-1)/float64(b.N), "goroutines/op")
}

// BenchmarkRuntime: round trips through runtime.Start over io.Pipe, the
// whole embedded tree (reader, session, handler actors, writer). One op is
// one request; K is the number in flight. allocs/op are the server's (the
// client reuses its buffers).
func BenchmarkRuntime(b *testing.B) {
	echo := func(dst []byte, id int) []byte {
		dst = append(dst, `{"jsonrpc":"2.0","id":`...)
		dst = strconv.AppendInt(dst, int64(id), 10)
		return append(dst, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"}}}`+"\n"...)
	}
	ping := func(dst []byte, id int) []byte {
		dst = append(dst, `{"jsonrpc":"2.0","id":`...)
		dst = strconv.AppendInt(dst, int64(id), 10)
		return append(dst, `,"method":"ping"}`+"\n"...)
	}
	for _, bc := range []struct {
		name string
		k    int
		req  func([]byte, int) []byte
	}{
		{"echo/K=1", 1, echo},
		{"echo/K=16", 16, echo},
		{"echo/K=256", 256, echo},
		{"ping/K=1", 1, ping},
		{"ping/K=256", 256, ping},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := startBenchClient(b)
			c.handshake(b)
			b.ReportAllocs()
			c.roundTrips(b, bc.k, bc.req)
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
