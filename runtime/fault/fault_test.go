package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

func TestInjectorIsDeterministic(t *testing.T) {
	rates := HandlerRates{Panic: 0.1, Hang: 0.05, Slow: 0.2, Error: 0.15}
	draw := func(seed uint64) []faultKind {
		in := NewInjector(seed, rates)
		ks := make([]faultKind, 1000)
		for i := range ks {
			ks[i] = in.next()
		}
		return ks
	}
	a, b := draw(42), draw(42)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed drew different faults")
	}
	if slices.Equal(a, draw(43)) {
		t.Fatal("seeds 42 and 43 drew the same 1000 faults")
	}
}

func TestInjectorRates(t *testing.T) {
	rates := HandlerRates{Panic: 0.1, Hang: 0.05, Slow: 0.2, Error: 0.15}
	in := NewInjector(7, rates)
	const n = 100_000
	for range n {
		in.next()
	}
	want := map[faultKind]float64{faultPanic: 0.1, faultHang: 0.05, faultSlow: 0.2, faultError: 0.15, noFault: 0.5}
	var sum int64
	for k, p := range want {
		got := float64(in.count(k)) / n
		sum += in.count(k)
		// Five standard deviations: a fixed seed makes this exact anyway.
		if tol := 5 * math.Sqrt(p*(1-p)/n); math.Abs(got-p) > tol {
			t.Errorf("%v: %.4f of calls, want %.2f ± %.4f", k, got, p, tol)
		}
	}
	if sum != n || in.callCount() != n {
		t.Errorf("counts add up to %d, calls %d, want %d", sum, in.callCount(), n)
	}
}

// TestInjectorConcurrent: concurrent calls each get one fault and the
// counts add up; -race checks the rest.
func TestInjectorConcurrent(t *testing.T) {
	in := NewInjector(1, HandlerRates{Panic: 0.5})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				in.next()
			}
		})
	}
	wg.Wait()
	if got := in.count(noFault) + in.count(faultPanic); got != 8000 {
		t.Errorf("counts add up to %d, want 8000", got)
	}
}

func TestNewInjectorRejectsBadRates(t *testing.T) {
	for _, r := range []HandlerRates{{Panic: -0.1}, {Hang: 1.5}, {Panic: 0.6, Error: 0.6}, {Slow: math.NaN()}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewInjector(%+v) did not panic", r)
				}
			}()
			NewInjector(1, r)
		}()
	}
}

func okHandler(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
	return mcp.TextResult("ok"), nil
}

// callWrapped runs one call of a handler wrapped to always suffer k.
func callWrapped(k faultKind, ctx context.Context) (res *mcp.CallToolResult, err error, panicked any) {
	var r HandlerRates
	switch k {
	case faultPanic:
		r.Panic = 1
	case faultHang:
		r.Hang = 1
	case faultSlow:
		r.Slow, r.SlowFor = 1, time.Millisecond
	case faultError:
		r.Error = 1
	}
	h := NewInjector(1, r).Wrap(okHandler)
	defer func() { panicked = recover() }()
	res, err = h(ctx, &handlers.Request{}, json.RawMessage("{}"))
	return res, err, nil
}

func TestWrap(t *testing.T) {
	ctx := context.Background()
	if res, err, p := callWrapped(noFault, ctx); p != nil || err != nil || res.Content[0].Text != "ok" {
		t.Errorf("none: %v %v %v", res, err, p)
	}
	if res, err, p := callWrapped(faultSlow, ctx); p != nil || err != nil || res.Content[0].Text != "ok" {
		t.Errorf("slow: %v %v %v", res, err, p)
	}
	if _, err, p := callWrapped(faultError, ctx); p != nil || !errors.Is(err, ErrInjected) {
		t.Errorf("error: err %v, panic %v; want ErrInjected", err, p)
	}
	if _, _, p := callWrapped(faultPanic, ctx); p == nil {
		t.Error("panic: the handler returned")
	}
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err, _ := callWrapped(faultHang, hctx)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("hang returned before its context ended: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("hang returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hang did not return when its context ended")
	}
	// A slow call is still cut short by its context.
	sctx, scancel := context.WithCancel(ctx)
	scancel()
	h := NewInjector(1, HandlerRates{Slow: 1, SlowFor: time.Hour}).Wrap(okHandler)
	if _, err := h(sctx, &handlers.Request{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("slow with an ended context: %v, want context.Canceled", err)
	}
}

func TestCrashLoop(t *testing.T) {
	h := CrashLoop()
	for i := range 3 {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("call %d did not panic", i)
				}
			}()
			h(context.Background(), &handlers.Request{}, nil)
		}()
	}
}

