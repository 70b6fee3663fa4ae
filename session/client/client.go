package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/trace"
	"github.com/mcprt/mcprt/stdio"
)

// How long the end of a session waits for the rest of the evidence: after
// the process exited, for stdout to drain (responses written just before
// exiting still count) and for the last stderr lines (they explain the
// exit); after stdout closed, for the exit status. Each is bounded because
// a grandchild may hold a pipe open forever.
const (
	drainWait  = 500 * time.Millisecond
	statusWait = 500 * time.Millisecond
)

// maxInputRounds bounds the input_required retries of one request, so a
// server that keeps asking cannot keep a caller forever.
const maxInputRounds = 10

// Client is one MCP session with a server process it started (Connect) or
// with a Streamable HTTP endpoint (ConnectURL). Its methods are safe for
// concurrent use. Close must be called to reap the process (or end the
// HTTP session) and stop the client's goroutines, also after the server
// went away by itself.
type Client struct {
	opts Options
	cmd  *exec.Cmd
	log  *slog.Logger

	stdout, stderr *os.File // our read ends; closed by Close
	w              *writer
	sink           *stderrSink
	h              *httpConn // Streamable HTTP (ConnectURL); nil over stdio

	// Set during Connect, read-only afterwards.
	era          Era
	version      string
	serverInfo   mcp.Implementation
	caps         map[string]json.RawMessage
	instructions string
	clientCaps   json.RawMessage // for the negotiated version

	nextID atomic.Int64
	meta   atomic.Pointer[eraMeta] // the 2026-07-28 _meta, encoded once
	// handshook is set once Connect's handshake succeeded. A server that
	// never completed it gets no stdin-EOF grace at Close: it has shown it
	// is not listening, so waiting for it to notice EOF only makes a failed
	// connect (a -timeout, a wrong command) slower by CloseGrace.
	handshook atomic.Bool
	// sessionSince is when the handshake opened a legacy session (unix
	// nanoseconds; 0: none, as in 2026-07-28), for its duration when it
	// ends (Options.Tracer's OnSessionEnd).
	sessionSince atomic.Int64
	// extMeta is the last _meta made for a request's own extensions
	// (WithExtensions): a gateway's client mostly sends the same ones.
	extMeta atomic.Pointer[extEraMeta]
	// taskSt is the bookkeeping of tasks (tasks.go), made on first use.
	taskSt atomic.Pointer[taskState]

	mu       sync.Mutex
	pending  pendingTable
	inbound  map[string]context.CancelFunc // server requests being answered
	subs     map[int64]subscription
	nextSub  int64
	endErr   error // why the session ended; nil while it runs
	termSent bool
	killed   bool
	cache    map[string]any // list method -> []Tool, []Resource, ...
	dirty    map[ListKind]bool
	changes  map[ListKind]int // list_changed notifications seen, by kind
	timeouts []*timeoutQueue  // at most maxTimeoutQueues, one per duration
	epoch    time.Time        // timeoutEntry.at counts from it

	done      chan struct{} // closed when endErr is set
	procDone  chan struct{} // closed when the process was reaped
	procState *os.ProcessState
	readDone  chan struct{} // stdout reached EOF
	errDone   chan struct{} // stderr reached EOF
	refresh   chan struct{} // capacity 1: a list is dirty

	bg        context.Context // ends at Close: background work
	bgCancel  context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

type pending struct {
	method      string
	ch          chan reply // capacity 1
	progress    func(Progress)
	cancellable bool
	// For a request sent with Go: who takes its answer, its timeout, and
	// its own timer when the timeout has no queue.
	async   Answerer
	timeout time.Duration
	queued  bool // the timeout is in a queue (see addTimeout)
	timer   *time.Timer
	// token and metaBuf hold the progressToken member while begin writes
	// the request (kept across the pool, as ch is).
	token   [20]byte
	metaBuf []member
	// For a request whose progress restarts its timeout (MaxTimeout), as
	// time since Client.epoch: its last progress (0: none yet), and the
	// latest its timeout may reach.
	progressAt, maxAt time.Duration
	// kept, set for CallToolTask's tools/call that asked for progress:
	// its progress func outlives the answer, and the id goes here.
	kept *int64
}

type reply struct {
	result   json.RawMessage
	err      error
	timedOut bool // its timeout passed (see timeoutQueue)
}

type subscription struct {
	method string
	fn     func(Notification)
}

// Connect starts the server and opens a session with it, in the era the
// options ask for. If the server exits while connecting, the error is an
// *ExitError carrying its first and last stderr lines. ctx bounds the whole
// connect, the era probe included; each request of the handshake is also
// bounded by Options.Timeout. When ctx has a deadline, the server/discover
// probe of EraAuto gets at most half of the time left (and at most
// ProbeTimeout), so a legacy server that ignores the probe still has time
// to answer initialize.
func Connect(ctx context.Context, cmd Command, opts *Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c, err := start(cmd, o)
	if err != nil {
		return nil, err
	}
	if err := c.handshake(ctx); err != nil {
		c.Close()
		var ee *ExitError
		if !errors.As(err, &ee) {
			if tail := c.sink.lines(); len(tail) > 0 {
				err = fmt.Errorf("%w (server stderr: %s)", err, joinLines(tail))
			}
		}
		return nil, fmt.Errorf("client: connecting to %s: %w", cmd, err)
	}
	c.handshook.Store(true)
	c.sessionOpened()
	c.wg.Add(1)
	go c.refresher()
	return c, nil
}

func start(cmd Command, o Options) (*Client, error) {
	if cmd.Path == "" {
		return nil, errors.New("client: empty command")
	}
	// Our own pipes rather than exec's StdoutPipe: Wait would close those
	// as soon as the process exits, losing what it wrote last, and we want
	// stdin closed (the polite stop) before anything else.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	ec := exec.Command(cmd.Path, cmd.Args...)
	ec.Dir = cmd.Dir
	if len(cmd.Env) > 0 {
		ec.Env = append(os.Environ(), cmd.Env...)
	}
	ec.Stdin, ec.Stdout, ec.Stderr = inR, outW, errW
	ownGroup(ec)
	if o.SysProcAttr != nil {
		if ec.SysProcAttr == nil {
			ec.SysProcAttr = &syscall.SysProcAttr{}
		}
		o.SysProcAttr(ec.SysProcAttr)
	}
	err = ec.Start()
	closeAll(inR, outW, errW) // the child has its copies
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, fmt.Errorf("client: starting %s: %w", cmd, err)
	}
	c := newClient(o, o.Logger.With(slog.String("server", cmd.Path), slog.Int("pid", ec.Process.Pid)))
	c.cmd = ec
	c.stdout, c.stderr = outR, errR
	c.w = newWriter(inW)
	c.procDone = make(chan struct{})
	c.readDone = make(chan struct{})
	c.errDone = make(chan struct{})
	c.sink = newStderrSink(o.StderrLines, o.LogLimit, o.LogWindow, c.log, o.OnStderr)
	c.wg.Add(5)
	go func() {
		defer c.wg.Done()
		// Reaps the process whatever else happens: no zombies.
		_ = ec.Wait()
		c.mu.Lock()
		c.procState = ec.ProcessState
		c.mu.Unlock()
		close(c.procDone)
	}()
	go func() {
		defer c.wg.Done()
		defer close(c.readDone)
		c.read()
	}()
	go func() {
		defer c.wg.Done()
		defer close(c.errDone)
		c.sink.consume(c.stderr)
	}()
	go func() {
		defer c.wg.Done()
		c.w.run()
	}()
	go func() {
		defer c.wg.Done()
		c.monitor()
	}()
	return c, nil
}

