package sessionactor_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session"
)

var update = flag.Bool("update", false, "rewrite the responses in testdata/*.golden with what the server sends")

func TestMain(m *testing.M) {
	// hollywood and the handler errors log through slog; keep output readable.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

const hang = 5 * time.Second // only turns a hang into a failure

var quiet = slog.New(slog.DiscardHandler)

// testServer has one tool of each behaviour the transcripts need.
func testServer() *handlers.Server {
	srv := handlers.NewServer(mcp.Implementation{Name: "golden", Title: "Golden Server", Version: "1.0.0"}, "Use the tools.")
	srv.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "echo",
			Description: "Echoes its text.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		},
	}, func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct {
			Text  string `json:"text"`
			Sleep int    `json:"sleepMs"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		if a.Sleep > 0 {
			select {
			case <-time.After(time.Duration(a.Sleep) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return mcp.TextResult(a.Text), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "fail"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, errors.New("the tool failed <on purpose>")
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "panic"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		panic("boom")
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "version"}}, func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult(fmt.Sprintf("%s modern=%v caps=%s", req.Version, req.Modern, req.ClientCapabilities)), nil
	})
	return srv
}

// client drives one embedded server over a pair of pipes.
type client struct {
	t    *testing.T
	inst *runtime.Instance
	in   *io.PipeWriter
	outW *io.PipeWriter
	out  chan string
}

func startClient(t *testing.T, opts runtime.Options) *client {
	t.Helper()
	return startClientWith(t, testServer(), opts)
}

func startClientWith(t *testing.T, srv *handlers.Server, opts runtime.Options) *client {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	inst, err := runtime.Start(e, srv, inR, outW, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, inst: inst, in: inW, outW: outW, out: make(chan string, 1024)}
	go func() {
		defer close(c.out)
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if line != "" {
					c.out <- "UNTERMINATED:" + line
				}
				return
			}
			c.out <- strings.TrimSuffix(line, "\n")
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-inst.Done():
		case <-time.After(hang):
			t.Error("server did not end after its input closed")
		}
		outW.Close()
	})
	return c
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *client) recv() string {
	c.t.Helper()
	select {
	case l, ok := <-c.out:
		if !ok {
			c.t.Fatal("output ended; want a response")
		}
		return l
	case <-time.After(hang):
		c.t.Fatal("no response")
	}
	return ""
}

// finish closes the input, waits for the server to end normally and
// checks that nothing else was written.
func (c *client) finish() {
	c.t.Helper()
	c.finishWhere(func(string) bool { return false })
}

// finishAllowing is finish for a transcript whose end may still hold lines
// containing allowed, which no order settles.
func (c *client) finishAllowing(allowed string) {
	c.t.Helper()
	c.finishWhere(func(l string) bool { return strings.Contains(l, allowed) })
}

func (c *client) finishWhere(allowed func(string) bool) {
	c.t.Helper()
	c.in.Close()
	select {
	case <-c.inst.Done():
	case <-time.After(hang):
		c.t.Fatal("server did not end after its input closed")
	}
	if err := c.inst.Err(); err != nil {
		c.t.Errorf("Err() = %v after input EOF, want nil", err)
	}
	c.outW.Close()
	for l := range c.out {
		if !allowed(l) {
			c.t.Errorf("unexpected output after the transcript: %s", l)
		}
	}
}

// A transcript is a golden file: "> " lines are sent, "< " lines are the
// responses expected next, in order, and a run of "~ " lines is a set of
// responses that may come in any order. "#" lines and blank lines are
// comments. After the last line the input is closed: the server must end
// normally without writing anything more.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.golden")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".golden"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	c := startClient(t, runtime.Options{})
	var rewritten []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "> "):
			c.send(l[2:])
			rewritten = append(rewritten, l)
		case strings.HasPrefix(l, "< "):
			got := c.recv()
			if *update {
				rewritten = append(rewritten, "< "+got)
			} else if got != l[2:] {
				t.Errorf("%s:%d:\n got: %s\nwant: %s", file, i+1, got, l[2:])
			}
		case strings.HasPrefix(l, "~ "):
			var want, got []string
			for ; i < len(lines) && strings.HasPrefix(lines[i], "~ "); i++ {
				want = append(want, lines[i][2:])
				got = append(got, c.recv())
			}
			i--
			if *update {
				for _, g := range got {
					rewritten = append(rewritten, "~ "+g)
				}
				continue
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s:%d: responses (any order):\n got: %s\nwant: %s", file, i+1, strings.Join(got, "\n      "), strings.Join(want, "\n      "))
			}
		case l == "" || strings.HasPrefix(l, "#"):
			rewritten = append(rewritten, l)
		default:
			t.Fatalf("%s:%d: bad transcript line %q", file, i+1, l)
		}
	}
	c.finish()
	if *update {
		if err := os.WriteFile(file, []byte(strings.Join(rewritten, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLineTooLong: a line over MaxLineBytes is answered with -32600 and
// the id found in its first bytes, and the server goes on.
func TestLineTooLong(t *testing.T) {
	c := startClient(t, runtime.Options{MaxLineBytes: 200})
	pad := strings.Repeat("x", 300)
	c.send(`{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + pad + `"}}}`)
	want := `{"jsonrpc":"2.0","id":"big-1","error":{"code":-32600,"message":"Invalid Request: message of 401 bytes exceeds the 200-byte line limit","data":{"limit":200,"size":401}}}`
	if got := c.recv(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Found even after other members, as long as it is in the kept head.
	c.send(`{"jsonrpc":"2.0","params":{"pad":"` + pad + `"},"id":2,"method":"ping"}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,`) {
		t.Errorf("got %s, want -32600 with id 2", got)
	}
	// The id comes after the kept head (4 KiB): it cannot be found.
	long := strings.Repeat("x", 5000)
	c.send(`{"jsonrpc":"2.0","params":{"pad":"` + long + `"},"id":2,"method":"ping"}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`) {
		t.Errorf("got %s, want -32600 with a null id", got)
	}
	// A nested "id" is not the request's.
	c.send(`{"jsonrpc":"2.0","params":{"id":9,"pad":"` + pad + `"},"method":"ping"}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`) {
		t.Errorf("got %s, want -32600 with a null id", got)
	}
	// An invalid id in the head is not echoed.
	c.send(`{"jsonrpc":"2.0","id":{"x":1},"method":"ping","params":{"pad":"` + pad + `"}}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`) {
		t.Errorf("got %s, want -32600 with a null id", got)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":3,"result":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	c.finish()
}

// TestConcurrentCallsUnordered: calls that overlap are answered in the
// order they finish, each exactly once, while quick requests keep flowing.
func TestConcurrentCallsUnordered(t *testing.T) {
	c := startClient(t, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	want := map[string]bool{}
	for i, ms := range []int{200, 150, 100, 50, 0} {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t%d","sleepMs":%d}}}`, i+1, i+1, ms))
		want[fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"t%d"}]}}`, i+1, i+1)] = true
	}
	// A ping sent after the slow calls is answered before them.
	c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	var order []string
	for range 6 {
		got := c.recv()
		order = append(order, got)
		if got == `{"jsonrpc":"2.0","id":"p","result":{}}` {
			continue
		}
		if !want[got] {
			t.Errorf("unexpected or repeated response %s", got)
		}
		delete(want, got)
	}
	if len(want) > 0 {
		t.Errorf("missing responses: %v", want)
	}
	if order[5] != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"t1"}]}}` {
		t.Errorf("the 200 ms call was not answered last: %q", order)
	}
	c.finish()
}

// TestCancelled: a cancelled request gets no response at all, and its
// handler's context is cancelled; a cancellation of an unknown or
// finished request is ignored.
func TestCancelled(t *testing.T) {
	c := startClient(t, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"echo","arguments":{"text":"x","sleepMs":5000}}}`)
	time.Sleep(20 * time.Millisecond) // let it reach its handler
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"unknown"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":1,"result":{}}`; got != want {
		t.Fatalf("got %s, want %s (nothing for the cancelled call)", got, want)
	}
	// The id is free again once the handler has returned.
	start := time.Now()
	for {
		c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"echo","arguments":{"text":"again"}}}`)
		got := c.recv()
		if got == `{"jsonrpc":"2.0","id":"slow","result":{"content":[{"type":"text","text":"again"}]}}` {
			break
		}
		if !strings.Contains(got, "already in use") || time.Since(start) > time.Second {
			t.Fatalf("got %s", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if time.Since(start) > time.Second {
		t.Error("the cancelled handler did not stop promptly")
	}
	c.finish()
}

// TestCancelledWhileWaiting: a call cancelled before any handler took it
// never runs and is never answered, even on drain.
func TestCancelledWhileWaiting(t *testing.T) {
	c := startClient(t, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	// Sent together: the cancellation is read before a worker is ready.
	_, err := io.WriteString(c.in,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`+"\n"+
			`{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	got := c.recv()
	if got == `{"jsonrpc":"2.0","id":8,"result":{}}` {
		c.finish() // a response to 7 would show up here
		return
	}
	// The worker was fast enough to answer 7 before the cancellation: legal.
	if got != `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}` {
		t.Fatalf("got %s", got)
	}
	t.Log("call answered before its cancellation was read")
	c.recv()
	c.finish()
}

// TestDuplicateID: an id already in flight is rejected, the first call is
// still answered once.
func TestDuplicateID(t *testing.T) {
	c := startClient(t, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"first","sleepMs":200}}}`)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"second"}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: id 5 is already in use by a request in flight"}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"first"}]}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	c.finish()
}

