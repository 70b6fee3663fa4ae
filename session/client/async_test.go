//go:build unix

package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// answers is an Answerer that records each answer; it fails the test if
// it is answered twice.
type answers chan answer

type answer struct {
	raw json.RawMessage
	err error
}

func (a answers) Answer(raw json.RawMessage, err error) {
	select {
	case a <- answer{raw, err}:
	default:
		panic("answered twice")
	}
}

func (a answers) wait(t *testing.T) answer {
	t.Helper()
	select {
	case r := <-a:
		return r
	case <-time.After(hangTimeout):
		t.Fatal("no answer")
	}
	return answer{}
}

// vouched is an Answerer that vouches for its params (the gateway's
// way, which Go asserts without naming it).
type vouched struct{ answers }

func (vouched) ParamsChecked() bool { return true }

// TestGoVouchedParams: params whose Answerer vouches for them go out as
// they are and are answered as any others; pretty-printed ones still
// reach the server on one line.
func TestGoVouchedParams(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{}))
	for _, params := range []string{
		`{"name":"echo","arguments":{"text":"hi"}}`,
		"{\"name\":\"echo\",\"arguments\":{\n  \"text\": \"hi\"\r\n}}",
	} {
		a := vouched{make(answers, 1)}
		if _, err := c.Go("tools/call", json.RawMessage(params), a); err != nil {
			t.Fatalf("Go %q: %v", params, err)
		}
		if r := a.wait(t); r.err != nil || !strings.Contains(string(r.raw), `"hi"`) {
			t.Errorf("%q: answered %s, %v", params, r.raw, r.err)
		}
	}
}

// TestGo: a request sent with Go is answered once through its Answerer:
// with the raw result, the server's error, its timeout, Abandon (the
// server then hears notifications/cancelled), input_required in
// 2026-07-28, or the end of the session.
func TestGo(t *testing.T) {
	t.Parallel()
	cmd, log := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{}))
	call := func(name string, opts ...client.CallOption) (int64, answers) {
		t.Helper()
		a := make(answers, 1)
		id, err := c.Go("tools/call", json.RawMessage(`{"name":"`+name+`","arguments":{"text":"hi"}}`), a, opts...)
		if err != nil {
			t.Fatalf("Go %s: %v", name, err)
		}
		return id, a
	}

	_, a := call("echo")
	if r := a.wait(t); r.err != nil || string(r.raw) != `{"content":[{"text":"hi","type":"text"}]}` {
		t.Errorf("echo: %s %v", r.raw, r.err)
	}
	_, a = call("nosuch")
	var re *client.RPCError
	if r := a.wait(t); !errors.As(r.err, &re) || re.Err.Code != -32602 {
		t.Errorf("unknown tool: %v", r.err)
	}
	_, a = call("hang", client.WithTimeout(100*time.Millisecond))
	if r := a.wait(t); !errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("hang past its timeout: %v", r.err)
	}
	var progress []float64
	a = make(answers, 1)
	if _, err := c.Go("tools/call", json.RawMessage(`{"name":"progress"}`), a,
		client.WithProgress(func(p client.Progress) { progress = append(progress, p.Progress) })); err != nil {
		t.Fatal(err)
	}
	if r := a.wait(t); r.err != nil || len(progress) != 3 {
		t.Errorf("progress: %s %v, progress %v", r.raw, r.err, progress)
	}

	id, a := call("hang", client.WithTimeout(time.Hour))
	eventually(t, "the hung call to reach the server", func() bool {
		for _, m := range sent(t, log) {
			if m.Method == "tools/call" && string(m.ID) == jsonID(id) {
				return true
			}
		}
		return false
	})
	c.Abandon(id, "not needed")
	if r := a.wait(t); !errors.Is(r.err, context.Canceled) {
		t.Errorf("abandoned: %v", r.err)
	}
	c.Abandon(id, "again") // answered already: nothing more
	eventually(t, "notifications/cancelled for the abandoned call", func() bool {
		for _, m := range sent(t, log) {
			if m.Method == "notifications/cancelled" && strings.Contains(string(m.Params), `"requestId":`+jsonID(id)) {
				return true
			}
		}
		return false
	})

	_, hung := call("hang", client.WithTimeout(time.Hour))
	_, crash := call("crash")
	var ee *client.ExitError
	for _, a := range []answers{hung, crash} {
		if r := a.wait(t); !errors.As(r.err, &ee) || ee.Code != 3 {
			t.Errorf("when the server crashed: %v", r.err)
		}
	}
	if _, err := c.Go("tools/call", json.RawMessage(`{"name":"echo"}`), make(answers, 1)); !errors.As(err, &ee) {
		t.Errorf("Go after the crash: %v", err)
	}
}

// TestGoModern: a 2026-07-28 result is passed on as it came when it is
// complete; input_required is mcp.ErrInputRequired, for Call to handle.
func TestGoModern(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "modern")
	c := connect(t, cmd, opts(client.Options{}))
	a := make(answers, 1)
	if _, err := c.Go("tools/call", json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`), a); err != nil {
		t.Fatal(err)
	}
	if r := a.wait(t); r.err != nil || !strings.Contains(string(r.raw), `"text":"hi"`) {
		t.Errorf("echo: %s %v", r.raw, r.err)
	}
	if _, err := c.Go("tools/call", json.RawMessage(`{"name":"ask"}`), a); err != nil {
		t.Fatal(err)
	}
	if r := a.wait(t); !errors.Is(r.err, mcp.ErrInputRequired) {
		t.Errorf("ask: %s %v", r.raw, r.err)
	}
}

func jsonID(id int64) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// TestGoManyInFlight: thousands of requests in flight at once (the
// pending ring grows past its first size many times over) are each
// answered once with their own result; thousands more that the server
// never answers all fail once the client closes.
func TestGoManyInFlight(t *testing.T) {
	t.Parallel()
	const n = 3000
	cmd, _ := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{}))
	as := make([]answers, n)
	for i := range as {
		as[i] = make(answers, 1)
		if _, err := c.Go("tools/call", json.RawMessage(fmt.Sprintf(`{"name":"echo","arguments":{"text":"m%d"}}`, i)), as[i]); err != nil {
			t.Fatalf("Go %d: %v", i, err)
		}
	}
	for i, a := range as {
		if r := a.wait(t); r.err != nil || !strings.Contains(string(r.raw), fmt.Sprintf(`"m%d"`, i)) {
			t.Fatalf("request %d: answered %s, %v", i, r.raw, r.err)
		}
	}

	for i := range as {
		if _, err := c.Go("tools/call", json.RawMessage(`{"name":"hang"}`), as[i]); err != nil {
			t.Fatalf("Go %d: %v", i, err)
		}
	}
	c.Close()
	for i, a := range as {
		if r := a.wait(t); !errors.Is(r.err, client.ErrClosed) {
			t.Fatalf("request %d after Close: answered %s, %v; want ErrClosed", i, r.raw, r.err)
		}
	}
}
