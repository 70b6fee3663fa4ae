package fault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeHTTP is a small Streamable HTTP MCP server (echo, sleep, panic; both
// eras) that is correct in mode "ok" and breaks one rule in each other
// mode, so each check of the HTTP campaign is shown to fail when, and only
// when, its rule is broken:
//
//	double    answers every 7th echo call twice, on its SSE stream
//	drop      ends every 9th echo call's SSE stream without its response
//	status    answers garbage with 200 and a parse error, not 400
//	getresp   also sends every 5th echo answer on the session's GET stream
//	stall     writes every JSON response under one lock: a client that
//	          does not read stalls all the others
//	nocancel  answers cancelled calls anyway
//	exit1     exits with status 1 on SIGTERM (run as a process)
//	lockout   refuses initialize with 503 once fakeMaxSessions are open,
//	          however long they have been idle
//	evictbusy closes the oldest session, in use or not, to make room for
//	          a new one past fakeMaxSessions
type fakeHTTP struct {
	mode    string
	maxBody int64

	mu       sync.Mutex
	sessions map[string]*fakeSession
	order    []string // session ids, oldest first (evictbusy)
	calls    int
	dropped  []string      // ids of echo calls answered with an empty stream (drop)
	down     chan struct{} // closed on shutdown: sleeps answer with an error
	downOnce sync.Once
	writeMu  sync.Mutex // mode stall
}

type fakeSession struct {
	gone   chan struct{}
	live   map[string]chan struct{} // sleeps, by the client's id; closed: cancelled
	getMsg chan []byte              // mode getresp
}

// fakeMaxSessions is the cap of modes lockout and evictbusy.
const fakeMaxSessions = 16

func newFakeHTTP(mode string, maxBody int64) *fakeHTTP {
	return &fakeHTTP{mode: mode, maxBody: maxBody, sessions: map[string]*fakeSession{}, down: make(chan struct{})}
}

func (f *fakeHTTP) shutdown() { f.downOnce.Do(func() { close(f.down) }) }

func (f *fakeHTTP) jsonReply(w http.ResponseWriter, status int, body string) {
	if f.mode == "stall" {
		f.writeMu.Lock()
		defer f.writeMu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func rpcError(id json.RawMessage, code int, msg string) string {
	if id == nil {
		id = json.RawMessage("null")
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

func rpcResult(id json.RawMessage, result string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func (f *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	f.mu.Lock()
	s := f.sessions[sid]
	f.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		if s == nil {
			f.jsonReply(w, 404, rpcError(nil, -32600, "no such session"))
			return
		}
		f.mu.Lock()
		delete(f.sessions, sid)
		f.mu.Unlock()
		close(s.gone)
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodGet:
		if s == nil {
			f.jsonReply(w, 404, rpcError(nil, -32600, "no such session"))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for {
			select {
			case b := <-s.getMsg:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				w.(http.Flusher).Flush()
			case <-s.gone:
				return
			case <-f.down:
				return
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		f.jsonReply(w, 415, rpcError(nil, -32600, "not application/json"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.maxBody))
	if err != nil {
		f.jsonReply(w, 413, rpcError(nil, -32600, "too large"))
		return
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			RequestID json.RawMessage `json:"requestId"`
			Meta      struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.JSONRPC != "2.0" || m.Method == "" {
		status := 400
		if f.mode == "status" {
			status = 200
		}
		f.jsonReply(w, status, rpcError(nil, -32700, "Parse error"))
		return
	}
	modern := r.Header.Get("Mcp-Protocol-Version") == "2026-07-28"
	switch {
	case modern && m.ID == nil:
		w.WriteHeader(http.StatusAccepted)
		return
	case modern && (r.Header.Get("Mcp-Method") != m.Method || (m.Method == "tools/call" && r.Header.Get("Mcp-Name") != m.Params.Name)):
		f.jsonReply(w, 400, rpcError(m.ID, -32020, "header mismatch"))
		return
	case modern:
	case m.Method == "initialize" && sid == "":
		var b [16]byte
		rand.Read(b[:])
		sid = hex.EncodeToString(b[:])
		f.mu.Lock()
		if len(f.sessions) >= fakeMaxSessions && f.mode == "lockout" {
			f.mu.Unlock()
			f.jsonReply(w, 503, rpcError(m.ID, -32000, "Server busy"))
			return
		}
		for len(f.sessions) >= fakeMaxSessions && f.mode == "evictbusy" {
			old := f.order[0]
			f.order = f.order[1:]
			if s := f.sessions[old]; s != nil {
				delete(f.sessions, old)
				close(s.gone)
			}
		}
		f.order = append(f.order, sid)
		f.sessions[sid] = &fakeSession{gone: make(chan struct{}), live: map[string]chan struct{}{}, getMsg: make(chan []byte, 64)}
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
	case sid == "":
		f.jsonReply(w, 400, rpcError(m.ID, -32600, "no session"))
		return
	case s == nil:
		f.jsonReply(w, 404, rpcError(m.ID, -32600, "no such session"))
		return
	case m.ID == nil:
		if m.Method == "notifications/cancelled" {
			f.mu.Lock()
			if ch := s.live[string(m.Params.RequestID)]; ch != nil {
				delete(s.live, string(m.Params.RequestID))
				close(ch)
			}
			f.mu.Unlock()
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch m.Method {
	case "initialize":
		f.jsonReply(w, 200, rpcResult(m.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`))
	case "server/discover":
		f.jsonReply(w, 200, rpcResult(m.ID, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`))
	case "tools/list":
		if f.mode == "stall" { // paused clients call echo, whose answer takes the lock
			f.jsonReply(w, 200, rpcResult(m.ID, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`))
			return
		}
		f.jsonReply(w, 200, rpcResult(m.ID, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"sleep","inputSchema":{"type":"object"}},{"name":"panic","inputSchema":{"type":"object"}}]}`))
	case "ping":
		f.jsonReply(w, 200, rpcResult(m.ID, `{}`))
	case "tools/call":
		f.call(w, r, s, m.ID, m.Params.Name, m.Params.Arguments, m.Params.Meta.ProgressToken)
	default:
		status := 200
		if modern {
			status = 404
		}
		f.jsonReply(w, status, rpcError(m.ID, -32601, "Method not found"))
	}
}

func (f *fakeHTTP) call(w http.ResponseWriter, r *http.Request, s *fakeSession, id json.RawMessage, name string, args json.RawMessage, progress json.RawMessage) {
	switch name {
	case "echo":
		var a struct{ Text string }
		_ = json.Unmarshal(args, &a)
		text, _ := json.Marshal(a.Text)
		res := rpcResult(id, fmt.Sprintf(`{"content":[{"type":"text","text":%s}]}`, text))
		f.mu.Lock()
		f.calls++
		n := f.calls
		f.mu.Unlock()
		switch {
		case f.mode == "double" && n%7 == 0:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\ndata: %s\n\n", res, res)
		case f.mode == "drop" && n%9 == 0:
			f.mu.Lock()
			f.dropped = append(f.dropped, string(id))
			f.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
		case f.mode == "getresp" && n%5 == 0 && s != nil:
			select {
			case s.getMsg <- []byte(res):
			default:
			}
			f.jsonReply(w, 200, res)
		default:
			f.jsonReply(w, 200, res)
		}
	case "panic":
		f.jsonReply(w, 200, rpcResult(id, `{"content":[{"type":"text","text":"boom"}],"isError":true}`))
	case "sleep":
		var a struct{ Ms int }
		_ = json.Unmarshal(args, &a)
		cancel := make(chan struct{})
		if s != nil {
			f.mu.Lock()
			s.live[string(id)] = cancel
			f.mu.Unlock()
			defer func() {
				f.mu.Lock()
				if s.live[string(id)] == cancel {
					delete(s.live, string(id))
				}
				f.mu.Unlock()
			}()
		}
		done := time.NewTimer(time.Duration(a.Ms) * time.Millisecond)
		defer done.Stop()
		var tick <-chan time.Time
		sse := false
		if progress != nil {
			t := time.NewTicker(max(time.Duration(a.Ms)*time.Millisecond/10, time.Millisecond))
			defer t.Stop()
			tick = t.C
		}
		gone := make(<-chan struct{})
		if s != nil {
			gone = s.gone
		}
		reply := func(b string) {
			if sse {
				fmt.Fprintf(w, "data: %s\n\n", b)
				return
			}
			f.jsonReply(w, 200, b)
		}
		for {
			select {
			case <-done.C:
				reply(rpcResult(id, `{"content":[{"type":"text","text":"slept"}]}`))
				return
			case <-tick:
				if !sse {
					sse = true
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(200)
				}
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":1}}\n\n", progress)
				w.(http.Flusher).Flush()
			case <-cancel:
				if f.mode == "nocancel" {
					reply(rpcError(id, -32800, "cancelled"))
					return
				}
				if !sse {
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(200)
				}
				return
			case <-gone:
				reply(rpcError(id, -32603, "the session ended"))
				return
			case <-f.down:
				reply(rpcError(id, -32603, "shutting down"))
				return
			case <-r.Context().Done():
				return // the client left: 2026-07-28's cancellation
			}
		}
	default:
		f.jsonReply(w, 200, rpcError(id, -32602, "Unknown tool"))
	}
}

// startFakeHTTP serves a fake in-process, on a loopback port, at /mcp.
func startFakeHTTP(t *testing.T, mode string, maxBody int64) (string, *fakeHTTP) {
	t.Helper()
	f := newFakeHTTP(mode, maxBody)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f}
	go srv.Serve(ln)
	t.Cleanup(func() {
		f.shutdown()
		srv.Close()
	})
	return "http://" + ln.Addr().String() + "/mcp", f
}

// drops is how many of the campaign's echo calls the fake dropped. The
// health check after the campaign is an echo call too, and is dropped when
// it happens to be a 9th: that one is not among the report's requests.
func (f *fakeHTTP) drops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, id := range f.dropped {
		if !strings.HasPrefix(id, `"fault-health`) {
			n++
		}
	}
	return n
}

// fakeHTTPEnv runs this test binary as the fake HTTP server, in a mode.
const fakeHTTPEnv = "FAULT_FAKE_HTTP_SERVER"

// TestFakeHTTPServer is not a test: it is the fake HTTP server's entry
// point. It prints its URL on stdout (mcprt prints it on stderr) and shuts
// down on SIGTERM.
func TestFakeHTTPServer(t *testing.T) {
	mode := os.Getenv(fakeHTTPEnv)
	if mode == "" {
		t.Skip("the fake HTTP server runs only as a child of the campaign tests")
	}
	maxBody, _ := strconv.ParseInt(os.Getenv(fakeHTTPEnv+"_MAX_BODY"), 10, 64)
	if maxBody <= 0 {
		maxBody = 1 << 20
	}
	f := newFakeHTTP(mode, maxBody)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(2)
	}
	srv := &http.Server{Handler: f}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("fake: listening on http://%s/mcp, ready.\n", ln.Addr())
	<-term
	f.shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil || !errors.Is(<-served, http.ErrServerClosed) {
		os.Exit(3)
	}
	if mode == "exit1" {
		os.Exit(1)
	}
	os.Exit(0)
}

// fakeHTTPCommand is the argv and environment that run the fake in mode.
func fakeHTTPCommand(t *testing.T, mode string, maxBody int64) ([]string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^TestFakeHTTPServer$"},
		append(os.Environ(), fakeHTTPEnv+"="+mode, fakeHTTPEnv+"_MAX_BODY="+strconv.FormatInt(maxBody, 10))
}