// TestRequestTimeout: a call past its deadline is answered with an error,
// once, and its handler's late result is dropped.
func TestRequestTimeout(t *testing.T) {
	c := startClient(t, runtime.Options{Options: session.Options{RequestTimeout: 100 * time.Millisecond}})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","sleepMs":5000}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Request timed out after 100ms"}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":2,"result":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	c.finish()
}

// TestDeadlinesInterleaved: calls that finish in time, calls that never
// would, and a tool with a timeout of its own, interleaved. Each is
// answered once, by its handler or by its own deadline: the session's one
// deadline queue neither expires a call early nor overrides a tool's own
// timeout.
func TestDeadlinesInterleaved(t *testing.T) {
	srv := testServer()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "patient"}, Timeout: 10 * time.Second}, func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		select {
		case <-time.After(1500 * time.Millisecond): // past the session's 1s, inside its own 10s
			return mcp.TextResult("patient"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	// Margins are wide: a loaded machine may take a while to start the
	// hundreds of handler actors this needs.
	c := startClientWith(t, srv, runtime.Options{Options: session.Options{RequestTimeout: time.Second}})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	const n = 300
	want := map[string]string{}
	for i := 1; i <= n; i++ {
		var line string
		switch i % 4 {
		case 0: // quick
			line = fmt.Sprintf(`{"name":"echo","arguments":{"text":"q%d"}}`, i)
			want[fmt.Sprint(i)] = fmt.Sprintf(`{"content":[{"type":"text","text":"q%d"}]}`, i)
		case 1: // done well inside the deadline
			line = fmt.Sprintf(`{"name":"echo","arguments":{"text":"s%d","sleepMs":20}}`, i)
			want[fmt.Sprint(i)] = fmt.Sprintf(`{"content":[{"type":"text","text":"s%d"}]}`, i)
		case 2: // never in time
			line = `{"name":"echo","arguments":{"text":"x","sleepMs":60000}}`
			want[fmt.Sprint(i)] = `error:Request timed out after 1s`
		case 3:
			line = `{"name":"patient"}`
			want[fmt.Sprint(i)] = `{"content":[{"type":"text","text":"patient"}]}`
		}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i, line))
	}
	for range n {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		line := c.recv()
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		id := string(m.ID)
		w, ok := want[id]
		if !ok {
			t.Fatalf("id %s answered twice or never asked: %s", id, line)
		}
		delete(want, id)
		got := string(m.Result)
		if m.Error != nil {
			got = "error:" + m.Error.Message
		}
		if got != w {
			t.Errorf("id %s: got %s, want %s", id, got, w)
		}
	}
	c.finish()
}