// newClient is the state every transport shares.
func newClient(o Options, log *slog.Logger) *Client {
	c := &Client{
		opts:    o,
		log:     log,
		inbound: map[string]context.CancelFunc{},
		subs:    map[int64]subscription{},
		cache:   map[string]any{},
		dirty:   map[ListKind]bool{},
		changes: map[ListKind]int{},
		done:    make(chan struct{}),
		refresh: make(chan struct{}, 1),
		epoch:   time.Now(),
	}
	c.bg, c.bgCancel = context.WithCancel(context.Background())
	return c
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// monitor ends the session when the server goes away: its stdout closed,
// or the process exited.
func (c *Client) monitor() {
	select {
	case <-c.readDone:
	case <-c.procDone:
		waitAny(drainWait, c.readDone, c.done)
	case <-c.done:
		return
	}
	waitAny(statusWait, c.procDone, c.done)
	waitAny(drainWait, c.errDone, c.done)
	c.mu.Lock()
	st := c.procState
	c.mu.Unlock()
	c.end(exitErrorFrom(st, c.sink.lines()))
}

// waitAny waits at most d for a or b (nil: never) to close.
func waitAny(d time.Duration, a, b <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a:
	case <-b:
	case <-t.C:
	}
}

// end records why the session ended (the first reason wins) and fails
// every pending request with it at once.
func (c *Client) end(reason error) {
	c.mu.Lock()
	if c.endErr != nil {
		c.mu.Unlock()
		return
	}
	c.endErr = reason
	ps := c.pending
	c.pending = pendingTable{}
	close(c.done)
	c.stopTimeouts()
	c.mu.Unlock()
	ps.each(func(id int64, p *pending) {
		c.deliver(id, p, reply{err: fmt.Errorf("%s: %w", p.method, reason)})
	})
	c.sessionEnded(reason)
}

