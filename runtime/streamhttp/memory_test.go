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

	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/session"
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

// An idle session lets go of a large request once it is answered, not at
// its next request: the session's tables hold a call, and the call its
// request, until the session hears that the call's worker is done, and
// that news used to wait for the session's next message. Each idle client
// could keep up to MaxBodyBytes in memory that way until something woke
// its session: the call's deadline at the latest (RequestTimeout, here an
// hour, so that only the fix can pass). Small requests still wait (no
// wake-up per request for a few hundred bytes).
func TestIdleSessionLetsGoOfLargeRequest(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{Options: session.Options{RequestTimeout: time.Hour}})
	const n, size = 8, 1 << 20
	text := strings.Repeat("x", size)
	heap := func() int64 {
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	sids := make([]string, n)
	for i := range sids {
		sids[i] = f.initialize(`{}`)
	}
	before := heap()
	for _, sid := range sids {
		r := f.do("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+text+`"}}}`,
			map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
		if r.status != 200 || len(r.last()["result"]) < size {
			t.Fatalf("echo of %d bytes: status %d", size, r.status)
		}
	}
	// The sessions stay open and send nothing more: what they still hold
	// must be far less than one request each. (Polled: the session
	// forgets the call as soon as it has taken its worker's report.)
	var held int64
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if held = heap() - before; held < n*size/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle sessions still hold %d KiB after answering a %d KiB request each", n, held>>10, size>>10)
		}
	}
	t.Logf("heap %+d KiB with %d idle sessions after a %d KiB request each", held>>10, n, size>>10)
}
