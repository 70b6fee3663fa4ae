//go:build unix

package client_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// The fake server is this test binary run again with MCPRT_FAKE set (see
// TestMain): one scriptable server whose era and misbehaviour are chosen by
// the mode, and whose tools do one thing each, so each test can provoke
// exactly the fault it is about. It logs every line it reads to
// MCPRT_FAKE_LOG, so tests can check what the client sent.
//
// Modes:
//
//	legacy       initialize era; answers server/discover with -32601
//	quiet-probe  legacy, but ignores server/discover entirely
//	modern       2026-07-28 only: server/discover, _meta checked on every request
//	modern-other a modern server that only speaks 2099-01-01
//	silent       reads stdin, never answers anything
//	ignore-term  legacy; ignores stdin EOF and SIGTERM
//	ignore-eof   legacy; ignores stdin EOF, dies on SIGTERM
//	flood        legacy; writes MCPRT_FAKE_FLOOD lines to stderr at start
//	legacy-tasks legacy with 2025-11-25 tasks (fake_tasks_test.go)
//
// MCPRT_FAKE_VERSION makes initialize answer that version, whatever was asked.
type fake struct {
	mode    string
	out     *bufio.Writer
	outMu   sync.Mutex
	log     *os.File
	modern  bool
	version string
	refused bool // mode modern-refuse-once: the first server/discover was refused

	mu      sync.Mutex
	tools   []string
	waiting map[string]chan json.RawMessage // server→client requests by id
	nextID  int
	tasks   map[string]*legacyTask // mode legacy-tasks
}

type fakeMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func runFake(mode string) int {
	f := &fake{
		mode:    mode,
		out:     bufio.NewWriter(os.Stdout),
		modern:  strings.HasPrefix(mode, "modern"),
		tools:   []string{"echo", "hang", "crash", "progress", "pid", "roots", "sample", "elicit", "change", "log", "ask", "shed", "exit0", "batch", "garbage", "huge", "latin1"},
		waiting: map[string]chan json.RawMessage{},
	}
	if p := os.Getenv("MCPRT_FAKE_LOG"); p != "" {
		f.log, _ = os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	switch mode {
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	case "flood":
		n, _ := strconv.Atoi(os.Getenv("MCPRT_FAKE_FLOOD"))
		for i := range n {
			fmt.Fprintf(os.Stderr, "flood line %d\n", i)
		}
	}
	fmt.Fprintln(os.Stderr, "fake server starting in mode", mode)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if f.log != nil {
			f.log.Write(append(append([]byte(nil), line...), '\n'))
		}
		if mode == "silent" {
			continue
		}
		var m fakeMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		f.handle(m)
	}
	if mode == "ignore-term" || mode == "ignore-eof" {
		// stdin is closed; stay anyway. A sleep, not an empty select:
		// with no other goroutine the runtime calls that a deadlock and
		// exits (which -race, with goroutines of its own, hides).
		for {
			time.Sleep(time.Hour)
		}
	}
	return 0
}

func (f *fake) write(v any) {
	b, _ := json.Marshal(v)
	f.outMu.Lock()
	f.out.Write(append(b, '\n'))
	f.out.Flush()
	f.outMu.Unlock()
}