// TestAnsweredCallsNotRetained: the session keeps nothing of an answered
// request. Fifty 1 MiB calls one after another, with the default 60 s
// deadline still ahead of each, leave the heap near its size at the start:
// a table that kept answered calls would hold every line.
func TestAnsweredCallsNotRetained(t *testing.T) {
	c := startClient(t, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	text := strings.Repeat("x", 1<<20)
	for i := 1; i <= 50; i++ {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, i, text))
		if got := c.recv(); !strings.HasPrefix(got, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result"`, i)) {
			t.Fatalf("call %d: %.100s", i, got)
		}
	}
	// One more small call: its line is what lets the session read the last
	// big call's completion.
	c.send(`{"jsonrpc":"2.0","id":51,"method":"ping"}`)
	c.recv()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	if ms.HeapAlloc > 8<<20 { // about 0.5 MiB when nothing is kept
		t.Fatalf("heap holds %d MiB after 50 answered 1 MiB calls", ms.HeapAlloc>>20)
	}
	c.finish()
}

// TestIDReusedAfterAnswer: once a request is answered its id is free, even
// if the session has not yet heard that the handler's worker is idle again.
// (The MCP revisions ask clients not to reuse ids; plain JSON-RPC clients
// do, and an answered request is in flight no more.)
func TestIDReusedAfterAnswer(t *testing.T) {
	c := startClient(t, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	for i := range 300 {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"r%d"}}}`, i))
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"r%d"}]}}`, i)
		if got := c.recv(); got != want {
			t.Fatalf("round %d: got %s\nwant %s", i, got, want)
		}
	}
	c.finish()
}