// oneLine checks that b is exactly one line: a single '\n', at the end.
func oneLine(t *testing.T, name string, b []byte) {
	t.Helper()
	if len(b) == 0 || b[len(b)-1] != '\n' || bytes.Count(b, []byte("\n")) != 1 {
		t.Errorf("%s: not exactly one terminated line: %.80q", name, b)
	}
}

func TestLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		g := garbageLine(rng)
		oneLine(t, "GarbageLine", g)
		if json.Valid(g) {
			t.Errorf("GarbageLine is valid JSON: %q", g)
		}
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
		tr := truncatedLine(msg, rng)
		oneLine(t, "TruncatedLine", tr)
		if json.Valid(tr) || !bytes.HasPrefix(msg, tr[:len(tr)-1]) {
			t.Errorf("TruncatedLine is not a proper prefix: %q", tr)
		}
	}
	u := invalidUTF8Line(intID(5), "echo", nil)
	oneLine(t, "InvalidUTF8Line", u)
	if utf8.Valid(u) {
		t.Error("InvalidUTF8Line is valid UTF-8")
	}
	h := hugeLine(intID(6), "echo", 3<<20, nil)
	oneLine(t, "HugeLine", h)
	var call struct {
		ID     int
		Params struct {
			Name      string
			Arguments struct{ Text string }
		}
	}
	if err := json.Unmarshal(h, &call); err != nil || call.ID != 6 || call.Params.Name != "echo" || len(call.Params.Arguments.Text) != 3<<20 {
		t.Errorf("HugeLine: %v, id %d, tool %q, %d bytes of text", err, call.ID, call.Params.Name, len(call.Params.Arguments.Text))
	}
	if !bytes.HasPrefix(h, []byte(`{"jsonrpc":"2.0","id":6,`)) {
		t.Errorf("HugeLine does not start with its id: %.40q", h)
	}
	d := deepLine(intID(7), "echo", 100, nil)
	oneLine(t, "DeepLine", d)
	if err := json.Unmarshal(d, &call); err != nil || call.ID != 7 {
		t.Errorf("DeepLine(100) does not parse: %v", err)
	}
	if err := json.Unmarshal(deepLine(intID(8), "echo", 100_000, nil), &call); err == nil {
		t.Error("DeepLine(100,000) parses with encoding/json: not past its depth limit")
	}
}

func TestParseOut(t *testing.T) {
	good := []struct {
		line string
		kind outKind
		key  string
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, outResponse, "n:1"},
		{`{"jsonrpc":"2.0","id":"a\u0062","result":{"x":[1]}}`, outResponse, "s:ab"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, outResponse, "n:null"},
		{`{"jsonrpc":"2.0","id":-3,"error":{"code":-32603,"message":"x","data":{"a":1}}}`, outResponse, "n:-3"},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`, outNotification, ""},
		{`{"jsonrpc":"2.0","id":"s1","method":"ping"}`, outRequest, "s:s1"},
	}
	for _, g := range good {
		m, err := parseOut([]byte(g.line))
		if err != nil || m.kind != g.kind || m.key != g.key {
			t.Errorf("%s: %v, %+v", g.line, err, m)
		}
	}
	bad := []string{
		"", " ", "hello", `{"jsonrpc":"2.0","id":1,"result":{}} {}`, `[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\xff\"}}",
		`{"id":1,"result":{}}`, `{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`,
		`{"jsonrpc":"2.0","id":1,"result":[]}`, `{"jsonrpc":"2.0","id":1,"result":"ok"}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`, `{"jsonrpc":"2.0","id":{},"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":""}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":""}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"","extra":0}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"extra":0}`,
		`{"jsonrpc":"2.0","method":1}`, `{"jsonrpc":"2.0","method":"m","params":3}`,
		`{"jsonrpc":"2.0","method":"m","id":null}`,
	}
	for _, b := range bad {
		if m, err := parseOut([]byte(b)); err == nil {
			t.Errorf("accepted %q as %+v", b, m)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	w := &tailBuffer{max: 8}
	for _, s := range []string{"abc", "defg", "hij", "0123456789abc"} {
		w.Write([]byte(s))
	}
	if got := w.String(); got != "56789abc" {
		t.Errorf("tail %q, want %q", got, "56789abc")
	}
	w.Write([]byte("xy"))
	if got := w.String(); got != "789abcxy" {
		t.Errorf("tail %q, want %q", got, "789abcxy")
	}
}

func TestParseEnding(t *testing.T) {
	for _, e := range []Ending{EndEOF, EndSIGTERM, EndClosedStdout} {
		if got, err := ParseEnding(e.String()); err != nil || got != e {
			t.Errorf("ParseEnding(%q) = %v, %v", e.String(), got, err)
		}
	}
	if _, err := ParseEnding("kill"); err == nil {
		t.Error(`ParseEnding("kill") succeeded`)
	}
}
