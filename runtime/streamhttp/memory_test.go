package streamhttp_test

import (
	"net/http/httptest"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkSessionMemory measures what a legacy session costs while it
// sits between requests: n sessions are opened and each makes two
// tools/calls, then the heap, the goroutine stacks and the goroutines are
// read and divided by n. These are the figures behind the Streamable HTTP
// peak-memory row of test/bench/RESULTS.md: with K clients each holding a
// session, K of these are live at every moment, and the collector lets
// the heap grow by as much again before it runs. b.N is not used: run it
// with -benchtime=1x. SESSION_HEAP_PROFILE=FILE (with -memprofilerate 1)
// writes the heap profile at the moment of the reading, sessions alive.
func BenchmarkSessionMemory(b *testing.B) {
	const n = 256
	p := benchHandler(b)
	post := func(body string, hdr map[string]string) *httptest.ResponseRecorder { return p(body, hdr, nil) }
	open := func() {
		w := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`, nil)
		sid := w.Header().Get("Mcp-Session-Id")
		if w.Code != 200 || sid == "" {
			b.Fatalf("initialize: %d", w.Code)
		}
		hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
		for i := 2; i < 4; i++ {
			w = post(`{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"}}}`, hdr)
			if w.Code != 200 || !strings.Contains(w.Body.String(), "hello, world") {
				b.Fatalf("tools/call: %d %s", w.Code, w.Body)
			}
		}
	}
	open() // the first session starts what all share
	read := func() (heap, stack uint64, gs int) {
		for range 3 {
			goruntime.GC()
		}
		time.Sleep(50 * time.Millisecond) // idle reports and stops settle
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		return ms.HeapAlloc, ms.StackInuse, goruntime.NumGoroutine()
	}
	heap0, stack0, gs0 := read()
	for range n {
		open()
	}
	heap1, stack1, gs1 := read()
	if f := os.Getenv("SESSION_HEAP_PROFILE"); f != "" {
		out, _ := os.Create(f)
		pprof.Lookup("heap").WriteTo(out, 0)
		out.Close()
	}
	b.ReportMetric(float64(heap1-heap0)/n, "heap-B/session")
	b.ReportMetric(float64(stack1-stack0)/n, "stack-B/session")
	b.ReportMetric(float64(gs1-gs0)/n, "goroutines/session")
}
