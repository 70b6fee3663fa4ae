package streamhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// TestProofManySessions: 100 legacy sessions at once, 100 calls each, one
// in ten of them to a tool that panics. Every call is answered exactly once
// (a panic as a tool error), and once the handler is shut down and the
// connections closed no goroutine is left behind.
func TestProofManySessions(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 calls")
	}
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	// The engine's own goroutines are there before and after.
	<-e.Poison(e.SpawnFunc(func(*actor.Context) {}, "warmup")).Done()
	before := goruntime.NumGoroutine()

	h, err := streamhttp.New(e, testServer(nil), streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	tr := &http.Transport{MaxIdleConnsPerHost: 100}
	client := &http.Client{Transport: tr}
	f := &fixture{t: t, h: h, url: ts.URL}

	const sessions, calls = 100, 100
	var answered, panics atomic.Int64
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			sid := initializeWith(t, client, f.url)
			if sid == "" {
				return
			}
			for c := range calls {
				id := fmt.Sprintf(`"s%d-%d"`, s, c)
				tool, args := "echo", fmt.Sprintf(`{"text":%s}`, id)
				if c%10 == 0 {
					tool, args = "panic", `{}`
				}
				r := post(t, client, f.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`,
					map[string]string{"Mcp-Session-Id": sid})
				if r == nil {
					return
				}
				if len(r.msgs) != 1 || string(r.last()["id"]) != id {
					t.Errorf("%s: %d answers %v", id, len(r.msgs), r.msgs)
					continue
				}
				res := string(r.last()["result"])
				switch {
				case tool == "panic" && strings.Contains(res, `"isError":true`):
					panics.Add(1)
				case tool == "echo" && strings.Contains(res, `"text":`+id):
				default:
					t.Errorf("%s (%s): %v", id, tool, r.msgs)
				}
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	if answered.Load() != sessions*calls || panics.Load() != sessions*calls/10 {
		t.Fatalf("answered %d of %d, %d panics", answered.Load(), sessions*calls, panics.Load())
	}

	ts.Close()
	tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	var after int
	deadline := time.Now().Add(20 * time.Second)
	for {
		after = goruntime.NumGoroutine()
		if after <= before || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after shutdown:\n%s", before, after, buf[:goruntime.Stack(buf, true)])
	}
}

// TestProofUnreadStream: a client that opens a stream and never reads it
// cannot make the server hold more than a bounded number of messages for
// it: a tool that sends 200,000 progress notifications to such a client
// raises the heap by far less than those notifications take.
func TestProofUnreadStream(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "flood", Version: "1"}, "")
	sent := make(chan struct{})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "flood"}}, func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		pad := strings.Repeat("x", 200)
		for i := 1; i <= 200_000; i++ {
			req.Progress(float64(i), 0, pad)
		}
		close(sent)
		return mcp.TextResult("done"), nil
	})
	f := start(t, srv, streamhttp.Options{})
	sid := f.initialize(`{}`)

	var ms goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	base := ms.HeapAlloc

	req, _ := http.NewRequest("POST", f.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","_meta":{"progressToken":1}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // never read
	select {
	case <-sent:
	case <-time.After(60 * time.Second):
		t.Fatal("the tool did not finish sending")
	}
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	// 200,000 notifications of ~300 bytes are 60 MB; what is kept for the
	// client is bounded by the exchange's queue and the socket's buffers.
	if grew := int64(ms.HeapAlloc) - int64(base); grew > 8<<20 {
		t.Fatalf("heap grew by %d MiB for a client that does not read", grew>>20)
	}
}

func initializeWith(t *testing.T, c *http.Client, url string) string {
	r := post(t, c, url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}`, nil)
	if r == nil || r.status != 200 {
		t.Errorf("initialize: %v", r)
		return ""
	}
	sid := r.header.Get("Mcp-Session-Id")
	if post(t, c, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid}) == nil {
		return ""
	}
	return sid
}

func post(t *testing.T, c *http.Client, url, body string, hdr map[string]string) *reply {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	return readReply(t, resp)
}
