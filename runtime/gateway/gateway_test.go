package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/handlers"
)

// Two reference servers behind one gateway: one view of both, prefixed,
// and every kind of request routed to the backend that offers it.
func TestOneViewOfTwoBackends(t *testing.T) {
	hidden := serve("two")
	hidden.AllowTools = []string{"echo", "add", "sleep", "s*"}
	hidden.HideTools = []string{"panic", "slow-*"}
	g := start(t, serve("one"), hidden)
	for _, s := range g.Backends() {
		if s.State != Up || s.PID == 0 || s.Tools == 0 {
			t.Fatalf("after Start: %+v", s)
		}
	}

	tools := g.names("tools/list", "tools", "name")
	for _, want := range []string{"one__echo", "one__add", "one__panic", "one__slow-timeout", "two__echo", "two__sleep"} {
		if !slices.Contains(tools, want) {
			t.Errorf("tools/list lacks %s: %v", want, tools)
		}
	}
	// The first lists come in the configuration's order, whichever
	// backend was up first.
	if i, j := slices.IndexFunc(tools, func(n string) bool { return strings.HasPrefix(n, "two__") }), slices.Index(tools, "one__slow-timeout"); i < j {
		t.Errorf("tools/list is not in the configuration's order: %v", tools)
	}
	for _, hiddenTool := range []string{"two__panic", "two__slow-timeout", "two__work", "two__print"} {
		if slices.Contains(tools, hiddenTool) {
			t.Errorf("tools/list shows the hidden %s", hiddenTool)
		}
	}
	if prompts := g.names("prompts/list", "prompts", "name"); !slices.Contains(prompts, "one__review") || !slices.Contains(prompts, "two__review") {
		t.Errorf("prompts/list: %v", prompts)
	}
	// Both backends list the same URIs: the first in the configuration
	// keeps them.
	resources := g.names("resources/list", "resources", "name")
	if !slices.Contains(resources, "one__readme") || slices.Contains(resources, "two__readme") {
		t.Errorf("resources/list: %v", resources)
	}
	if templates := g.names("resources/templates/list", "resourceTemplates", "uriTemplate"); !slices.Contains(templates, "mcprt://reference/greeting/{name}") {
		t.Errorf("resources/templates/list: %v", templates)
	}

	if got := g.must("tools/call", `{"name":"one__echo","arguments":{"text":"hi one"}}`); got != `{"content":[{"type":"text","text":"hi one"}]}` {
		t.Errorf("one__echo: %s", got)
	}
	if got := g.must("tools/call", `{"name":"two__add","arguments":{"a":2,"b":3}}`); !strings.Contains(got, `"structuredContent":{"sum":5}`) {
		t.Errorf("two__add: %s", got)
	}
	// The backend validates the arguments: its answer comes back as is.
	if got := g.must("tools/call", `{"name":"two__echo","arguments":{}}`); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "text") {
		t.Errorf("two__echo without text: %s", got)
	}
	// A panicking tool of the backend is its tool error.
	if got := g.must("tools/call", `{"name":"one__panic"}`); !strings.Contains(got, `"isError":true`) {
		t.Errorf("one__panic: %s", got)
	}
	if got := g.must("resources/read", `{"uri":"mcprt://reference/greeting/Ada"}`); !strings.Contains(got, "Ada") {
		t.Errorf("read greeting: %s", got)
	}
	if got := g.must("resources/read", `{"uri":"mcprt://reference/pixel.png"}`); !strings.Contains(got, `"blob":"`) {
		t.Errorf("read pixel: %s", got)
	}
	if got := g.must("prompts/get", `{"name":"two__review","arguments":{"code":"x := 1"}}`); !strings.Contains(got, "x := 1") {
		t.Errorf("two__review: %s", got)
	}
	if got := g.must("completion/complete", `{"ref":{"type":"ref/resource","uri":"mcprt://reference/greeting/{name}"},"argument":{"name":"name","value":""}}`); !strings.Contains(got, `"values":[`) || strings.Contains(got, `"values":[]`) {
		t.Errorf("complete greeting: %s", got)
	}
}

// Progress and log messages of a forwarded call reach the client through
// the gateway's request.
func TestProgressAndLogsTravelBack(t *testing.T) {
	g := start(t, serve("one"))
	p := &peer{}
	r := req("tools/call", `{"name":"one__sleep","arguments":{"ms":300}}`, p)
	r.ProgressToken = json.RawMessage(`"tok"`)
	if got, err := g.run(nil, r); err != nil || !strings.Contains(got, "slept") {
		t.Fatalf("sleep: %s %v", got, err)
	}
	progress := 0
	for _, n := range p.notifications() {
		if strings.HasPrefix(n, `notifications/progress {"progressToken":"tok"`) {
			progress++
		}
	}
	if progress == 0 {
		t.Errorf("no progress came back: %q", p.notifications())
	}

	p = &peer{}
	if got, err := g.run(nil, req("tools/call", `{"name":"one__log","arguments":{"levels":["info","error"],"message":"from one"}}`, p)); err != nil || !strings.Contains(got, `"sent":2`) {
		t.Fatalf("log: %s %v", got, err)
	}
	logs := 0
	for _, n := range p.notifications() {
		if strings.HasPrefix(n, "notifications/message") && strings.Contains(n, "from one") && strings.Contains(n, `"logger":"one/reference"`) {
			logs++
		}
	}
	if logs != 2 {
		t.Errorf("log messages: %q", p.notifications())
	}
}

