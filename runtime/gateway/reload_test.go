package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reload adds, removes and restarts backends by their configuration, and
// leaves the others running with their calls in flight.
func TestReload(t *testing.T) {
	g := start(t, serve("one"))
	pidOne := g.state("one").PID
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()

	ch, err := g.Reload(ctx, &Config{Backends: []Backend{serve("one"), serve("two")}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Added, []string{"two"}) || !slices.Equal(ch.Unchanged, []string{"one"}) || ch.Removed != nil || ch.Restarted != nil {
		t.Fatalf("adding two: %+v", ch)
	}
	if s := g.state("two"); s.State != Up || s.Tools == 0 {
		t.Fatalf("two after the reload: %+v", s)
	}
	if got := g.state("one").PID; got != pidOne {
		t.Fatalf("one was restarted (pid %d, then %d)", pidOne, got)
	}
	if got := g.must("tools/call", `{"name":"two__echo","arguments":{"text":"hi two"}}`); !strings.Contains(got, "hi two") {
		t.Fatalf("two__echo: %s", got)
	}
	pidTwo := g.state("two").PID

	// A call in flight to a backend the next reload removes is answered,
	// and names why.
	done := make(chan string, 1)
	go func() {
		got, err := g.run(nil, req("tools/call", `{"name":"two__sleep","arguments":{"ms":60000}}`, nil))
		if err != nil {
			got = err.Error()
		}
		done <- got
	}()
	waitFor(t, "the call to be in flight", func() bool {
		for _, b := range g.all() {
			if b.name == "two" {
				return b.inFlight() > 0
			}
		}
		return false
	})

	// one changes (an environment variable), two goes.
	changed := serve("one")
	changed.Env = append(changed.Env, "MCPRT_RELOAD_TEST=1")
	ch, err = g.Reload(ctx, &Config{Backends: []Backend{changed}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Restarted, []string{"one"}) || !slices.Equal(ch.Removed, []string{"two"}) || ch.Added != nil || ch.Unchanged != nil {
		t.Fatalf("changing one, removing two: %+v", ch)
	}
	select {
	case got := <-done:
		if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `backend \"two\" was stopped`) {
			t.Fatalf("the call in flight to two: %s", got)
		}
	case <-time.After(hang):
		t.Fatal("the call in flight to a removed backend was not answered")
	}
	if st := g.Backends(); len(st) != 1 || st[0].Name != "one" || st[0].State != Up || st[0].PID == pidOne || st[0].PID == 0 {
		t.Fatalf("after the second reload: %+v (one's old pid %d)", st, pidOne)
	}
	for _, pid := range []int{pidOne, pidTwo} {
		if alive(pid) {
			t.Errorf("process %d of a stopped backend is still there", pid)
		}
	}
	tools := g.names("tools/list", "tools", "name")
	if !slices.Contains(tools, "one__echo") || slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "two__") }) {
		t.Fatalf("tools after two was removed: %v", tools)
	}
	if got := g.must("tools/call", `{"name":"one__echo","arguments":{"text":"again"}}`); !strings.Contains(got, "again") {
		t.Fatalf("one__echo after its restart: %s", got)
	}
	g.instrMu.Lock()
	nInstr := len(g.instructions)
	g.instrMu.Unlock()
	if nInstr != 1 {
		t.Errorf("instructions kept for %d backends, want 1", nInstr)
	}

	// A configuration with an error changes nothing.
	pid := g.state("one").PID
	if _, err := g.Reload(ctx, &Config{Backends: []Backend{serve("x"), serve("x")}}); err == nil || !strings.Contains(err.Error(), `two backends are named "x"`) {
		t.Fatalf("a bad configuration: %v", err)
	}
	if st := g.Backends(); len(st) != 1 || st[0].PID != pid {
		t.Fatalf("a refused reload changed the backends: %+v", st)
	}

	// Once closed, Reload refuses.
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Reload(ctx, &Config{Backends: []Backend{serve("one")}}); err != errClosed {
		t.Fatalf("Reload after Close: %v", err)
	}
}

