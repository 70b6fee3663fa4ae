package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOnCall: every tool call forwarded is told to Options.OnCall once,
// whichever way it went (through a handler or started from the session),
// and however it ended: a result, an isError result, a call its client
// cancelled.
func TestOnCall(t *testing.T) {
	var mu sync.Mutex
	var recs []CallRecord
	g := unstarted(t, Options{OnCall: func(r CallRecord) {
		mu.Lock()
		defer mu.Unlock()
		recs = append(recs, r)
	}}, serve("one"))
	g.start()
	// The first call is forwarded by a handler (the client's roots are
	// asked first); the second is started as the session starts it
	// (Method.Start), and answered from the goroutine reading the backend.
	if got, err := g.run(nil, req("tools/call", `{"name":"one__echo","arguments":{"text":"a"}}`, &peer{})); err != nil || !strings.Contains(got, `"text":"a"`) {
		t.Fatalf("echo a: %s %v", got, err)
	}
	m, _ := g.Server().Method("tools/call")
	d := &deferred{done: make(chan struct{})}
	if !m.Start(context.Background(), req("tools/call", `{"name":"one__echo","arguments":{"text":"b"}}`, &peer{}), d) {
		t.Fatal("Start did not take the call")
	}
	<-d.done
	if d.err != nil {
		t.Fatalf("echo b, started: %v", d.err)
	}
	if got, err := g.run(nil, req("tools/call", `{"name":"one__add","arguments":{"a":"x"}}`, nil)); err == nil && !strings.Contains(got, `"isError":true`) {
		t.Fatalf("add with a bad argument: %s", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.run(ctx, req("tools/call", `{"name":"one__sleep","arguments":{"ms":60000}}`, nil))
	}()
	waitFor(t, "the sleep to be in flight", func() bool { return g.Gateway.all()[0].inFlight() == 1 })
	cancel()
	<-done
	waitFor(t, "four records", func() bool { mu.Lock(); defer mu.Unlock(); return len(recs) >= 4 })
	time.Sleep(50 * time.Millisecond) // a fifth, wrongly, would have come by now
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 4 {
		t.Fatalf("records: %+v, want 4", recs)
	}
	for i, want := range []struct {
		tool   string
		failed bool
	}{{"echo", false}, {"echo", false}, {"add", true}, {"sleep", true}} {
		r := recs[i]
		if r.Backend != "one" || r.Tool != want.tool || (r.IsError || r.Err != nil) != want.failed || r.Took <= 0 {
			t.Errorf("record %d: %+v, want tool %s failed %v", i, r, want.tool, want.failed)
		}
	}
}
