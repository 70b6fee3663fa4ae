package stdio_test

import (
	"bytes"
	"fmt"
	"github.com/mcprt/mcprt/stdio/wire"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/stdio"
)

// benchLines is an io.Reader of n copies of line, handed out in the sizes a
// pipe gives (at most 64 KiB per Read), so one benchmark op is one line.
type benchLines struct {
	line []byte
	n    int // copies left, the current one included
	off  int // offset in the current copy
}

func (r *benchLines) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(len(p), 64<<10)]
	total := 0
	for len(p) > 0 && r.n > 0 {
		c := copy(p, r.line[r.off:])
		p, total, r.off = p[c:], total+c, r.off+c
		if r.off == len(r.line) {
			r.off = 0
			r.n--
		}
	}
	return total, nil
}

// benchEchoLine is a tools/call echo request line of about size bytes.
func benchEchoLine(size int, crlf bool) []byte {
	head := `{"jsonrpc":"2.0","id":123456,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`
	tail := `"}}}`
	text := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz"), max(size-len(head)-len(tail), 2)/26+1)
	text = text[:max(size-len(head)-len(tail), 2)]
	line := append(append([]byte(head), text...), tail...)
	if crlf {
		return append(line, '\r', '\n')
	}
	return append(line, '\n')
}

// BenchmarkReadLines: one op is one input line, from a reader that hands
// out 64 KiB per Read like a pipe. Typical requests are ~100 bytes; the
// 64 KiB and 1 MiB lines span reader buffers and take the slow path.
func BenchmarkReadLines(b *testing.B) {
	for _, bc := range []struct {
		name string
		line []byte
	}{
		{"100B", benchEchoLine(100, false)},
		{"100B-crlf", benchEchoLine(100, true)},
		{"4KiB", benchEchoLine(4<<10, false)},
		{"64KiB", benchEchoLine(64<<10, false)},
		{"1MiB", benchEchoLine(1<<20, false)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.line)))
			r := &benchLines{line: bc.line, n: b.N}
			lines := 0
			b.ResetTimer()
			err := stdio.ScanLines(r, 0, func([]byte) bool {
				lines++
				return true
			}, func(t stdio.LineTooLong) bool {
				b.Fatalf("unexpected %+v", t)
				return false
			})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if lines != b.N {
				b.Fatalf("%d lines read, want %d", lines, b.N)
			}
		})
	}
}

// benchCountingWriter counts what the writer actor writes and signals when
// the expected number of messages has gone out.
type benchCountingWriter struct {
	writes, lines int
	want          int
	done          chan struct{}
}

func (w *benchCountingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.lines += bytes.Count(p, []byte{'\n'})
	if w.lines == w.want {
		close(w.done)
	}
	return len(p), nil
}

// benchResponse is a typical tools/call response, as the session builds it.
var benchResponse = []byte(`{"jsonrpc":"2.0","id":123456,"result":{"content":[{"type":"text","text":"hello, world"}]}}`)

// BenchmarkWriter: messages per second through the writer actor into a
// writer that discards. Each message is allocated as producers do (one
// spare byte for the '\n'), which is 1 of the allocs/op. "writes/msg" shows
// how well the actor coalesces: 1 means one write(2) per message.
func BenchmarkWriter(b *testing.B) {
	for _, senders := range []int{1, 8} {
		b.Run(fmt.Sprintf("senders=%d", senders), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(benchResponse) + 1))
			e, err := actor.NewEngine(actor.NewEngineConfig())
			if err != nil {
				b.Fatal(err)
			}
			w := &benchCountingWriter{want: b.N, done: make(chan struct{})}
			pid := e.Spawn(stdio.NewWriter(w, nil), "writer")
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range senders {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						d := make([]byte, len(benchResponse), len(benchResponse)+1)
						copy(d, benchResponse)
						e.Send(pid, wire.Out{Data: d})
					}
				})
			}
			wg.Wait()
			<-w.done
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(float64(w.writes)/float64(b.N), "writes/msg")
			<-e.Poison(pid).Done()
		})
	}
}