// sessionOpened notes when the session began, once the handshake
// succeeded: over stdio the server process's connection, in either era;
// over HTTP a legacy session only (a 2026-07-28 exchange has none).
func (c *Client) sessionOpened() {
	if c.opts.Tracer != nil && (c.h == nil || c.era == EraLegacy) {
		c.sessionSince.Store(time.Now().UnixNano())
	}
}

// sessionEnded records the session's duration (mcp.client.session.duration),
// once: error.type says how it ended when Close did not end it.
func (c *Client) sessionEnded(reason error) {
	since := c.sessionSince.Swap(0)
	if since == 0 {
		return
	}
	e := trace.SessionEnd{Client: true, Start: time.Unix(0, since), End: time.Now(), ProtocolVersion: c.version, Transport: "pipe"}
	if c.h != nil {
		e.Transport = "tcp"
	}
	var ee *ExitError
	switch {
	case errors.Is(reason, ErrClosed):
	case errors.Is(reason, ErrSessionEnded):
		e.ErrorType = "session_ended" // the server forgot it (HTTP 404)
	case errors.As(reason, &ee):
		e.ErrorType = "server_exited" // the process went away by itself
	default:
		e.ErrorType = "_OTHER"
	}
	c.opts.Tracer.EndSession(e)
}

// Done is closed when the session has ended: the server exited or closed
// its stdout (over HTTP: it answered 404 for the session), or Close was
// called. Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is nil while the session runs; then ErrClosed after Close, or the
// *ExitError of a server that went away by itself (over HTTP,
// ErrSessionEnded).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endErr
}

// PID is the server process's id; 0 over HTTP, where there is no process.
func (c *Client) PID() int {
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// Close ends the session the way the stdio transport asks: close the
// server's stdin, wait CloseGrace for it to exit, send SIGTERM (to its
// process group), wait TermGrace, send SIGKILL; then reap it, kill what
// is left in its process group, and stop every client goroutine. Pending
// requests fail at once with ErrClosed. A server that never completed the
// handshake (Connect failing on its timeout, say) gets no CloseGrace: its
// stdin is closed and SIGTERM follows at once.
// It returns nil when the server ended cleanly (status 0, or by the
// SIGTERM), and otherwise the *ExitError saying how it ended, also when it
// had exited by itself before. Over HTTP it cancels the requests in flight
// as the era says, ends a legacy session with DELETE, and returns an error
// only when that DELETE failed. Close may be called more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.shutdown() })
	return c.closeErr
}

func (c *Client) shutdown() error {
	if c.h != nil {
		return c.h.shutdown()
	}
	// Requests the server is working on are cancelled before its stdin
	// closes: a server that drains in-flight work at EOF (as mcprt does)
	// then exits at once instead of finishing what nobody awaits.
	c.mu.Lock()
	var inFlight []int64
	c.pending.each(func(id int64, p *pending) {
		if p.cancellable {
			inFlight = append(inFlight, id)
		}
	})
	c.mu.Unlock()
	c.end(ErrClosed)
	for _, id := range inFlight {
		if !c.w.unqueue(id) {
			c.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "client closing"})
		}
	}
	c.bgCancel()
	c.w.close(drainWait)
	closeGrace := c.opts.CloseGrace
	if !c.handshook.Load() {
		closeGrace = 0
	}
	if !waitFor(c.procDone, closeGrace) {
		c.mu.Lock()
		c.termSent = true
		c.mu.Unlock()
		if closeGrace == 0 {
			c.log.Debug("server never completed the handshake; sending SIGTERM without waiting for it to see stdin EOF")
		} else {
			c.log.Debug("server still running after stdin EOF; sending SIGTERM", slog.Duration("grace", closeGrace))
		}
		signalGroup(c.cmd, syscall.SIGTERM)
		if !waitFor(c.procDone, c.opts.TermGrace) {
			c.mu.Lock()
			c.killed = true
			c.mu.Unlock()
			c.log.Warn("server ignored stdin EOF and SIGTERM; sending SIGKILL", slog.Duration("grace", c.opts.TermGrace))
			signalGroup(c.cmd, syscall.SIGKILL)
			<-c.procDone
		}
	}
	// What the server started and left behind in its process group (a
	// wrapper's child that ignores stdin EOF, a shell's background job)
	// goes with it: nothing of the server outlives Close.
	signalGroup(c.cmd, syscall.SIGKILL)
	// A grandchild may still hold the pipes; ours are closed so the
	// readers return now.
	waitAny(drainWait, c.errDone, nil)
	closeAll(c.stdout, c.stderr)
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	ee := exitErrorFrom(c.procState, c.sink.lines())
	ee.Killed = c.killed
	if ee.clean(c.termSent) {
		return nil
	}
	return ee
}

