package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// Generous timeouts: they only catch hangs, they assert nothing about speed.
const (
	callTimeout = 20 * time.Second
	exitTimeout = 15 * time.Second
)

// Options configure one server process.
type Options struct {
	Args []string // flags after "serve"
	// Paused starts the stdout reader blocked until Resume: the client does
	// not read the server's output at all until then.
	Paused bool
	// AllowBatches accepts JSON arrays of responses on stdout (2025-03-26).
	AllowBatches bool
	// AllowRequests accepts requests from the server (legacy sampling,
	// roots, elicitation); see ServerRequest.
	AllowRequests bool
}

// Msg is one message the server wrote (or, for a batch line, the array).
type Msg struct {
	Raw    []byte
	ID     json.RawMessage // nil for notifications
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
	Batch  []*Msg // set when the line was a JSON array
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// IDKey is the raw id, as the map key responses are filed under.
func (m *Msg) IDKey() string { return string(m.ID) }

func (m *Msg) String() string {
	const max = 300
	if len(m.Raw) > max {
		return string(m.Raw[:max]) + fmt.Sprintf("... (%d bytes)", len(m.Raw))
	}
	return string(m.Raw)
}

// Client drives one `mcprt serve` process over three pipes.
type Client struct {
	t             testing.TB
	cmd           *exec.Cmd
	stdin         *os.File // our write end of the server's stdin
	stdout        *os.File // our read end of the server's stdout
	stderr        *syncBuffer
	allowBatches  bool
	allowRequests bool

	gate     chan struct{}
	gateOnce sync.Once
	wmu      sync.Mutex
	nextID   atomic.Int64

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every new line
	lines      []*Msg
	byID       map[string][]*Msg
	notes      []*Msg
	requests   []*Msg // requests from the server
	violations []string
	repeatOK   map[string]bool // ids the test itself reuses

	readerDone chan struct{}
	exited     chan struct{}
	exitState  *os.ProcessState
	exitErr    error
	exitedAt   time.Time
	stdinClose time.Time
	stdinOnce  sync.Once
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start runs `mcprt serve` with o.Args. The process is killed, and every
// protocol violation seen on its stdout reported, when the test ends.
func Start(t testing.TB, o Options) *Client {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{
		t:             t,
		stdin:         inW,
		stdout:        outR,
		stderr:        &syncBuffer{},
		allowBatches:  o.AllowBatches,
		allowRequests: o.AllowRequests,
		gate:          make(chan struct{}),
		changed:       make(chan struct{}),
		byID:          map[string][]*Msg{},
		repeatOK:      map[string]bool{},
		readerDone:    make(chan struct{}),
		exited:        make(chan struct{}),
	}
	c.cmd = exec.Command(binPath, append([]string{"serve"}, o.Args...)...)
	c.cmd.Stdin = inR
	c.cmd.Stdout = outW
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	go c.wait()
	go c.read()
	if !o.Paused {
		c.Resume()
	}
	t.Cleanup(c.cleanup)
	return c
}

func (c *Client) wait() {
	err := c.cmd.Wait()
	c.mu.Lock()
	c.exitErr = err
	c.exitState = c.cmd.ProcessState
	c.exitedAt = time.Now()
	c.mu.Unlock()
	close(c.exited)
}

func (c *Client) cleanup() {
	select {
	case <-c.exited:
	default:
		_ = c.cmd.Process.Kill()
	}
	select {
	case <-c.exited:
	case <-time.After(exitTimeout):
		c.t.Errorf("mcprt did not exit after SIGKILL")
	}
	c.stdinOnce.Do(func() { c.stdin.Close() })
	c.Resume()
	select {
	case <-c.readerDone:
	case <-time.After(exitTimeout):
		c.t.Errorf("stdout reader did not finish")
	}
	c.stdout.Close()
	c.mu.Lock()
	v := c.violations
	c.mu.Unlock()
	for _, s := range v {
		c.t.Errorf("protocol violation on stdout: %s", s)
	}
	if c.t.Failed() && c.stderr.String() != "" {
		c.t.Logf("mcprt stderr (tail):\n%s", tail(c.stderr.String(), 4000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Resume lets the stdout reader run (see Options.Paused).
func (c *Client) Resume() { c.gateOnce.Do(func() { close(c.gate) }) }

// read is the only reader of the server's stdout: every line must be one
// valid JSON-RPC 2.0 message.
func (c *Client) read() {
	defer close(c.readerDone)
	<-c.gate
	br := bufio.NewReaderSize(c.stdout, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				c.violate("unterminated last line %q", clip(line))
			} else {
				c.handle(line[:len(line)-1])
			}
		}
		if err != nil {
			return
		}
	}
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func (c *Client) violate(format string, args ...any) {
	c.mu.Lock()
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func (c *Client) handle(line []byte) {
	m, err := parseLine(line, c.allowBatches)
	if err != nil {
		c.violate("%v: %q", err, clip(line))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, m)
	file := func(e *Msg) {
		if e.ID != nil && e.Method != "" {
			if !c.allowRequests {
				c.violations = append(c.violations, fmt.Sprintf("unexpected request from the server: %s", e))
			}
			c.requests = append(c.requests, e)
			return
		}
		if e.ID == nil {
			c.notes = append(c.notes, e)
			return
		}
		k := e.IDKey()
		c.byID[k] = append(c.byID[k], e)
		if n := len(c.byID[k]); n > 1 && k != "null" && !c.repeatOK[k] {
			c.violations = append(c.violations, fmt.Sprintf("id %s answered %d times; latest: %s", k, n, e))
		}
	}
	if m.Batch != nil {
		for _, e := range m.Batch {
			file(e)
		}
	} else {
		file(m)
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// parseLine checks that one stdout line is a JSON-RPC 2.0 response or
// notification (or, when allowed, a non-empty array of them).
func parseLine(line []byte, allowBatch bool) (*Msg, error) {
	if !utf8.Valid(line) {
		return nil, errors.New("line is not valid UTF-8")
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, errors.New("blank line")
	}
	if !json.Valid(line) {
		return nil, errors.New("line is not a single JSON value")
	}
	if trimmed[0] == '[' {
		if !allowBatch {
			return nil, errors.New("unexpected JSON array (batch response)")
		}
		var parts []json.RawMessage
		if err := json.Unmarshal(line, &parts); err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			return nil, errors.New("empty batch response")
		}
		m := &Msg{Raw: append([]byte(nil), line...), Batch: []*Msg{}}
		for i, p := range parts {
			e, err := parseObject(p)
			if err != nil {
				return nil, fmt.Errorf("batch element %d: %w", i, err)
			}
			if e.ID == nil {
				return nil, fmt.Errorf("batch element %d is not a response", i)
			}
			m.Batch = append(m.Batch, e)
		}
		return m, nil
	}
	return parseObject(line)
}

func parseObject(raw []byte) (*Msg, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if string(obj["jsonrpc"]) != `"2.0"` {
		return nil, fmt.Errorf(`jsonrpc is %s, want "2.0"`, obj["jsonrpc"])
	}
	m := &Msg{Raw: append([]byte(nil), raw...)}
	if method, ok := obj["method"]; ok {
		for k := range obj {
			if k != "jsonrpc" && k != "method" && k != "params" && k != "id" {
				return nil, fmt.Errorf("notification has unexpected member %q", k)
			}
		}
		if id, ok := obj["id"]; ok {
			if id[0] != '"' && !validResponseID(id) || string(id) == "null" {
				return nil, fmt.Errorf("request id %s is not a string or an integer", id)
			}
			m.ID = id
		}
		if err := json.Unmarshal(method, &m.Method); err != nil || method[0] != '"' {
			return nil, errors.New("method is not a string")
		}
		if p, ok := obj["params"]; ok {
			if p[0] != '{' {
				return nil, errors.New("notification params is not an object")
			}
			m.Params = p
		}
		return m, nil
	}
	for k := range obj {
		if k != "jsonrpc" && k != "id" && k != "result" && k != "error" {
			return nil, fmt.Errorf("response has unexpected member %q", k)
		}
	}
	id, ok := obj["id"]
	if !ok {
		return nil, errors.New("response without id")
	}
	if !validResponseID(id) {
		return nil, fmt.Errorf("id %s is not a string, an integer or null", id)
	}
	m.ID = id
	res, hasRes := obj["result"]
	errRaw, hasErr := obj["error"]
	if hasRes == hasErr {
		return nil, errors.New("response must have exactly one of result and error")
	}
	if hasRes {
		if res[0] != '{' {
			return nil, errors.New("result is not an object")
		}
		m.Result = res
		return m, nil
	}
	var eobj map[string]json.RawMessage
	if err := json.Unmarshal(errRaw, &eobj); err != nil {
		return nil, errors.New("error is not an object")
	}
	code, msg := eobj["code"], eobj["message"]
	if code == nil || bytes.ContainsAny(code, ".eE\"") || code[0] == 'n' || code[0] == 't' || code[0] == 'f' || code[0] == '{' || code[0] == '[' {
		return nil, fmt.Errorf("error code %s is not an integer", code)
	}
	if msg == nil || msg[0] != '"' {
		return nil, errors.New("error message is not a string")
	}
	for k := range eobj {
		if k != "code" && k != "message" && k != "data" {
			return nil, fmt.Errorf("error has unexpected member %q", k)
		}
	}
	m.Error = &RPCError{}
	if err := json.Unmarshal(errRaw, m.Error); err != nil {
		return nil, err
	}
	return m, nil
}

func validResponseID(id json.RawMessage) bool {
	switch c := id[0]; {
	case c == '"':
		return true // json.Valid already checked the string
	case c == 'n':
		return string(id) == "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return !bytes.ContainsAny(id, ".eE")
	}
	return false
}

// waitUntil blocks until cond (run with c.mu held) holds, the reader ends,
// or timeout passes. It reports whether cond held.
func (c *Client) waitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ok := cond()
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-c.readerDone:
			c.mu.Lock()
			defer c.mu.Unlock()
			return cond()
		case <-deadline.C:
			return false
		}
	}
}

// SendRaw writes b to the server's stdin as is.
func (c *Client) SendRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.stdin.Write(b)
	return err
}

// Send writes one line (a '\n' is appended).
func (c *Client) Send(line string) {
	c.t.Helper()
	if err := c.SendRaw([]byte(line + "\n")); err != nil {
		c.t.Fatalf("writing to mcprt stdin: %v", err)
	}
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// RequestLine encodes a request (id nil: a notification).
func RequestLine(id any, method string, params any) string {
	b, err := json.Marshal(request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// NewID returns a fresh integer id.
func (c *Client) NewID() int64 { return c.nextID.Add(1) + 1000 }

// Request sends a request without waiting; it returns the raw id key.
func (c *Client) Request(id any, method string, params any) string {
	c.t.Helper()
	key, err := c.requestErr(id, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	return key
}

func (c *Client) requestErr(id any, method string, params any) (string, error) {
	key, err := json.Marshal(id)
	if err != nil {
		return "", err
	}
	if err := c.SendRaw([]byte(RequestLine(id, method, params) + "\n")); err != nil {
		return "", fmt.Errorf("writing %s request: %w", method, err)
	}
	return string(key), nil
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.t.Helper()
	c.Send(RequestLine(nil, method, params))
}

// Call sends a request with a fresh id and waits for its response.
func (c *Client) Call(method string, params any) *Msg {
	c.t.Helper()
	return c.CallID(c.NewID(), method, params)
}

// CallID sends a request with the given id and waits for its response.
func (c *Client) CallID(id any, method string, params any) *Msg {
	c.t.Helper()
	return c.Response(c.Request(id, method, params), callTimeout)
}

// CallErr is Call for goroutines other than the test's: it reports failures
// as errors instead of failing the test.
func (c *Client) CallErr(id any, method string, params any) (*Msg, error) {
	key, err := c.requestErr(id, method, params)
	if err != nil {
		return nil, err
	}
	m := c.WaitResponse(key, callTimeout)
	if m == nil {
		return nil, fmt.Errorf("no response to %s id %s within %v", method, key, callTimeout)
	}
	return m, nil
}

// WaitResponse returns the first response filed under the raw id key, or
// nil after timeout.
func (c *Client) WaitResponse(key string, timeout time.Duration) *Msg {
	var m *Msg
	c.waitUntil(timeout, func() bool {
		if r := c.byID[key]; len(r) > 0 {
			m = r[0]
			return true
		}
		return false
	})
	return m
}

// Response is WaitResponse that fails the test on timeout.
func (c *Client) Response(key string, timeout time.Duration) *Msg {
	c.t.Helper()
	m := c.WaitResponse(key, timeout)
	if m == nil {
		c.t.Fatalf("no response for id %s within %v\nstderr tail:\n%s", key, timeout, tail(c.stderr.String(), 2000))
	}
	return m
}

// ServerRequest waits for the next request from the server with method
// that the test has not taken yet, and takes it.
func (c *Client) ServerRequest(method string, timeout time.Duration) *Msg {
	c.t.Helper()
	m := c.nextServerRequest(method, timeout)
	if m == nil {
		c.t.Fatalf("no %s request from the server within %v", method, timeout)
	}
	return m
}

// Responses returns every response filed under key so far.
func (c *Client) Responses(key string) []*Msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Msg(nil), c.byID[key]...)
}

// LineCount is how many valid lines have been read so far.
func (c *Client) LineCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

// Line waits for the i-th (0-based) valid line.
func (c *Client) Line(i int) *Msg {
	c.t.Helper()
	var m *Msg
	if !c.waitUntil(callTimeout, func() bool {
		if len(c.lines) > i {
			m = c.lines[i]
			return true
		}
		return false
	}) {
		c.t.Fatalf("no output line #%d within %v", i, callTimeout)
	}
	return m
}

// SendNext sends one line and returns the next line the server writes.
// Use it only when nothing else is in flight.
func (c *Client) SendNext(line string) *Msg {
	c.t.Helper()
	n := c.LineCount()
	c.Send(line)
	return c.Line(n)
}

// AssertSilent sends line, then a ping, and checks that the very next
// output line is the ping's answer: the line itself got no response.
func (c *Client) AssertSilent(line string) {
	c.t.Helper()
	n := c.LineCount()
	c.Send(line)
	id := fmt.Sprintf("silence-probe-%d", c.NewID())
	key := c.Request(id, "ping", nil)
	m := c.Line(n)
	if m.IDKey() != key {
		c.t.Errorf("line %s got a response: %s", clip([]byte(line)), m)
		c.Response(key, callTimeout)
		return
	}
	if m.Error != nil || string(m.Result) != "{}" {
		c.t.Errorf("ping after %s: got %s, want result {}", clip([]byte(line)), m)
	}
}

// Initialize runs the legacy handshake: initialize, then
// notifications/initialized. It returns the initialize response.
func (c *Client) Initialize(version string) *Msg {
	c.t.Helper()
	return c.InitializeWith(version, map[string]any{})
}

// InitializeWith is Initialize declaring the given client capabilities.
func (c *Client) InitializeWith(version string, caps map[string]any) *Msg {
	c.t.Helper()
	m := c.Call("initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "mcprt-e2e", "version": "0.0.1"},
	})
	if m.Error != nil {
		c.t.Fatalf("initialize %s: %s", version, m)
	}
	c.Notify("notifications/initialized", nil)
	return m
}

// CloseStdin closes the server's stdin (EOF) and records when.
func (c *Client) CloseStdin() {
	c.stdinOnce.Do(func() {
		c.wmu.Lock()
		c.stdinClose = time.Now()
		c.stdin.Close()
		c.wmu.Unlock()
	})
}

// CloseStdoutReader closes our read end of the server's stdout. Only for
// a client started Paused, whose reader has not started.
func (c *Client) CloseStdoutReader() { c.stdout.Close() }

// Signal sends sig to the server.
func (c *Client) Signal(sig syscall.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("signal %v: %v", sig, err)
	}
}

// WaitExit waits for the process to exit and returns its exit code (-1 when
// killed by a signal) and whether it exited within timeout.
func (c *Client) WaitExit(timeout time.Duration) (int, bool) {
	select {
	case <-c.exited:
	default:
		select {
		case <-c.exited:
		case <-time.After(timeout):
			return 0, false
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exitState.ExitCode(), true
}

// SinceStdinClose is how long after CloseStdin the process exited.
func (c *Client) SinceStdinClose() time.Duration {
	<-c.exited
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exitedAt.Sub(c.stdinClose)
}

// WaitReader waits until stdout reached EOF and every line was read.
func (c *Client) WaitReader(timeout time.Duration) bool {
	select {
	case <-c.readerDone:
		return true
	case <-time.After(timeout):
		return false
	}
}

// AllowRepeat marks a raw id the test sends more than once on purpose.
func (c *Client) AllowRepeat(key string) {
	c.mu.Lock()
	c.repeatOK[key] = true
	c.mu.Unlock()
}

// Stderr returns what the server wrote to stderr so far.
func (c *Client) Stderr() string { return c.stderr.String() }

// WaitStderr waits until the server's stderr holds every one of want, and
// reports whether it did within timeout.
func (c *Client) WaitStderr(timeout time.Duration, want ...string) bool {
	deadline := time.Now().Add(timeout)
	for {
		s := c.Stderr()
		if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(s, w) }) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ---- helpers on results ----

func mustUnmarshal(t testing.TB, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decoding %s: %v", clip(raw), err)
	}
}

// wantResult fails unless m is a success response; it returns the result
// decoded as a map.
func wantResult(t testing.TB, m *Msg) map[string]json.RawMessage {
	t.Helper()
	if m.Error != nil || m.Result == nil {
		t.Fatalf("want a result, got %s", m)
	}
	var r map[string]json.RawMessage
	mustUnmarshal(t, m.Result, &r)
	return r
}

// wantError fails unless m is an error response with code.
func wantError(t testing.TB, m *Msg, code int) *RPCError {
	t.Helper()
	if m.Error == nil {
		t.Errorf("want error %d, got %s", code, m)
		return &RPCError{}
	}
	if m.Error.Code != code {
		t.Errorf("want error code %d, got %s", code, m)
	}
	return m.Error
}

// toolText returns the text of a tools/call result's single text block.
func toolText(t testing.TB, m *Msg) string {
	t.Helper()
	text, err := toolTextErr(m)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func toolTextErr(m *Msg) (string, error) {
	if m.Error != nil || m.Result == nil {
		return "", fmt.Errorf("want a tools/call result, got %s", m)
	}
	var r struct {
		Content []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		return "", err
	}
	if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text == nil {
		return "", fmt.Errorf("want one text block, got %s", m)
	}
	return *r.Content[0].Text, nil
}

func echoParams(text string) map[string]any {
	return map[string]any{"name": "echo", "arguments": map[string]any{"text": text}}
}

func sleepParams(ms int) map[string]any {
	return map[string]any{"name": "sleep", "arguments": map[string]any{"ms": ms}}
}

// jsonString returns s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(i int) string { return strconv.Itoa(i) }

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