// A name two backends offer goes to the one that was there first; when
// Reload removes it, the other takes the name.
func TestReloadHandsANameOver(t *testing.T) {
	a, b := serve("a"), serve("b")
	a.NoPrefix, b.NoPrefix = true, true
	g := start(t, a, b)
	if o := g.owner('t', "echo"); o != "a" {
		t.Fatalf("echo belongs to %q, want a", o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if _, err := g.Reload(ctx, &Config{Backends: []Backend{b}}); err != nil {
		t.Fatal(err)
	}
	if o := g.owner('t', "echo"); o != "b" {
		t.Fatalf("after a was removed, echo belongs to %q, want b", o)
	}
	if got := g.must("tools/call", `{"name":"echo","arguments":{"text":"via b"}}`); !strings.Contains(got, "via b") {
		t.Fatalf("echo: %s", got)
	}
	// a comes back: it ranks after b now, which keeps the name.
	if _, err := g.Reload(ctx, &Config{Backends: []Backend{a, b}}); err != nil {
		t.Fatal(err)
	}
	if o := g.owner('t', "echo"); o != "b" {
		t.Fatalf("after a came back, echo belongs to %q, want b", o)
	}
}

// A reload that restarts a backend during a burst of calls to it: every
// call gets one answer, its result or an error that names the backend,
// never an unknown tool; the restarted backend then serves.
func TestReloadDuringBurst(t *testing.T) {
	g := start(t, serve("one"))
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	const n = 200
	var wg sync.WaitGroup
	answers := make([]string, n)
	for i := range n {
		wg.Go(func() {
			args := fmt.Sprintf(`{"name":"one__sleep","arguments":{"ms":%d}}`, i)
			if i%2 == 0 {
				args = fmt.Sprintf(`{"name":"one__echo","arguments":{"text":"call %d"}}`, i)
			}
			time.Sleep(time.Duration(i) * time.Millisecond / 2) // spread over the reload
			out, err := g.run(nil, req("tools/call", args, nil))
			if err != nil {
				out = "error: " + err.Error()
			}
			answers[i] = out
		})
	}
	time.Sleep(30 * time.Millisecond)
	changed := serve("one")
	changed.Env = append(changed.Env, "MCPRT_RELOAD_TEST=burst")
	if ch, err := g.Reload(ctx, &Config{Backends: []Backend{changed}}); err != nil || !slices.Equal(ch.Restarted, []string{"one"}) {
		t.Fatalf("Reload: %+v, %v", ch, err)
	}
	wg.Wait()
	ok, told := 0, 0
	for i, a := range answers {
		switch {
		case strings.Contains(a, `"text":"slept"`) || strings.Contains(a, fmt.Sprintf(`"text":"call %d"`, i)):
			ok++
		case strings.Contains(a, `"isError":true`) && strings.Contains(a, `backend \"one\"`) && !strings.Contains(a, "shutting down"):
			told++
		default:
			t.Errorf("call %d: %s", i, a)
		}
	}
	if ok == 0 {
		t.Errorf("no call answered (%d told why not)", told)
	}
	t.Logf("%d answered, %d told the backend was restarting", ok, told)
	if got := g.must("tools/call", `{"name":"one__echo","arguments":{"text":"after"}}`); !strings.Contains(got, "after") {
		t.Fatalf("after the restart: %s", got)
	}
}

// A resource a client follows is followed again by the backend a reload
// restarts, and its updates go on reaching the clients.
func TestReloadKeepsSubscriptions(t *testing.T) {
	g := start(t, conformance("c", "legacy"))
	srv := g.Server()
	ch := updates(t, srv)
	srv.Subscription(watchedURI, true)
	waitFor(t, "the backend to follow the resource", func() bool { return g.state("c").Subscriptions == 1 })
	wantUpdate(t, ch, watchedURI)

	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	changed := conformance("c", "legacy")
	changed.Env = append(changed.Env, "MCPRT_RELOAD_TEST=subscriptions")
	if ch, err := g.Reload(ctx, &Config{Backends: []Backend{changed}}); err != nil || !slices.Equal(ch.Restarted, []string{"c"}) {
		t.Fatalf("Reload: %+v, %v", ch, err)
	}
	waitFor(t, "the restarted backend to follow the resource", func() bool { return g.state("c").Subscriptions == 1 })
	wantUpdate(t, ch, watchedURI) // told it may have changed meanwhile
	g.must("tools/call", `{"name":"c__test_update_watched_resource","arguments":{}}`)
	wantUpdate(t, ch, watchedURI)
}

// TestForwardedRequestHasItsBackendsTimeout: a prompt, resource or
// completion request forwarded to a backend has its deadline set from
// that backend's Timeout, as its tool calls do, and not from the runtime's
// RequestTimeout (which a backend added by a reload may outlast).
func TestForwardedRequestHasItsBackendsTimeout(t *testing.T) {
	one := serve("one")
	one.Timeout = 7 * time.Minute
	g := start(t, one)
	p := &peer{recordTimeouts: true}
	if _, err := g.run(nil, req("resources/read", `{"uri":"mcprt://reference/readme"}`, p)); err != nil {
		t.Fatal(err)
	}
	two := serve("two")
	two.Timeout = 9 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if _, err := g.Reload(ctx, &Config{Backends: []Backend{one, two}}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.run(nil, req("prompts/get", `{"name":"two__review","arguments":{"code":"x := 1"}}`, p)); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{7*time.Minute + toolMargin, 9*time.Minute + toolMargin}
	if got := p.timeouts; !slices.Equal(got, want) {
		t.Errorf("deadlines set: %v, want %v", got, want)
	}
}
