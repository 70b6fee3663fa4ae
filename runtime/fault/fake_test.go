package fault

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The fake server is this test binary run again with fakeEnv set to a mode:
// a small stdio MCP server (echo, sleep, panic) that is correct in mode "ok"
// and breaks one rule in each other mode, so each check of the campaign is
// shown to fail when, and only when, its rule is broken.
const fakeEnv = "FAULT_FAKE_SERVER"

// fakeCommand is the argv that runs the fake server in mode.
func fakeCommand(t *testing.T, mode string) ([]string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^TestFakeServer$"}, append(os.Environ(), fakeEnv+"="+mode)
}

// TestFakeServer is not a test: it is the fake server's entry point.
func TestFakeServer(t *testing.T) {
	mode := os.Getenv(fakeEnv)
	if mode == "" {
		t.Skip("the fake server runs only as a child of the campaign tests")
	}
	// Exit here: the testing package must not print PASS on the protocol stream.
	os.Exit(fakeServe(mode))
}

type fakeReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

type fakeServer struct {
	mode  string
	mu    sync.Mutex
	out   *bufio.Writer
	calls int
	// live are the sleeps in progress, by raw id. Closing one's channel
	// ends it: with an error if it is still listed (drain), silently if it
	// was removed first (cancelled).
	live map[string]chan struct{}
	wg   sync.WaitGroup
}

func fakeServe(mode string) int {
	s := &fakeServer{mode: mode, out: bufio.NewWriter(os.Stdout), live: map[string]chan struct{}{}}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	signal.Ignore(syscall.SIGPIPE) // a closed stdout is a write error, not death
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
loop:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break loop
			}
			s.line(l)
		case <-term:
			break loop
		}
	}
	s.mu.Lock()
	for _, ch := range s.live {
		close(ch) // left in live: the sleep answers with an error
	}
	s.mu.Unlock()
	s.wg.Wait()
	if mode == "exit1" {
		return 1
	}
	if mode == "noexit" {
		select {}
	}
	return 0
}

func (s *fakeServer) send(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendLocked(format, args...)
}

func (s *fakeServer) sendLocked(format string, args ...any) {
	fmt.Fprintf(s.out, format+"\n", args...)
	if s.out.Flush() != nil {
		os.Exit(0) // the client closed stdout: nobody is listening
	}
}

func (s *fakeServer) result(id json.RawMessage, result string) {
	s.send(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func (s *fakeServer) fail(id json.RawMessage, code int, msg string) {
	s.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

func (s *fakeServer) line(l []byte) {
	var r fakeReq
	if err := json.Unmarshal(l, &r); err != nil {
		s.fail(json.RawMessage("null"), -32700, "Parse error")
		return
	}
	if r.ID == nil {
		if r.Method == "notifications/cancelled" {
			s.cancel(string(r.Params.RequestID))
		}
		return
	}
	switch r.Method {
	case "initialize":
		s.result(r.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`)
	case "tools/list":
		s.result(r.ID, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"sleep","inputSchema":{"type":"object"}},{"name":"panic","inputSchema":{"type":"object"}}]}`)
	case "ping":
		s.result(r.ID, `{}`)
	case "tools/call":
		s.call(&r)
	default:
		s.fail(r.ID, -32601, "Method not found")
	}
}

func (s *fakeServer) call(r *fakeReq) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if s.mode == "crash" && n == 20 {
		os.Exit(2)
	}
	if s.mode == "unknown" && n == 10 {
		s.result(json.RawMessage("999999"), `{"content":[]}`)
	}
	if s.mode == "garbage" && n == 10 {
		s.send("debug: a stray print on stdout")
	}
	switch r.Params.Name {
	case "echo":
		var a struct{ Text string }
		_ = json.Unmarshal(r.Params.Arguments, &a)
		if s.mode == "wrong" && n == 5 {
			a.Text += "!"
		}
		if (s.mode == "lose" && n%13 == 0) || (s.mode == "wedge" && n > 150) {
			return
		}
		text, _ := json.Marshal(a.Text)
		res := fmt.Sprintf(`{"content":[{"type":"text","text":%s}]}`, text)
		s.result(r.ID, res)
		if s.mode == "double" && n%7 == 0 {
			s.result(r.ID, res)
		}
	case "panic":
		s.result(r.ID, `{"content":[{"type":"text","text":"boom"}],"isError":true}`)
	case "sleep":
		var a struct{ Ms int }
		_ = json.Unmarshal(r.Params.Arguments, &a)
		ch := make(chan struct{})
		key := string(r.ID)
		s.mu.Lock()
		s.live[key] = ch
		s.mu.Unlock()
		s.wg.Add(1)
		go s.sleep(r.ID, key, time.Duration(a.Ms)*time.Millisecond, ch)
	default:
		s.fail(r.ID, -32602, "Unknown tool")
	}
}

func (s *fakeServer) sleep(id json.RawMessage, key string, d time.Duration, ch chan struct{}) {
	defer s.wg.Done()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ch:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[key] != ch {
		return // cancelled
	}
	delete(s.live, key)
	select {
	case <-ch:
		s.sendLocked(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"shutting down"}}`, id)
	default:
		s.sendLocked(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"slept"}]}}`, id)
	}
}

// cancel drops a sleep's answer; in mode "nocancel" it answers it instead,
// with an error, as some servers wrongly do.
func (s *fakeServer) cancel(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.live[key]
	if ch == nil {
		return
	}
	delete(s.live, key)
	close(ch)
	if s.mode == "nocancel" {
		s.sendLocked(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32800,"message":"cancelled"}}`, key)
	}
}
