//go:build unix

package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// TestAppendRequest: the request line is the params as given with the
// client's members spliced in: extra members in place of the same keys,
// meta in params._meta in place of the same keys there, and no params at
// all when they end up empty.
func TestAppendRequest(t *testing.T) {
	meta := []member{{"progressToken", json.RawMessage(`7`)}, {"k", json.RawMessage(`"v"`)}}
	for _, tc := range []struct {
		name        string
		params      string
		extra, meta []member
		want        string
	}{
		{"none", "", nil, nil, `{"jsonrpc":"2.0","id":1,"method":"m"}`},
		{"empty", `{}`, nil, nil, `{"jsonrpc":"2.0","id":1,"method":"m"}`},
		{"empty with space", "{ \t}", nil, nil, `{"jsonrpc":"2.0","id":1,"method":"m"}`},
		{"as given", `{"b":1, "a":[2]}`, nil, nil, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":1, "a":[2]}}`},
		{"extra replaces", `{"a":1,"requestState":"old","b":2}`, []member{{"requestState", json.RawMessage(`"new"`)}}, nil,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"requestState":"new"}}`},
		{"meta added", `{"a":1}`, nil, meta, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"_meta":{"progressToken":7,"k":"v"}}}`},
		{"meta after space", "{ \"a\": 1 }\t", nil, meta, `{"jsonrpc":"2.0","id":1,"method":"m","params":{ "a": 1 ,"_meta":{"progressToken":7,"k":"v"}}}`},
		{"meta into empty", "{ }", nil, meta, `{"jsonrpc":"2.0","id":1,"method":"m","params":{ "_meta":{"progressToken":7,"k":"v"}}}`},
		{"meta alone", ``, nil, meta, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":7,"k":"v"}}}`},
		{"meta merged", `{"_meta":{"x":1,"progressToken":"theirs"},"a":1}`, nil, meta,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"_meta":{"x":1,"progressToken":7,"k":"v"}}}`},
		{"meta not an object", `{"_meta":null}`, nil, meta, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":7,"k":"v"}}}`},
		{"meta merged, its key escaped", `{"\u005fmeta":{"x":1},"a":1}`, nil, meta,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"_meta":{"x":1,"progressToken":7,"k":"v"}}}`},
		{"_meta only in a value", `{"a":"_meta","b":{"c":"x_meta"}}`, nil, meta,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"_meta","b":{"c":"x_meta"},"_meta":{"progressToken":7,"k":"v"}}}`},
		{"meta nested deeper", `{"a":{"_meta":{"x":1}}}`, nil, meta,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"_meta":{"x":1}},"_meta":{"progressToken":7,"k":"v"}}}`},
		{"extra replaces, found by its bytes", `{"requestState":"old"}`, []member{{"requestState", json.RawMessage(`"new"`)}}, nil,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"requestState":"new"}}`},
		{"escaped keys", `{"a\"b":1}`, []member{{"c\nd", json.RawMessage(`2`)}}, nil,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a\"b":1,"c\nd":2}}`},
	} {
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		got := string(appendRequest(nil, 1, "m", params, tc.extra, tc.meta))
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: not JSON: %s", tc.name, got)
		}
	}
}

// TestParamsOf: raw params are used as given once checked, compacted only
// when they hold line breaks; other values are marshalled; null is none,
// and anything but an object is refused.
func TestParamsOf(t *testing.T) {
	for _, tc := range []struct {
		params any
		want   string // "" for none; "error: ..." for an error
	}{
		{nil, ""},
		{json.RawMessage(nil), ""},
		{json.RawMessage(`null`), ""},
		{(*struct{})(nil), ""},
		{json.RawMessage(`{"a": 1}`), `{"a": 1}`},
		{json.RawMessage("{\n  \"a\": \"x\\ny\"\r\n}"), `{"a":"x\ny"}`},
		{map[string]int{"b": 2, "a": 1}, `{"a":1,"b":2}`},
		{json.RawMessage(`[1]`), "error: params must be a JSON object"},
		{json.RawMessage(`{"a":`), "error: encoding params"},
		{"text", "error: params must be a JSON object"},
	} {
		got, err := paramsOf("m", tc.params)
		switch {
		case strings.HasPrefix(tc.want, "error: "):
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "error: ")) {
				t.Errorf("%#v: got %s, %v; want %s", tc.params, got, err, tc.want)
			}
		case err != nil || string(got) != tc.want || (tc.want == "") != (got == nil):
			t.Errorf("%#v: got %q, %v; want %q", tc.params, got, err, tc.want)
		}
	}
}

func TestInputRequiredScan(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		yes, ok bool
	}{
		{`{"resultType":"complete","content":[]}`, false, true},
		{`{"content":[],"resultType":"input_required"}`, true, true},
		{`{"resultType":"input\u005frequired"}`, true, true},
		{`{"content":[{"resultType":"input_required"}]}`, false, true},
		{`{}`, false, true},
		{`null`, false, true},
		{`{"resultType":null}`, false, true},
		{`{"resultType":1}`, false, false},
		{`[]`, false, false},
	} {
		if yes, ok := inputRequired([]byte(tc.raw)); yes != tc.yes || ok != tc.ok {
			t.Errorf("%s: %v, %v; want %v, %v", tc.raw, yes, ok, tc.yes, tc.ok)
		}
	}
}

// TestTimeoutQueue: requests of one timeout share a queue, which stays
// proportional to the requests in flight however many were answered, and
// which times out a request that is not answered; a request of another
// duration gets a queue of its own, and past maxTimeoutQueues durations a
// timer of its own.
func TestTimeoutQueue(t *testing.T) {
	c, err := Connect(context.Background(), Command{Path: os.Args[0], Env: []string{"MCPRT_FAKE=legacy", "GORACE=atexit_sleep_ms=0"}},
		&Options{Era: EraLegacy, Timeout: time.Hour, CloseGrace: 2 * time.Second, TermGrace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for range 500 {
		if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	q := c.timeoutQueue(time.Hour)
	n := len(q.q) - q.head
	c.mu.Unlock()
	if n > 2*1+64+1 {
		t.Errorf("after 500 calls one at a time the queue holds %d entries", n)
	}

	start := time.Now()
	_, err = c.CallTool(ctx, "hang", nil, WithTimeout(200*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Fatalf("hang: %v", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 5*time.Second {
		t.Errorf("hang timed out after %v", d)
	}
	// The session goes on: a late answer, or the next call, is fine.
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "after"}); err != nil {
		t.Fatal(err)
	}
	for i := range maxTimeoutQueues + 2 {
		d := time.Hour + time.Duration(i)*time.Second
		if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}, WithTimeout(d)); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	queues := len(c.timeouts)
	c.mu.Unlock()
	if queues != maxTimeoutQueues {
		t.Errorf("%d timeout queues", queues)
	}
	_, err = c.CallTool(ctx, "hang", nil, WithTimeout(150*time.Millisecond)) // a timer of its own
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang with a timer of its own: %v", err)
	}
}

// TestWithDone: closing the channel abandons the request as cancelling
// its context would, and the session goes on.
func TestWithDone(t *testing.T) {
	c, err := Connect(context.Background(), Command{Path: os.Args[0], Env: []string{"MCPRT_FAKE=legacy", "GORACE=atexit_sleep_ms=0"}},
		&Options{Era: EraLegacy, CloseGrace: 2 * time.Second, TermGrace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan struct{})
	time.AfterFunc(100*time.Millisecond, func() { close(done) })
	_, err = c.CallTool(context.Background(), "hang", nil, WithDone(done))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("hang: %v", err)
	}
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "after"}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAppendRequest: the line of a forwarded 2026-07-28 tools/call,
// its _meta spliced in.
func BenchmarkAppendRequest(b *testing.B) {
	c := &Client{opts: Options{ClientInfo: mcp.Implementation{Name: "mcprt-gateway", Version: "1"}}}
	meta := c.metaFor("2026-07-28")
	params := []byte(`{"name":"echo","arguments":{"text":"hi"}}`)
	b.ReportAllocs()
	var line []byte
	for b.Loop() {
		line = appendRequest(line[:0], 12345, "tools/call", params, nil, meta)
	}
}

// BenchmarkAppendRequestLegacy: the line of a forwarded legacy tools/call,
// with the progressToken a forwarding gateway asks for.
func BenchmarkAppendRequestLegacy(b *testing.B) {
	params := []byte(`{"name":"echo","arguments":{"text":"hi"}}`)
	var tok [20]byte
	b.ReportAllocs()
	var line []byte
	for b.Loop() {
		meta := []member{{"progressToken", json.RawMessage(strconv.AppendInt(tok[:0], 12345, 10))}}
		line = appendRequest(line[:0], 12345, "tools/call", params, nil, meta)
	}
}

// answerChan is an Answerer that hands the answer to a channel.
type answerChan chan error

func (a answerChan) Answer(_ json.RawMessage, err error) { a <- err }

// TestProgressExtendsTimeout: with Options.MaxTimeout, a request's
// progress starts its timeout again, so a long request that reports
// progress is answered; one that falls silent still times out, and none
// outlives MaxTimeout. Both Call and Go, in a queue and with a timer of
// their own.
func TestProgressExtendsTimeout(t *testing.T) {
	const timeout, maxTimeout = time.Second, 3 * time.Second // a tick 100 ms late fails nothing, a stall of 900 ms would
	c, err := Connect(context.Background(), Command{Path: os.Args[0], Env: []string{"MCPRT_FAKE=legacy", "GORACE=atexit_sleep_ms=0"}},
		&Options{Era: EraLegacy, Timeout: timeout, MaxTimeout: maxTimeout, CloseGrace: 2 * time.Second, TermGrace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	// The default timeout has its queue; every other queue taken leaves
	// timeout+1ms a timer of its own.
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	for i := range maxTimeoutQueues {
		if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}, WithTimeout(time.Hour+time.Duration(i))); err != nil {
			t.Fatal(err)
		}
	}
	noop := WithProgress(func(Progress) {})

	call := func(args map[string]any, opts ...CallOption) error {
		_, err := c.CallTool(ctx, "ticks", args, opts...)
		return err
	}
	goCall := func(args map[string]any, opts ...CallOption) error {
		a := make(answerChan, 1)
		params, _ := json.Marshal(map[string]any{"name": "ticks", "arguments": args})
		if _, err := c.Go("tools/call", params, a, opts...); err != nil {
			return err
		}
		select {
		case err := <-a:
			return err
		case <-time.After(time.Minute):
			return errors.New("no answer within a minute")
		}
	}
	// Parallel subtests run once their group returns: before Close.
	t.Run("group", func(t *testing.T) { progressCases(t, call, goCall, noop, timeout, maxTimeout) })
}

func progressCases(t *testing.T, call, goCall func(map[string]any, ...CallOption) error, noop CallOption, timeout, maxTimeout time.Duration) {
	long := map[string]any{"n": 20, "ms": 100} // twice the timeout
	silent := map[string]any{"n": 2, "ms": 100, "hang": true}
	endless := map[string]any{"n": 1000, "ms": 100, "hang": true}
	for _, own := range []bool{false, true} {
		opts := []CallOption{noop}
		if own {
			opts = append(opts, WithTimeout(timeout+time.Millisecond))
		}
		for name, send := range map[string]func(map[string]any, ...CallOption) error{"Call": call, "Go": goCall} {
			t.Run(fmt.Sprintf("%s/own timer %v", name, own), func(t *testing.T) {
				t.Parallel()
				if err := send(long, opts...); err != nil {
					t.Errorf("a call reporting progress for twice its timeout: %v", err)
				}
				if err := send(silent, opts...); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("a call that falls silent: %v", err)
				}
				start := time.Now()
				if err := send(endless, opts...); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("a call reporting progress forever: %v", err)
				} else if d := time.Since(start); d < maxTimeout {
					t.Errorf("a call reporting progress ended after %v, before MaxTimeout", d)
				}
			})
		}
	}
	t.Run("no progress asked", func(t *testing.T) {
		t.Parallel()
		if err := call(long); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a call without WithProgress: %v", err)
		}
	})
}

// TestCheckedParams: params a paramsVouched Answerer built are taken as
// they are, unchecked, but for what their builder cannot know: line
// breaks (arguments that came pretty-printed) are still compacted away,
// and what is not an object still goes through paramsOf's checks.
func TestCheckedParams(t *testing.T) {
	for _, tc := range []struct {
		params string
		want   string // "error: ..." for an error
	}{
		{`{"name":"echo","arguments":{"text":"hi"}}`, `{"name":"echo","arguments":{"text":"hi"}}`},
		{"{\"name\":\"x\",\"arguments\":{\n  \"a\": \"x\\ny\"\r\n}}", `{"name":"x","arguments":{"a":"x\ny"}}`},
		{"{\"arguments\":{\"a\":1}\n", "error: encoding params"}, // compacting checks
		{`null`, ""},
		{`[1]`, "error: params must be a JSON object"},
	} {
		got, err := checkedParams("m", json.RawMessage(tc.params))
		switch {
		case strings.HasPrefix(tc.want, "error: "):
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "error: ")) {
				t.Errorf("%q: got %s, %v; want %s", tc.params, got, err, tc.want)
			}
		case err != nil || string(got) != tc.want:
			t.Errorf("%q: got %q, %v; want %q", tc.params, got, err, tc.want)
		}
	}
}
