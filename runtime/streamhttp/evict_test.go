package streamhttp_test

import (
	"bufio"
	"context"
	"net/http"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/runtime/streamhttp"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// openStream opens sid's GET stream; it stays open until the test ends.
func (f *fixture) openStream(sid string) *http.Response {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(cancel)
	resp := f.send(ctx, "GET", "", map[string]string{"Mcp-Session-Id": sid})
	if resp.StatusCode != 200 {
		f.t.Fatalf("GET stream of %s: %d", sid, resp.StatusCode)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// startCall starts a sleep of ms in sid and returns once the server has
// it (its progress notification came); stop cancels it.
func (f *fixture) startCall(sid string, ms int) (stop func()) {
	f.t.Helper()
	hdr := map[string]string{"Mcp-Session-Id": sid}
	resp := f.send(context.Background(), "POST", `{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"sleep","arguments":{"ms":`+
		strconv.Itoa(ms)+`},"_meta":{"progressToken":"long"}}}`, hdr)
	stop = sync.OnceFunc(func() {
		f.do("POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long"}}`, hdr)
		resp.Body.Close()
	})
	f.t.Cleanup(stop)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "notifications/progress") {
			return stop
		}
	}
	f.t.Fatalf("call in %s: no progress (status %d)", sid, resp.StatusCode)
	return nil
}

// pingStatus is the status of a ping in sid.
func (f *fixture) pingStatus(sid string) int {
	f.t.Helper()
	return f.do("POST", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, map[string]string{"Mcp-Session-Id": sid}).status
}

// TestSessionFlood (issue 21): 2,000 legacy handshakes that are never used
// again, against the default cap of 1,000 sessions. Every one gets a
// session (the idle ones before it are closed to make room), a new client
// is served at once after them, the sessions open and the goroutines stay
// bounded by the cap, and the sessions in use (one with its GET stream
// open, one with a call in flight) are never closed, while the one idle
// the longest is (404).
func TestSessionFlood(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{})
	const limit, flood = 1000, 2 * 1000 // Options.MaxSessions's documented default

	oldest := f.initialize(`{}`)
	streaming := f.initialize(`{}`)
	f.openStream(streaming)
	calling := f.initialize(`{}`)
	f.startCall(calling, 60_000)

	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var refused atomic.Int64
	handshakes := func(n int) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < n; i += 8 {
					r := post(t, c, f.url, initBody, nil)
					if r == nil || r.status != 200 || r.header.Get("Mcp-Session-Id") == "" {
						refused.Add(1)
					}
				}
			})
		}
		wg.Wait()
	}
	// The cap filled, and the goroutines then: what any more sessions
	// may not add to.
	began := time.Now()
	handshakes(limit)
	settled := func() int {
		goruntime.GC()
		return goruntime.NumGoroutine()
	}
	atCap := settled()
	handshakes(flood - limit)
	took := time.Since(began)
	if n := refused.Load(); n > 0 {
		t.Fatalf("%d of %d handshakes refused, with idle sessions to close", n, flood)
	}
	t.Logf("%d handshakes against a cap of %d: %v", flood, limit, took)

	// A new client is served at once.
	sid := f.initialize(`{}`)
	if r := f.do("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		map[string]string{"Mcp-Session-Id": sid}); r.status != 200 || !strings.Contains(string(r.last()["result"]), `"hi"`) {
		t.Fatalf("new client's call after the flood: %d %v", r.status, r.msgs)
	}

	if got := f.pingStatus(oldest); got != http.StatusNotFound {
		t.Errorf("the session idle the longest: ping %d, want 404 (closed for a new one)", got)
	}
	for name, s := range map[string]string{"with its GET stream open": streaming, "with a call in flight": calling} {
		if got := f.pingStatus(s); got != 200 {
			t.Errorf("the session %s: ping %d, want 200 (a session in use is never closed)", name, got)
		}
	}
	st := f.h.Stats()
	// 4 sessions before and after the flood, one new one each handshake.
	if want := uint64(4 + flood - limit); st.Sessions != limit || st.Evicted != want {
		t.Errorf("Stats %+v, want %d sessions open and %d evicted", st, limit, want)
	}
	// The closed sessions' goroutines end: as many as at the cap.
	deadline := time.Now().Add(30 * time.Second)
	for {
		g := settled()
		if g <= atCap+20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines at the cap of %d sessions, %d after %d more handshakes", atCap, limit, g, flood-limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSessionCapInUse: at the cap with every session in use (a GET stream
// open, a call in flight) an initialize gets 503; once one is idle, the
// next initialize closes it and gets a session.
func TestSessionCapInUse(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{MaxSessions: 2})
	streaming := f.initialize(`{}`)
	f.openStream(streaming)
	calling := f.initialize(`{}`)
	stop := f.startCall(calling, 60_000)
	r := f.do("POST", initBody, nil)
	if r.status != http.StatusServiceUnavailable || errCode(r.last()) != -32000 || !strings.Contains(string(r.last()["error"]), "in use") {
		t.Fatalf("initialize with every session in use: %d %s, want 503 and -32000", r.status, r.last()["error"])
	}
	if st := f.h.Stats(); st.Full != 1 {
		t.Errorf("Stats %+v, want 1 initialize refused", st)
	}
	stop()
	// The cancelled call leaves its session idle once its cancellation is
	// through; until then the session is in use.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r = f.do("POST", initBody, nil); r.status == 200 {
			break
		}
		if r.status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("initialize after a session went idle: %d %s", r.status, r.last()["error"])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := f.pingStatus(calling); got != http.StatusNotFound {
		t.Errorf("the session closed for the new one: ping %d, want 404", got)
	}
	if got := f.pingStatus(streaming); got != 200 {
		t.Errorf("the session with its GET stream open: ping %d, want 200", got)
	}
	if st := f.h.Stats(); st.Sessions != 2 || st.Evicted != 1 {
		t.Errorf("Stats %+v, want 2 sessions open and 1 evicted", st)
	}
}