// Cancelling the client's request (its context) ends the backend's call
// at once.
func TestCancellationEndsTheCall(t *testing.T) {
	g := start(t, serve("one"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		got, err := g.run(ctx, req("tools/call", `{"name":"one__sleep","arguments":{"ms":60000}}`, nil))
		if err == nil && !strings.Contains(got, "context canceled") {
			err = fmt.Errorf("answer %s", got)
		}
		done <- err
	}()
	waitFor(t, "the call to be in flight", func() bool { return g.Gateway.all()[0].inFlight() > 0 })
	cancel()
	// The session drops the answer of a cancelled request; what matters
	// is that the gateway gave up at once (the backend was sent
	// notifications/cancelled: see the end-to-end tests).
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A backend's list_changed changes the gateway's lists, reported once per
// change.
func TestBackendListChanged(t *testing.T) {
	for _, protocol := range []string{"modern", "legacy"} {
		t.Run(protocol, func(t *testing.T) { testBackendListChanged(t, protocol) })
	}
}

// testBackendListChanged: in the legacy era list_changed comes unasked; in
// 2026-07-28 on the gateway's subscriptions/listen stream.
func testBackendListChanged(t *testing.T, protocol string) {
	dyn := dynamic("dyn")
	dyn.Protocol = protocol
	g := start(t, dyn, serve("ref"))
	var mu sync.Mutex
	changes := 0
	g.Server().Watch(func(c handlers.Change) {
		if c.Kind == handlers.ToolsChanged {
			mu.Lock()
			changes++
			mu.Unlock()
		}
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return changes
	}
	if got := g.must("tools/call", `{"name":"dyn__grow"}`); !strings.Contains(got, "added extra-1") {
		t.Fatalf("grow: %s", got)
	}
	waitFor(t, "dyn__extra-1 to be listed", func() bool { return slices.Contains(g.names("tools/list", "tools", "name"), "dyn__extra-1") })
	if got := g.must("tools/call", `{"name":"dyn__extra-1"}`); !strings.Contains(got, "I am extra-1") {
		t.Errorf("the new tool: %s", got)
	}
	g.must("tools/call", `{"name":"dyn__grow"}`)
	waitFor(t, "dyn__extra-2", func() bool { return slices.Contains(g.names("tools/list", "tools", "name"), "dyn__extra-2") })
	g.must("tools/call", `{"name":"dyn__shrink"}`)
	waitFor(t, "the extras to go", func() bool {
		tools := g.names("tools/list", "tools", "name")
		return !slices.Contains(tools, "dyn__extra-1") && !slices.Contains(tools, "dyn__extra-2")
	})
	if n := count(); n < 3 || n > 6 {
		t.Errorf("%d changes reported for three changes of the backend's list", n)
	}
	if tools := g.names("tools/list", "tools", "name"); !slices.Contains(tools, "ref__echo") || !slices.Contains(tools, "dyn__grow") {
		t.Errorf("after the changes: %v", tools)
	}
}

// TestBackendInstructions: the gateway's instructions are its own
// followed by each backend's, under the backend's name and prefix, in the
// configuration's order; a backend without instructions adds nothing.
func TestBackendInstructions(t *testing.T) {
	d2 := dynamic("two")
	d2.NoPrefix = true
	g := unstarted(t, Options{Instructions: "Tools of three servers."}, dynamic("one"), serve("plain"), d2)
	g.start()
	got := g.Server().Instructions()
	parts := []string{
		"Tools of three servers.\n\n## one (its tools and prompts are named one__…)\n\nCall grow to add a tool.\n\n",
		"## plain (its tools and prompts are named plain__…)\n\nReference server of the mcprt runtime",
		"\n\n## two\n\nCall grow to add a tool.",
	}
	at := 0
	for _, p := range parts {
		i := strings.Index(got[at:], p)
		if i < 0 || at == 0 && i != 0 {
			t.Fatalf("instructions:\n%s\nlack, in order:\n%s", got, p)
		}
		at += i + len(p)
	}
	if at != len(got) {
		t.Errorf("instructions end with more than two's: %q", got[at:])
	}
}
