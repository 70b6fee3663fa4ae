package sessionactor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session"
)

// fuzzHang only turns a hang into a failure.
const fuzzHang = 10 * time.Second

// fuzzServer has a tool that works, one that fails and one that panics.
func fuzzServer() *handlers.Server {
	srv := handlers.NewServer(mcp.Implementation{Name: "fuzz", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "echo"}}, func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return mcp.TextResult(a.Text), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "fail"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, errors.New("failed")
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "panic"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		panic("fuzz")
	})
	return srv
}

// fuzzCheckLine reports why an output line is not one JSON-RPC message a
// server may send (or a non-empty batch of responses), or nil.
func fuzzCheckLine(line []byte) error {
	if !utf8.Valid(line) {
		return errors.New("not UTF-8")
	}
	if !json.Valid(line) {
		return errors.New("not one JSON value")
	}
	if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '[' {
		var parts []json.RawMessage
		if err := json.Unmarshal(line, &parts); err != nil || len(parts) == 0 {
			return errors.New("empty or broken batch")
		}
		for _, p := range parts {
			if err := fuzzCheckObject(p); err != nil {
				return fmt.Errorf("batch element: %w", err)
			}
		}
		return nil
	}
	return fuzzCheckObject(line)
}

func fuzzCheckObject(raw []byte) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return errors.New("not an object")
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return errors.New(`jsonrpc is not "2.0"`)
	}
	if method, ok := m["method"]; ok {
		var s string
		if method[0] != '"' || json.Unmarshal(method, &s) != nil {
			return errors.New("method is not a string")
		}
		if p, ok := m["params"]; ok && p[0] != '{' {
			return errors.New("params is not an object")
		}
		return nil
	}
	id, ok := m["id"]
	if !ok {
		return errors.New("response without id")
	}
	switch c := id[0]; {
	case c == '"', string(id) == "null":
	case c == '-' || (c >= '0' && c <= '9'):
		if bytes.ContainsAny(id, ".eE") {
			return errors.New("fractional id")
		}
	default:
		return errors.New("id is not a string, an integer or null")
	}
	res, hasRes := m["result"]
	e, hasErr := m["error"]
	switch {
	case hasRes == hasErr:
		return errors.New("not exactly one of result and error")
	case hasRes && res[0] != '{':
		return errors.New("result is not an object")
	case hasErr:
		var eo struct {
			Code    json.RawMessage
			Message *string
		}
		if json.Unmarshal(e, &eo) != nil || len(eo.Code) == 0 || !(eo.Code[0] == '-' || (eo.Code[0] >= '0' && eo.Code[0] <= '9')) ||
			bytes.ContainsAny(eo.Code, ".eE") || eo.Message == nil {
			return errors.New("error object without an integer code and a string message")
		}
	}
	if len(m) != 3 {
		return errors.New("unexpected members")
	}
	return nil
}

var fuzzRound atomic.Int64

// FuzzSession writes arbitrary lines to a whole server tree started with
// runtime.Start over pipes: every line it writes back must be one valid
// JSON-RPC message, nothing may crash it, and afterwards it still answers a
// ping, then ends cleanly on EOF.
func FuzzSession(f *testing.F) {
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, s := range []string{
		init + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		init + `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"panic"}},{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		init + `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fail"}}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`,
		`{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{"text":"modern"}}}`,
		`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + meta + `}}` + "\n" + `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{` + meta + `}}`,
		"not json\n{\"jsonrpc\":\"2.0\",\"id\":\n\xff\xfe\n[]\n[[]]\n{}\n" + `{"jsonrpc":"2.0","id":1,"result":{}}`,
		init + `{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"debug"}}` + "\n" + `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + string(bytes.Repeat([]byte("x"), 2000)) + `"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := actor.NewEngine(actor.NewEngineConfig())
		if err != nil {
			t.Fatal(err)
		}
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		inst, err := runtime.Start(e, fuzzServer(), inR, outW, runtime.Options{
			Logger:       slog.New(slog.DiscardHandler),
			MaxLineBytes: 1024,
			// reach the over-long-line path with small inputs
			Options: session.Options{RequestTimeout: 2 * time.Second, DrainTimeout: 200 * time.Millisecond},
		})
		if err != nil {
			t.Fatal(err)
		}
		pingID := fmt.Sprintf(`"fuzz-ping-%d"`, fuzzRound.Add(1))
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			bad     []string
			pings   int
			pingErr bool
		)
		ponged := make(chan struct{})
		wg.Go(func() {
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Bytes()
				mu.Lock()
				if err := fuzzCheckLine(line); err != nil {
					bad = append(bad, fmt.Sprintf("%v: %q", err, line))
				} else if bytes.Contains(line, []byte(`"id":`+pingID)) {
					pings++
					pingErr = !bytes.Equal(line, []byte(`{"jsonrpc":"2.0","id":`+pingID+`,"result":{}}`))
					if pings == 1 {
						close(ponged)
					}
				}
				mu.Unlock()
			}
			if err := sc.Err(); err != nil {
				mu.Lock()
				bad = append(bad, "reading output: "+err.Error())
				mu.Unlock()
				io.Copy(io.Discard, outR) // never leave the writer blocked
			}
		})
		wg.Go(func() {
			in := append(append([]byte(nil), data...), '\n')
			in = append(in, `{"jsonrpc":"2.0","id":`+pingID+`,"method":"ping"}`+"\n"...)
			inW.Write(in) // fails only once the tree has ended, which the checks below report
		})
		select {
		case <-ponged:
		case <-inst.Done():
			t.Errorf("the tree ended (%v) before answering the ping", inst.Err())
		case <-time.After(fuzzHang):
			t.Errorf("no answer to a ping after the input")
		}
		inW.Close()
		select {
		case <-inst.Done():
		case <-time.After(fuzzHang):
			t.Fatalf("the tree did not end after stdin EOF")
		}
		if code := runtime.ExitCode(inst.Err()); code != runtime.ExitOK {
			t.Errorf("the tree ended with %v", inst.Err())
		}
		outW.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bad {
			t.Errorf("output line: %s", b)
		}
		if pings > 1 || pingErr {
			t.Errorf("the ping was answered %d times, wrongly: %v", pings, pingErr)
		}
	})
}