// waitFor waits at most d for ch to close; with d 0 it only looks.
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// read decodes the server's stdout, one message (or 2025-03-26 batch) per
// line, until EOF. stdio.ScanLines is the one line reader of the project:
// what it guarantees for a server's stdin (a fresh buffer per line, "\r\n"
// taken as "\n", a last line without its newline still delivered, an
// over-long line skipped with its head kept) a client wants of a server's
// stdout too.
func (c *Client) read() {
	err := stdio.ScanLines(c.stdout, c.opts.MaxLineBytes, func(line []byte) bool {
		c.dispatchLine(line)
		return true
	}, func(t stdio.LineTooLong) bool {
		c.overLong(t.Head)
		return true
	})
	if err != nil && !errors.Is(err, os.ErrClosed) {
		c.log.Debug("reading server stdout", slog.Any("err", err))
	}
}

// leadingID finds the id of a response among the first bytes of a line:
// servers usually write it before the result. Compiled on first use: the
// package is linked into every mcprt process, servers included, and a
// package-level regexp would be compiled at each one's start.
var leadingID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?[0-9]+|"[0-9]+")`)
})

// overLong skips a line longer than MaxLineBytes. If it starts like the
// response to a pending request, that request fails now rather than at its
// timeout.
func (c *Client) overLong(prefix []byte) {
	c.log.Warn("server wrote a line longer than MaxLineBytes; skipped", slog.Int("max", c.opts.MaxLineBytes), slog.String("start", clip(prefix)))
	m := leadingID().FindSubmatch(prefix)
	if m == nil {
		return
	}
	id, ok := ourID(m[1])
	if !ok {
		return
	}
	c.mu.Lock()
	p := c.pending.take(id)
	c.mu.Unlock()
	if p != nil {
		c.deliver(id, p, reply{err: fmt.Errorf("%s: the response is longer than MaxLineBytes (%d)", p.method, c.opts.MaxLineBytes)})
	}
}

func (c *Client) dispatchLine(line []byte) {
	if !utf8.Valid(line) {
		// JSON text is UTF-8 (RFC 8259). Bytes that are not, which only
		// a string can hold in a line that parses, become U+FFFD, as
		// encoding/json reads them: nothing this client hands on (a
		// gateway relays results, logs and questions as they came)
		// carries them further.
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	}
	if jsonrpc.IsBatch(line) {
		var parts []json.RawMessage
		if err := json.Unmarshal(line, &parts); err != nil {
			c.log.Warn("server wrote an invalid batch", slog.String("line", clip(line)))
			return
		}
		for _, p := range parts {
			c.dispatch(p)
		}
		return
	}
	c.dispatch(line)
}

func (c *Client) dispatch(raw []byte) {
	var m jsonrpc.Message
	if result, id, ok := plainResponse(raw); ok {
		// What jsonrpc.Decode would make of it, with one check of the
		// result rather than a walk of the whole envelope's members.
		m = jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: id, Result: result}
		c.response(&m)
		return
	}
	if _, jerr := jsonrpc.Decode(raw, &m); jerr != nil {
		// stdout is the protocol; a banner or a log line there is the
		// server's bug, not a reason to drop the session.
		c.log.Warn("server wrote a line that is not a JSON-RPC message", slog.String("error", jerr.Message), slog.String("line", clip(raw)))
		return
	}
	switch m.Kind {
	case jsonrpc.KindResponse:
		c.response(&m)
	case jsonrpc.KindNotification:
		c.notification(&m)
	case jsonrpc.KindRequest:
		c.serverRequest(&m)
	}
}

// plainResponseHead is how a response begins as servers mostly write it
// (mcprt's, encoding/json on a struct): the envelope's members in order,
// compact.
const plainResponseHead = `{"jsonrpc":"2.0","id":`

// plainResponse reads a response written as plainResponseHead, an id of
// ours (digits), then "result" last, and nothing else: the result and the
// id, and ok. Only the result is checked (jsonrpc.Valid), since the rest
// was matched byte for byte: a server's usual answer, read with one pass
// over its result. ok is false for every other line, which
// jsonrpc.Decode reads (a result followed by another member is no one
// valid value, so it is declined too).
func plainResponse(line []byte) (result, id []byte, ok bool) {
	const resultKey = `,"result":`
	n := len(plainResponseHead)
	if len(line) < n+len(resultKey)+3 || string(line[:n]) != plainResponseHead || line[len(line)-1] != '}' {
		return nil, nil, false
	}
	i := n
	for i < len(line) && i-n < 18 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i == n || line[n] == '0' && i > n+1 || // JSON has no leading zeros
		len(line)-i < len(resultKey)+2 || string(line[i:i+len(resultKey)]) != resultKey {
		return nil, nil, false
	}
	result = line[i+len(resultKey) : len(line)-1]
	if result[0] <= ' ' || result[len(result)-1] <= ' ' || !jsonrpc.Valid(result) {
		// Space around it is left to Decode, which takes the value
		// without it.
		return nil, nil, false
	}
	return result, line[n:i], true
}

func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(bytes.TrimRight(b, "\r\n"))
}

// ourID reads an id we issued: an integer, echoed as is (or, leniently, as
// a string of digits).
func ourID(raw json.RawMessage) (int64, bool) {
	// Ours are positive and short: read without making a string of them.
	if n := len(raw); n > 0 && n <= 18 {
		var id int64
		for _, d := range raw {
			if d < '0' || d > '9' {
				return ourIDSlow(raw)
			}
			id = id*10 + int64(d-'0')
		}
		return id, true
	}
	return ourIDSlow(raw)
}

func ourIDSlow(raw json.RawMessage) (int64, bool) {
	s := string(raw)
	if len(s) > 1 && s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

func (c *Client) response(m *jsonrpc.Message) {
	id, ok := ourID(m.ID)
	var p *pending
	if ok {
		c.mu.Lock()
		p = c.pending.take(id)
		c.mu.Unlock()
	}
	if p == nil {
		// Usually the answer to a request that timed out or was cancelled.
		c.log.Debug("response to no pending request", slog.String("id", string(m.ID)))
		return
	}
	if m.Error != nil {
		var e jsonrpc.Error
		if err := json.Unmarshal(m.Error, &e); err != nil {
			e = jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "malformed error object: " + clip(m.Error)}
		}
		c.deliver(id, p, reply{err: &RPCError{Method: p.method, Err: &e}})
		return
	}
	if p.kept != nil && p.progress != nil {
		// Registered before the answer is delivered: the progress of a
		// task may follow its CreateTaskResult at once.
		c.keepProgress(id, p.progress)
		*p.kept = id
	}
	c.deliver(id, p, reply{result: m.Result})
}

// RPCError is a JSON-RPC error response to a request. Unwrap gives the
// *jsonrpc.Error with the code, message and data the server sent.
type RPCError struct {
	Method string
	Err    *jsonrpc.Error
}

// Error names the method, the code and the message.
func (e *RPCError) Error() string {
	return fmt.Sprintf("%s: server error %d: %s", e.Method, e.Err.Code, e.Err.Message)
}

// Unwrap gives the *jsonrpc.Error, for errors.As.
func (e *RPCError) Unwrap() error { return e.Err }

func (c *Client) notification(m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/progress":
		c.progress(m.Params)
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
			c.mu.Lock()
			cancel := c.inbound[string(p.RequestID)]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	case "notifications/tasks/status", "notifications/tasks":
		c.taskNotified(m.Params)
	case "notifications/tools/list_changed":
		c.markDirty(ListTools)
	case "notifications/resources/list_changed":
		c.markDirty(ListResources)
	case "notifications/prompts/list_changed":
		c.markDirty(ListPrompts)
	}
	n := Notification{Method: m.Method, Params: m.Params}
	c.mu.Lock()
	var fns []func(Notification)
	for _, s := range c.subs {
		if s.method == "" || s.method == m.Method {
			fns = append(fns, s.fn)
		}
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
}

func (c *Client) progress(params json.RawMessage) {
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total"`
		Message  string          `json:"message"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, ok := ourID(p.Token)
	if !ok {
		return
	}
	// The callback is read under the lock: a pending entry is recycled
	// once its request is over (see pendingPool).
	var fn func(Progress)
	c.mu.Lock()
	if pr := c.pending.get(id); pr != nil {
		fn = pr.progress
		if pa, ok := pr.async.(ProgressAnswerer); ok && fn == nil {
			fn = pa.Progress
		}
		if pr.maxAt > 0 {
			pr.progressAt = time.Since(c.epoch)
		}
	}
	c.mu.Unlock()
	if fn == nil {
		fn = c.taskProgress(id) // a 2025-11-25 task's, after its tools/call
	}
	if fn != nil {
		fn(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

// Subscribe calls fn for every notification the server sends whose method
// is method ("" for all), until the returned func is called. fn runs on the
// goroutine that reads the server's stdout (over HTTP, on the one reading
// the stream it came on: several may call fn at once), in the order the
// server wrote, and before the response of any request the notification
// preceded; it
// must not block, or it holds up every response (so it must not make
// requests of this client, nor Close it).
func (c *Client) Subscribe(method string, fn func(Notification)) (unsubscribe func()) {
	c.mu.Lock()
	c.nextSub++
	id := c.nextSub
	c.subs[id] = subscription{method, fn}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// CallOption adjusts one request.
type CallOption func(*callOptions)

type callOptions struct {
	timeout     time.Duration
	progress    func(Progress)
	askProgress bool // see ProgressAnswerer
	done        <-chan struct{}
	extensions  json.RawMessage // see WithExtensions
	taskTTL     time.Duration   // see WithTaskTTL
	kept        *int64          // see pending.kept
	trace       []member        // the client span's context, for _meta (see tracedCall)
}

// WithTimeout bounds this request instead of Options.Timeout; negative
// means no bound but the context's.
func WithTimeout(d time.Duration) CallOption {
	return func(o *callOptions) { o.timeout = d }
}

// WithProgress asks the server for progress (a progressToken in _meta) and
// calls fn for each notifications/progress, on the reading goroutine and
// before the request returns; fn must not block.
func WithProgress(fn func(Progress)) CallOption {
	return func(o *callOptions) { o.progress = fn }
}

// WithExtensions declares, on this request to a 2026-07-28 server, the
// extensions object ext (a JSON object, by extension identifier) as the
// client's capabilities.extensions, in place of Options.Extensions: for a
// client that stands for others, such as a gateway telling a server what
// the client it forwards for supports. It has no effect on a legacy
// server, which learnt the client's extensions at initialize.
func WithExtensions(ext json.RawMessage) CallOption {
	return func(o *callOptions) { o.extensions = ext }
}

// WithDone abandons the request when done is closed, as a cancelled ctx
// would (the error wraps context.Canceled): a second way to cancel one
// request, for a caller that would otherwise derive a context per request
// only to be able to cancel it, such as a gateway forwarding many.
func WithDone(done <-chan struct{}) CallOption {
	return func(o *callOptions) { o.done = done }
}

// roundTrip sends one request and waits for its response, the timeout or
// ctx, whichever comes first. params is a JSON object or nil (see
// appendRequest for extra and meta). An abandoned request is taken back if
// it was not written yet, and otherwise cancelled with
// notifications/cancelled (never initialize, which must not be, and never
// the server/discover probe: before the handshake a legacy server should
// see as little as possible).
func (c *Client) roundTrip(ctx context.Context, method string, params []byte, extra, meta []member, o callOptions, cancellable bool) (json.RawMessage, error) {
	id, p, err := c.begin(method, params, extra, meta, o, cancellable, nil)
	if err != nil {
		return nil, err
	}
	timeout := p.timeout
	var timer <-chan time.Time
	if timeout > 0 && !p.queued && p.maxAt == 0 { // else begin made p.timer
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}

	var r reply
	answered := false
	select {
	case r = <-p.ch:
		// An answer, the end of the session, or the timeout queue's
		// verdict: the request is out of c.pending already.
		answered = true
	case <-ctx.Done():
		r.err = fmt.Errorf("%s: %w", method, context.Cause(ctx))
	case <-o.done:
		r.err = fmt.Errorf("%s: %w", method, context.Canceled)
	case <-timer:
		r.timedOut = true
	}
	if !answered {
		c.mu.Lock()
		waiting := c.pending.take(id) != nil
		c.mu.Unlock()
		if !waiting {
			// The answer (or the end of the session, or the timeout
			// queue) won the race.
			r = <-p.ch
			answered = !r.timedOut
		}
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	recycle(p) // out of c.pending, its reply taken: nobody sends to it
	switch {
	case r.timedOut:
		cause := fmt.Errorf("%s timed out after %v: %w", method, timeout, context.DeadlineExceeded)
		c.abandon(id, cancellable, cause.Error())
		return nil, cause
	case !answered:
		c.abandon(id, cancellable, r.err.Error())
		return nil, r.err
	}
	return r.result, r.err
}

// begin sends a request: it builds the line, registers the pending entry
// (answered through a, when set, rather than its channel) and starts the
// request's timeout, in a queue when its duration has one (p.queued).
func (c *Client) begin(method string, params []byte, extra, meta []member, o callOptions, cancellable bool, a Answerer) (int64, *pending, error) {
	id := c.nextID.Add(1)
	p := pendingPool.Get().(*pending)
	askProgress := o.progress != nil || o.askProgress
	if askProgress {
		// The token and the members are written into the line below:
		// buffers of the pooled entry spare two allocations per call.
		p.metaBuf = append(append(p.metaBuf[:0], member{"progressToken", strconv.AppendInt(p.token[:0], id, 10)}), meta...)
		meta = p.metaBuf
	}
	size := 96 + len(method) + len(params)
	for _, m := range meta {
		size += len(m.key) + len(m.val) + 4
	}
	var bp *[]byte // the line's buffer, recycled once written (stdio only)
	var line []byte
	if c.h == nil {
		bp = lineBuf(size)
		line = *bp
	} else {
		line = make([]byte, 0, size)
	}
	line = appendRequest(line, id, method, params, extra, meta)
	p.metaBuf = p.metaBuf[:0] // the line is written: let go of the members
	p.method, p.progress, p.cancellable, p.async, p.kept = method, o.progress, cancellable, a, o.kept
	p.timeout = c.opts.Timeout
	if o.timeout != 0 {
		p.timeout = o.timeout
	}
	c.mu.Lock()
	if c.endErr != nil {
		err := c.endErr
		c.mu.Unlock()
		recycle(p)
		return 0, nil, fmt.Errorf("%s: %w", method, err)
	}
	c.pending.put(id, p)
	// One reading of the clock for both deadlines: a forwarding gateway
	// asks for progress on every call, and the clock was 2% of its CPU.
	var now time.Duration
	if p.timeout > 0 {
		now = time.Since(c.epoch)
	}
	if p.timeout > 0 && askProgress && c.opts.MaxTimeout > p.timeout {
		p.maxAt = now + c.opts.MaxTimeout
	}
	p.queued = p.timeout > 0 && c.addTimeout(id, p.timeout, now)
	if p.timeout > 0 && !p.queued && (a != nil || p.maxAt > 0) {
		p.timer = time.AfterFunc(p.timeout, func() { c.timeOut(id) })
	}
	c.mu.Unlock()
	if c.h != nil {
		c.h.send(id, line)
	} else {
		c.w.send(id, line, bp)
	}
	return id, p, nil
}

// recycle puts a pending entry whose channel is empty back in the pool.
func recycle(p *pending) {
	*p = pending{ch: p.ch, metaBuf: p.metaBuf[:0]}
	pendingPool.Put(p)
}

// send hands one message to the transport: a request (id > 0), or a
// notification or response (id 0).
func (c *Client) send(id int64, line []byte) {
	if c.h != nil {
		c.h.send(id, line)
		return
	}
	c.w.send(id, line, nil)
}

// abandon tells the transport that nobody waits for request id any more:
// over stdio it is taken back if it was not written yet, and otherwise
// cancelled (if cancellable) with notifications/cancelled; over HTTP see
// httpConn.abandon.
func (c *Client) abandon(id int64, cancellable bool, reason string) {
	if c.h != nil {
		c.h.abandon(id, cancellable, reason)
		return
	}
	if !c.w.unqueue(id) && cancellable {
		c.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
	}
}

// fail ends a pending request with err, if it is still pending.
func (c *Client) fail(id int64, err error) {
	c.mu.Lock()
	p := c.pending.take(id)
	c.mu.Unlock()
	if p != nil {
		c.deliver(id, p, reply{err: fmt.Errorf("%s: %w", p.method, err)})
	}
}

// isPending reports whether request id still waits for its answer.
func (c *Client) isPending(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending.get(id) != nil
}

// RootsListChanged tells a legacy server that the roots Options.Roots
// gives have changed (notifications/roots/list_changed), so that it asks
// for them again. It does nothing unless Options.Roots and
// Options.RootsListChanged are set, and nothing in 2026-07-28, where a
// server asks for the roots with each request that needs them. It
// returns once the notification is on its way (over HTTP, once the server
// took it).
func (c *Client) RootsListChanged() {
	if c.era != EraLegacy || c.opts.Roots == nil || !c.opts.RootsListChanged {
		return
	}
	c.notify("notifications/roots/list_changed", nil)
}

// notify sends a notification; it is dropped if the transport is closed.
func (c *Client) notify(method string, params any) {
	var raw []byte
	if params != nil {
		raw = mustMarshal(params)
	}
	c.send(0, jsonrpc.AppendNotification(nil, method, raw))
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("client: marshalling %T: %v", v, err))
	}
	return b
}

// Call sends any request and decodes its result into result (unless nil).
// In 2026-07-28 it adds the _meta the revision requires and, for
// tools/call, prompts/get and resources/read, answers input_required
// results through the Options handlers and retries, as the typed methods
// do. A JSON-RPC error response is an *RPCError.
func (c *Client) Call(ctx context.Context, method string, params, result any, opts ...CallOption) error {
	if err := c.call(ctx, method, params, result, opts...); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

func (c *Client) call(ctx context.Context, method string, params, result any, opts ...CallOption) error {
	if tr := c.opts.Tracer; tr != nil {
		return c.tracedCall(ctx, tr, method, params, result, opts)
	}
	return c.untracedCall(ctx, method, params, result, opts...)
}

func (c *Client) untracedCall(ctx context.Context, method string, params, result any, opts ...CallOption) error {
	var o callOptions
	if len(opts) > 0 {
		// Options see a copy: o itself would escape to the heap, with or
		// without options.
		po := new(callOptions)
		for _, f := range opts {
			f(po)
		}
		o = *po
	}
	base, err := paramsOf(method, params)
	if err != nil {
		return err
	}
	var extra []member // inputResponses and requestState of a retry
	relisted := false
	for round := 0; ; round++ {
		var meta []member
		if c.era == EraModern {
			meta = c.metaWith(c.version, o.extensions)
		}
		if len(o.trace) > 0 {
			// A copy: metaWith's members are shared by every request.
			meta = append(meta[:len(meta):len(meta)], o.trace...)
		}
		raw, err := c.roundTrip(ctx, method, base, extra, meta, o, true)
		if err != nil {
			if c.h != nil && method == "tools/call" && !relisted && isCode(err, jsonrpc.CodeHeaderMismatch) {
				// The tool's x-mcp-header annotations may have changed
				// since it was listed: list again and retry once, as the
				// transport asks.
				relisted = true
				if _, lerr := c.ListTools(ctx); lerr == nil {
					round--
					continue
				}
			}
			return err
		}
		if c.era == EraModern {
			// Only the top level's resultType is looked at unless it says
			// input_required: a complete result is passed on as it came.
			more, ok := inputRequired(raw)
			if !ok {
				var rt struct {
					ResultType string `json:"resultType"`
				}
				err := json.Unmarshal(raw, &rt)
				if err == nil {
					err = errors.New("resultType is not a string")
				}
				return fmt.Errorf("%s: result is not an object: %w", method, err)
			}
			if more {
				var rt struct {
					InputRequests map[string]json.RawMessage `json:"inputRequests"`
					RequestState  *string                    `json:"requestState"`
				}
				if err := json.Unmarshal(raw, &rt); err != nil {
					return fmt.Errorf("%s: result is not an object: %w", method, err)
				}
				switch method {
				case "tools/call", "prompts/get", "resources/read":
				default:
					return fmt.Errorf("%s: server answered input_required, which only tools/call, prompts/get and resources/read may", method)
				}
				if round+1 >= maxInputRounds {
					return fmt.Errorf("%s: server still asks for input after %d rounds", method, maxInputRounds)
				}
				m, err := c.fulfil(ctx, rt.InputRequests, rt.RequestState)
				if err != nil {
					return fmt.Errorf("%s: %w", method, err)
				}
				extra = extra[:0]
				for _, k := range slices.Sorted(maps.Keys(m)) {
					extra = append(extra, member{k, m[k]})
				}
				continue
			}
		}
		switch r := result.(type) {
		case nil:
			return nil
		case *json.RawMessage:
			// The line was checked as a whole when it was read, and
			// nothing reuses its buffer: no copy, no second check.
			*r = raw
			return nil
		}
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("%s: decoding result: %w", method, err)
		}
		return nil
	}
}

// isCode reports whether err is a JSON-RPC error response with code.
func isCode(err error, code int) bool {
	var re *RPCError
	return errors.As(err, &re) && re.Err.Code == code
}

func joinLines(lines []string) string {
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(l)
	}
	return b.String()
}