func (f *fake) result(id json.RawMessage, result any) {
	f.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (f *fake) error(id json.RawMessage, code int, msg string, data any) {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	f.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

func (f *fake) notify(method string, params any) {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	f.write(m)
}

// ask sends a server→client request (legacy era) and waits for the answer.
func (f *fake) ask(method string, params any) json.RawMessage {
	f.mu.Lock()
	f.nextID++
	id := fmt.Sprintf("s%d", f.nextID)
	ch := make(chan json.RawMessage, 1)
	f.waiting[strconv.Quote(id)] = ch
	f.mu.Unlock()
	f.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return <-ch
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

func (f *fake) handle(m fakeMsg) {
	if m.Method == "" { // a response to ask
		f.mu.Lock()
		ch := f.waiting[string(m.ID)]
		f.mu.Unlock()
		if ch != nil {
			raw, _ := json.Marshal(m)
			ch <- raw
		}
		return
	}
	if m.ID == nil {
		return // notifications
	}
	var p struct {
		Meta           map[string]json.RawMessage `json:"_meta"`
		Name           string                     `json:"name"`
		Arguments      map[string]any             `json:"arguments"`
		Cursor         string                     `json:"cursor"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   *string                    `json:"requestState"`
		ProtocolVer    string                     `json:"protocolVersion"`
	}
	json.Unmarshal(m.Params, &p)
	if f.modern {
		if m.Method == "initialize" {
			f.error(m.ID, -32601, "initialize is not supported: this server speaks 2026-07-28 only", nil)
			return
		}
		var v string
		json.Unmarshal(p.Meta["io.modelcontextprotocol/protocolVersion"], &v)
		caps := p.Meta["io.modelcontextprotocol/clientCapabilities"]
		switch {
		case v == "" || len(caps) == 0 || caps[0] != '{':
			f.error(m.ID, -32602, "missing _meta", nil)
			return
		case f.mode == "modern-other" || v != "2026-07-28":
			f.error(m.ID, -32022, "Unsupported protocol version", map[string]any{"supported": []string{"2099-01-01"}, "requested": v})
			return
		}
	}
	if f.mode == "legacy-tasks" && f.handleTasks(m) {
		return
	}
	switch m.Method {
	case "server/discover":
		switch {
		case f.mode == "modern-refuse-once" && !f.refused:
			// As the conformance suite's request-metadata server does:
			// -32022 for a version it lists as supported.
			f.refused = true
			f.error(m.ID, -32022, "Unsupported protocol version", map[string]any{"supported": []string{"2026-07-28"}, "requested": "2026-07-28"})
		case f.modern:
			f.result(m.ID, map[string]any{
				"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "fake", "version": "1"}},
				"instructions": "modern fake", "ttlMs": 0, "cacheScope": "public",
			})
		case f.mode == "quiet-probe":
		default:
			f.error(m.ID, -32601, "Method not found", nil)
		}
		return
	case "initialize":
		v := p.ProtocolVer
		if fv := os.Getenv("MCPRT_FAKE_VERSION"); fv != "" {
			v = fv
		}
		f.version = v
		f.result(m.ID, map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":      map[string]any{"name": "fake", "version": "1"},
			"instructions":    "legacy fake",
		})
		return
	case "ping":
		f.result(m.ID, map[string]any{})
		return
	case "tools/list":
		f.mu.Lock()
		tools := append([]string(nil), f.tools...)
		f.mu.Unlock()
		half := len(tools) / 2
		page, next := tools[:half], "page-2"
		if p.Cursor == "page-2" {
			page, next = tools[half:], ""
		}
		var list []any
		for _, t := range page {
			list = append(list, map[string]any{"name": t, "inputSchema": map[string]any{"type": "object"}})
		}
		res := map[string]any{"tools": list}
		if next != "" {
			res["nextCursor"] = next
		}
		f.result(m.ID, res)
		return
	case "tools/call":
		go f.call(m.ID, p.Name, p.Arguments, p.Meta, p.InputResponses, p.RequestState)
		return
	}
	f.error(m.ID, -32601, "Method not found: "+m.Method, nil)
}

func (f *fake) call(id json.RawMessage, name string, args map[string]any, meta, inputs map[string]json.RawMessage, state *string) {
	switch name {
	case "echo":
		s, _ := args["text"].(string)
		f.result(id, text(s))
	case "hang":
	case "crash":
		fmt.Fprintln(os.Stderr, "fatal: crashing as asked")
		os.Exit(3)
	case "exit0":
		os.Exit(0)
	case "progress":
		if tok, ok := meta["progressToken"]; ok {
			for i := 1; i <= 3; i++ {
				f.notify("notifications/progress", map[string]any{"progressToken": tok, "progress": i, "total": 3, "message": fmt.Sprintf("step %d", i)})
			}
		}
		f.result(id, text("done"))
	case "ticks": // n progress notifications ms apart, then the answer (or none: hang)
		n, _ := args["n"].(float64)
		ms, _ := args["ms"].(float64)
		tok, ok := meta["progressToken"]
		for i := 1; i <= int(n); i++ {
			time.Sleep(time.Duration(ms) * time.Millisecond)
			if ok {
				f.notify("notifications/progress", map[string]any{"progressToken": tok, "progress": i})
			}
		}
		if hang, _ := args["hang"].(bool); !hang {
			f.result(id, text("ticked"))
		}
	case "pid":
		f.result(id, text(strconv.Itoa(os.Getpid())))
	case "roots", "sample", "elicit":
		method := map[string]string{"roots": "roots/list", "sample": "sampling/createMessage", "elicit": "elicitation/create"}[name]
		raw := f.ask(method, map[string]any{"message": "please"})
		f.result(id, text(string(raw)))
	case "change":
		f.mu.Lock()
		f.tools = append(f.tools, "new")
		f.mu.Unlock()
		f.notify("notifications/tools/list_changed", nil)
		f.result(id, text("changed"))
	case "batch": // a 2025-03-26 batch: a notification and the response on one line
		f.write([]any{
			map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "batched"}},
			map[string]any{"jsonrpc": "2.0", "id": id, "result": text("batched result")},
		})
	case "huge": // a response of 2 MiB
		f.result(id, text(strings.Repeat("x", 2<<20)))
	case "garbage": // stdout that is not the protocol, then the answer
		f.outMu.Lock()
		f.out.WriteString("Server v1.0 ready!\n{\"half\":\n")
		f.outMu.Unlock()
		f.result(id, text("after garbage"))
	case "latin1": // invalid UTF-8 inside strings: a log message, then the answer
		f.outMu.Lock()
		f.out.WriteString("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"caf\xe9\"}}\n")
		fmt.Fprintf(f.out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"na\xefve \xff\"}]}}\n", id)
		f.out.Flush()
		f.outMu.Unlock()
	case "log":
		f.notify("notifications/message", map[string]any{"level": "info", "data": "hello from the server"})
		f.result(id, text("logged"))
	case "ask": // 2026-07-28 MRTR
		if inputs == nil || state == nil || *state != "st-1" {
			f.result(id, map[string]any{
				"resultType": "input_required",
				"inputRequests": map[string]any{
					"who":   map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "form", "message": "Your name?", "requestedSchema": map[string]any{"type": "object"}}},
					"where": map[string]any{"method": "roots/list"},
				},
				"requestState": "st-1",
			})
			return
		}
		b, _ := json.Marshal(inputs)
		f.result(id, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": string(b)}}})
	case "shed": // input_required with state only: retry at once
		if state == nil {
			f.result(id, map[string]any{"resultType": "input_required", "requestState": "busy"})
			return
		}
		f.result(id, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "state " + *state + fmt.Sprintf(" inputs %v", inputs != nil)}}})
	default:
		f.error(id, -32602, "Unknown tool: "+name, nil)
	}
}

// fakeCmd is the Command that runs the fake in mode; it logs what it reads
// to the returned path.
func fakeCmd(t *testing.T, mode string, env ...string) (client.Command, string) {
	t.Helper()
	log := t.TempDir() + "/in.log"
	return client.Command{
		Path: os.Args[0],
		// The race runtime sleeps a second at exit unless told not to.
		Env: append([]string{"MCPRT_FAKE=" + mode, "MCPRT_FAKE_LOG=" + log, "GORACE=atexit_sleep_ms=0"}, env...),
	}, log
}

// sent returns the messages the fake has read so far.
func sent(t *testing.T, log string) []fakeMsg {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var ms []fakeMsg
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var m fakeMsg
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("client wrote a line that is not JSON: %q", l)
		}
		ms = append(ms, m)
	}
	return ms
}

// eventually polls cond until it holds; the deadline only turns a hang
// into a failure.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
