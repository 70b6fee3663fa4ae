package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/sse"
)

// The Streamable HTTP transport's headers.
const (
	hdrSessionID       = "Mcp-Session-Id"
	hdrProtocolVersion = "Mcp-Protocol-Version"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	hdrParamPrefix     = "Mcp-Param-"
)

// maxErrorBody bounds what is read of a response that is not an answer
// (an HTTP error): enough for a JSON-RPC error or a proxy's page.
const maxErrorBody = 64 << 10

// How the GET stream of a legacy session is reopened: after the server
// ended it, once its retry field (or reopenDelay) has passed; after a
// failure, backing off up to reopenMax.
const (
	reopenDelay = time.Second
	reopenMax   = 30 * time.Second
)

// ErrSessionEnded is why a legacy HTTP session ends when the server
// answers 404 to its Mcp-Session-Id: the server ended the session (it
// restarted, or the session was idle too long). Pending requests fail
// with it, Done is closed and Err returns it. The specification asks the
// client to initialize a new session: connect again.
var ErrSessionEnded = errors.New("the server ended the session (HTTP 404 for its Mcp-Session-Id); connect again")

// HTTPError is an HTTP response that carries no JSON-RPC answer: a status
// the transport does not expect (401 without credentials, 404 for a wrong
// URL, 502 from a proxy), with the start of its body. A response with an
// error status whose body is a JSON-RPC error is that error instead, an
// *RPCError.
type HTTPError struct {
	Status int
	Body   string
}

// Error gives the status and the start of the body.
func (e *HTTPError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// ConnectURL opens a session with the MCP server at a Streamable HTTP
// endpoint (http:// or https://), in the era the options ask for. With
// EraAuto it follows the 2026-07-28 backward-compatibility rules for HTTP:
// a server/discover POST first; a DiscoverResult, or a modern error
// (UnsupportedProtocolVersion listing a modern version, HeaderMismatch,
// MissingRequiredClientCapability), means the stateless era; a 400, 404
// or 405 without such an error, or a JSON-RPC error of the legacy era,
// means a legacy server, which gets initialize. Other HTTP errors (401,
// 403, 5xx) and an unreachable server fail the connect as they are.
//
// In the legacy era the session id the server gives with the initialize
// result (Mcp-Session-Id) goes on every later request; a GET stream is
// kept open for what the server sends outside any request (list_changed,
// its own requests), reopened when the server ends it; Close ends the
// session with DELETE. A 404 for the session id ends the Client with
// ErrSessionEnded. In 2026-07-28 each request carries MCP-Protocol-Version,
// Mcp-Method, Mcp-Name and the Mcp-Param headers its tool's schema asks
// for (x-mcp-header), and tools whose annotations are invalid are left
// out of ListTools, as the transport requires.
//
// Each request is its own POST; its answer comes as one JSON body, or as
// an SSE stream whose progress and log notifications (and, in the legacy
// era, server requests) go to the same callbacks as over stdio. Over HTTP
// those callbacks may run on several goroutines at once, one per response
// stream, in the order the server sent within each stream. A request that
// is abandoned (its context, its timeout) is cancelled as the era says:
// notifications/cancelled in the legacy era (the stream is then closed),
// closing its response stream in 2026-07-28.
//
// The Options about processes (Command, CloseGrace's stdin EOF, TermGrace,
// SysProcAttr, the stderr fields) do not apply; CloseGrace bounds the
// cancellations and the DELETE that Close sends. HTTPClient and Header
// apply only here. A legacy response stream that the server closes before
// the answer, after events with ids, is resumed as 2025-11-25 describes:
// after the server's retry delay, with GET and Last-Event-ID, and again
// when that stream ends too (2026-07-28 streams are not resumable). The
// deprecated HTTP+SSE transport of 2024-11-05 is not supported.
func ConnectURL(ctx context.Context, endpoint string, opts *Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: %q is not an http:// or https:// URL", endpoint)
	}
	shown := u.Redacted()
	c := newClient(o, o.Logger.With(slog.String("server", shown)))
	c.h = newHTTPConn(c, u.String(), shown)
	if err := c.handshake(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("client: connecting to %s: %w", shown, err)
	}
	c.h.connected(ctx)
	c.sessionOpened()
	c.wg.Add(1)
	go c.refresher()
	return c, nil
}

// httpConn is the Streamable HTTP transport of one Client. Every goroutine
// it starts is counted in the Client's wg and ends with its bg context.
type httpConn struct {
	c     *Client
	url   string
	shown string // url without credentials, for messages
	hc    *http.Client
	own   bool // hc is ours: Close closes its idle connections

	mu      sync.Mutex
	session string // Mcp-Session-Id (legacy)
	version string // negotiated legacy version, for MCP-Protocol-Version
	streams map[int64]*stream
	closed  bool
}

// stream is a request whose POST is in flight.
type stream struct {
	cancel context.CancelFunc
	modern bool
}

func newHTTPConn(c *Client, u, shown string) *httpConn {
	h := &httpConn{c: c, url: u, shown: shown, hc: c.opts.HTTPClient, streams: map[int64]*stream{}}
	if h.hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Concurrent requests each hold a connection while their stream
		// lasts; keep enough idle ones that a busy client reuses them.
		t.MaxIdleConnsPerHost = 64
		h.hc, h.own = &http.Client{Transport: t}, true
	}
	return h
}

// setVersion records the negotiated legacy version (handshake).
func (h *httpConn) setVersion(v string) {
	h.mu.Lock()
	h.version = v
	h.mu.Unlock()
}

// connected runs once the handshake is done: a legacy session gets its
// GET stream, and the connect waits (up to getWait, or ctx) until the
// server has answered the GET, so that the stream is there for the first
// request: a server may send what belongs to no request only on it, and
// some (the TypeScript SDK's) drop such a message when no GET stream is
// open, such as the elicitation a tool call asks for outside its own
// stream.
func (h *httpConn) connected(ctx context.Context) {
	if h.c.era != EraLegacy {
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	answered := make(chan struct{})
	h.c.wg.Add(1)
	go h.listen(answered)
	h.mu.Unlock()
	t := time.NewTimer(getWait)
	defer t.Stop()
	select {
	case <-answered:
	case <-t.C:
	case <-ctx.Done():
	}
}

// getWait bounds how long a legacy connect waits for the GET stream.
const getWait = 5 * time.Second

// msgInfo is what the transport needs to know of a message it sends.
type msgInfo struct {
	kind    jsonrpc.Kind
	method  string
	params  []byte
	version string // _meta protocolVersion: set for 2026-07-28 messages
}

func inspect(line []byte) msgInfo {
	var m jsonrpc.Message
	if _, err := jsonrpc.Decode(line, &m); err != nil {
		return msgInfo{}
	}
	mi := msgInfo{kind: m.Kind, method: m.Method, params: m.Params}
	if meta, ok := jsonrpc.Member(m.Params, "_meta"); ok {
		if v, ok := jsonrpc.Member(meta, mcp.MetaProtocolVersion); ok {
			mi.version, _ = jsonrpc.Unquote(v)
		}
	}
	return mi
}

// stringParam is params[name] when it is a string.
func stringParam(params []byte, name string) string {
	v, ok := jsonrpc.Member(params, name)
	if !ok {
		return ""
	}
	s, _ := jsonrpc.Unquote(v)
	return s
}

// newRequest builds an HTTP request to the endpoint with the transport's
// headers for mi (nil for the GET stream and DELETE). It returns the
// session id it sent, if any.
func (h *httpConn) newRequest(ctx context.Context, method string, body []byte, mi *msgInfo) (*http.Request, string, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.url, rd)
	if err != nil {
		return nil, "", err
	}
	for k, vs := range h.c.opts.Header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	if mi != nil && mi.version != "" {
		// 2026-07-28: no session; the headers mirror the body.
		req.Header.Set(hdrProtocolVersion, mi.version)
		if mi.kind == jsonrpc.KindRequest {
			req.Header.Set(hdrMethod, mi.method)
			switch mi.method {
			case "tools/call", "prompts/get":
				req.Header.Set(hdrName, mcp.EncodeHeaderValue(stringParam(mi.params, "name")))
			case "resources/read":
				req.Header.Set(hdrName, mcp.EncodeHeaderValue(stringParam(mi.params, "uri")))
			case "tasks/get", "tasks/update", "tasks/cancel":
				// The tasks extension: routes a task's requests to the
				// replica that holds it.
				req.Header.Set(hdrName, mcp.EncodeHeaderValue(stringParam(mi.params, "taskId")))
			}
			if mi.method == "tools/call" {
				h.c.setParamHeaders(req.Header, mi.params)
			}
		}
		return req, "", nil
	}
	h.mu.Lock()
	sid, v := h.session, h.version
	h.mu.Unlock()
	if sid != "" {
		req.Header.Set(hdrSessionID, sid)
	}
	if v != "" {
		req.Header.Set(hdrProtocolVersion, v)
	}
	return req, sid, nil
}

// send POSTs one message: a request (id > 0) on a goroutine of its own
// that reads the answer; a notification or a response at once, returning
// when the server has taken it, so that messages the Client sends one
// after another (initialize's result, then notifications/initialized,
// then requests) reach the server in that order.
func (h *httpConn) send(id int64, line []byte) {
	mi := inspect(line)
	if id == 0 {
		h.post(line, &mi)
		return
	}
	ctx, cancel := context.WithCancel(h.c.bg)
	req, sid, err := h.newRequest(ctx, http.MethodPost, line, &mi)
	if err != nil {
		cancel()
		h.c.fail(id, err)
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		cancel()
		h.c.fail(id, ErrClosed)
		return
	}
	h.streams[id] = &stream{cancel: cancel, modern: mi.version != ""}
	h.c.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.c.wg.Done()
		defer func() {
			h.mu.Lock()
			delete(h.streams, id)
			h.mu.Unlock()
			cancel()
		}()
		h.exchange(ctx, id, req, sid, mi.method, mi.version != "")
	}()
}

// post sends a notification or a response, bounded by Options.Timeout;
// dropped once the Client is closing.
func (h *httpConn) post(line []byte, mi *msgInfo) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return
	}
	ctx, cancel := h.c.bg, context.CancelFunc(func() {})
	if t := h.c.opts.Timeout; t > 0 {
		ctx, cancel = context.WithTimeout(ctx, t)
	}
	defer cancel()
	if err := h.deliver(ctx, line, mi); err != nil && h.c.bg.Err() == nil {
		h.c.log.Warn("sending a message to the server", slog.String("method", mi.method), slog.Any("err", err))
	}
}

// deliver POSTs a notification or a response: the server answers 202.
func (h *httpConn) deliver(ctx context.Context, line []byte, mi *msgInfo) error {
	req, sid, err := h.newRequest(ctx, http.MethodPost, line, mi)
	if err != nil {
		return err
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := readAtMost(resp.Body, maxErrorBody)
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusNotFound && sid != "":
		h.sessionEnded()
		return ErrSessionEnded
	}
	return &HTTPError{Status: resp.StatusCode, Body: clip(body)}
}

// exchange POSTs request id and delivers what the server sends for it
// (modern: it is a 2026-07-28 request).
func (h *httpConn) exchange(ctx context.Context, id int64, req *http.Request, sid, method string, modern bool) {
	c := h.c
	resp, err := h.hc.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			c.fail(id, err)
		}
		return
	}
	var from resumePoint
	err = h.answer(ctx, id, resp, sid, method, modern, &from)
	resp.Body.Close()
	if err == nil && c.isPending(id) && from.id != "" && ctx.Err() == nil {
		// A legacy server closed a stream it made resumable (its events
		// have ids) before the answer: resume it with GET.
		err = h.resume(ctx, id, from)
	}
	switch {
	case ctx.Err() != nil:
	case err != nil:
		c.fail(id, err)
	case c.isPending(id):
		c.fail(id, errors.New("the server ended its HTTP response without answering"))
	}
}

// resumePoint is where a closed event stream may be resumed from: its last
// event ID and the retry delay the server set (2025-11-25, Resumability
// and Redelivery; 2026-07-28 has no resumable streams).
type resumePoint struct {
	id    string
	retry time.Duration
}

// maxResumes bounds how many times in a row a stream is resumed without
// the server sending anything new.
const maxResumes = 5

// resume waits the server's retry delay, then resumes the event stream of
// request id with GET and Last-Event-ID, until the answer comes, the
// stream ends again (then again, from its new last event), or the server
// refuses. The messages of the resumed stream are handled as the
// original stream's would have been.
func (h *httpConn) resume(ctx context.Context, id int64, from resumePoint) error {
	c := h.c
	for idle := 0; idle < maxResumes; idle++ {
		t := time.NewTimer(cmp.Or(from.retry, reopenDelay)) // the server's retry, which a client MUST respect
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		req, sid, err := h.newRequest(ctx, http.MethodGet, nil, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Last-Event-ID", from.id)
		resp, err := h.hc.Do(req)
		if err != nil {
			return fmt.Errorf("resuming the event stream: %w", err)
		}
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch {
		case resp.StatusCode == http.StatusNotFound && sid != "":
			resp.Body.Close()
			h.sessionEnded()
			return nil
		case resp.StatusCode/100 != 2 || mt != "text/event-stream":
			body, _ := readAtMost(resp.Body, maxErrorBody)
			resp.Body.Close()
			return fmt.Errorf("resuming the event stream: the server answered HTTP %d: %s", resp.StatusCode, clip(body))
		}
		r := sse.NewReader(resp.Body, c.opts.MaxLineBytes)
		for c.isPending(id) {
			data, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && ctx.Err() == nil {
					resp.Body.Close()
					return fmt.Errorf("reading the resumed event stream: %w", err)
				}
				break
			}
			h.dispatch(id, data)
			idle = -1 // news: the count starts again
		}
		resp.Body.Close()
		if !c.isPending(id) || ctx.Err() != nil {
			return nil
		}
		if r.LastID != "" {
			from.id = r.LastID
		}
		if r.Retry > 0 {
			from.retry = r.Retry
		}
	}
	return fmt.Errorf("the server's event stream ended %d times without the answer", maxResumes)
}

// answer reads the response to request id: one JSON message, or an SSE
// stream read until the answer has come (the server should end the stream
// then; a server that does not is not waited for). A legacy stream that
// ends before the answer sets from, for exchange to resume it.
func (h *httpConn) answer(ctx context.Context, id int64, resp *http.Response, sid, method string, modern bool, from *resumePoint) error {
	c := h.c
	switch {
	case resp.StatusCode == http.StatusNotFound && sid != "":
		h.sessionEnded()
		return nil
	case resp.StatusCode/100 != 2:
		return h.errorAnswer(id, resp)
	}
	if method == "initialize" {
		if s := resp.Header.Get(hdrSessionID); s != "" {
			if !visibleASCII(s) {
				return fmt.Errorf("the server's Mcp-Session-Id %q is not visible ASCII", s)
			}
			h.mu.Lock()
			h.session = s
			h.mu.Unlock()
		}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		r := sse.NewReader(resp.Body, c.opts.MaxLineBytes)
		for {
			data, err := r.Next()
			if err != nil {
				if errors.Is(err, io.EOF) {
					if !modern { // 2026-07-28 streams are not resumable
						*from = resumePoint{id: r.LastID, retry: r.Retry}
					}
					return nil
				}
				return fmt.Errorf("reading the server's event stream: %w", err)
			}
			h.dispatch(id, data)
			if _, msg := jsonrpc.Member(data, "method"); !msg {
				return nil // the answer: the stream has served its purpose
			}
			if !c.isPending(id) {
				// Abandoned by its caller, whose abandon closes the
				// stream: in the legacy era only once the server has
				// taken notifications/cancelled, since a closed stream
				// is no cancellation there.
				<-ctx.Done()
				return nil
			}
		}
	case "application/json":
		body, err := readAtMost(resp.Body, c.opts.MaxLineBytes)
		if err != nil {
			return fmt.Errorf("reading the server's answer: %w", err)
		}
		h.dispatch(id, body)
		return nil
	}
	if resp.StatusCode == http.StatusAccepted {
		return errors.New("the server answered the request with 202 Accepted and no response")
	}
	return fmt.Errorf("the server answered HTTP %d with Content-Type %q, neither application/json nor text/event-stream",
		resp.StatusCode, resp.Header.Get("Content-Type"))
}

// dispatch hands one message from the response to request id to the
// Client. An error response without an id (a server that refused the
// request before reading its id) is the answer to id.
func (h *httpConn) dispatch(id int64, data []byte) {
	if e, mid, ok := errorResponse(data); ok && (len(mid) == 0 || string(mid) == "null") {
		h.c.failRPC(id, e)
		return
	}
	h.c.dispatchLine(data)
}

// errorResponse reads a JSON-RPC error response: its error object and id.
// (jsonrpc.Decode checks what clients send, and refuses the id null that
// a server uses when it could not read the request's.)
func errorResponse(data []byte) (errObj, id json.RawMessage, ok bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, nil, false
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &m) != nil || m.JSONRPC != "2.0" || m.Method != nil || len(m.Error) == 0 || string(m.Error) == "null" {
		return nil, nil, false
	}
	return m.Error, m.ID, true
}

// errorAnswer reads a response with an error status: its JSON-RPC error
// is the answer, whatever id it bears; anything else is an *HTTPError, and
// so are 401 and 403, which are about credentials, not the request.
func (h *httpConn) errorAnswer(id int64, resp *http.Response) error {
	body, _ := readAtMost(resp.Body, maxErrorBody)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return &HTTPError{Status: resp.StatusCode, Body: clip(body)}
	}
	if e, _, ok := errorResponse(body); ok {
		h.c.failRPC(id, e)
		return nil
	}
	return &HTTPError{Status: resp.StatusCode, Body: clip(body)}
}

// failRPC answers pending request id with a JSON-RPC error object.
func (c *Client) failRPC(id int64, raw []byte) {
	var e jsonrpc.Error
	if err := json.Unmarshal(raw, &e); err != nil {
		e = jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "malformed error object: " + clip(raw)}
	}
	c.mu.Lock()
	p := c.pending.take(id)
	c.mu.Unlock()
	if p != nil {
		c.deliver(id, p, reply{err: &RPCError{Method: p.method, Err: &e}})
	}
}

// sessionEnded ends the Client: the server no longer knows its session.
func (h *httpConn) sessionEnded() {
	h.c.log.Debug("the server answered 404 for the session id: the session has ended")
	h.c.end(ErrSessionEnded)
}

// abandon: nobody waits for request id any more. In 2026-07-28 closing
// its response stream is the cancellation. In the legacy era a disconnect
// is not one, so a cancellable request gets notifications/cancelled first,
// and its stream is closed once the server has taken that.
func (h *httpConn) abandon(id int64, cancellable bool, reason string) {
	h.mu.Lock()
	s := h.streams[id]
	if s == nil {
		h.mu.Unlock()
		return // its POST is over: nothing left to stop
	}
	if s.modern || !cancellable || h.closed {
		h.mu.Unlock()
		s.cancel()
		return
	}
	h.c.wg.Add(1)
	h.mu.Unlock()
	line := cancelledLine(id, reason)
	go func() {
		defer h.c.wg.Done()
		defer s.cancel()
		mi := inspect(line)
		h.post(line, &mi)
	}()
}

func cancelledLine(id int64, reason string) []byte {
	return jsonrpc.AppendNotification(nil, "notifications/cancelled", mustMarshal(map[string]any{"requestId": id, "reason": reason}))
}

// listen keeps a legacy session's GET stream open, for what the server
// sends outside any request, until the Client closes, the session ends,
// or the server says it offers no such stream.
func (h *httpConn) listen(answered chan struct{}) {
	defer h.c.wg.Done()
	bg := h.c.bg
	backoff := reopenDelay
	for {
		wait, again := h.listenOnce(answered)
		answered = nil // closed by the first attempt
		if !again {
			return
		}
		if wait == 0 { // failed: back off
			wait = backoff
			backoff = min(2*backoff, reopenMax)
		} else {
			backoff = reopenDelay
		}
		t := time.NewTimer(wait)
		select {
		case <-bg.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// listenOnce opens the GET stream and reads it to its end. It says whether
// to open it again, and after how long (0: after a failure, by backoff).
func (h *httpConn) listenOnce(answered chan struct{}) (time.Duration, bool) {
	// Once the server has answered (or the attempt failed), the connect
	// waits no more.
	settle := func() {
		if answered != nil {
			close(answered)
			answered = nil
		}
	}
	defer settle()
	bg := h.c.bg
	req, sid, err := h.newRequest(bg, http.MethodGet, nil, nil)
	if err != nil {
		return 0, false
	}
	resp, err := h.hc.Do(req)
	settle()
	if err != nil {
		if bg.Err() == nil {
			h.c.log.Debug("opening the GET stream", slog.Any("err", err))
		}
		return 0, bg.Err() == nil
	}
	defer resp.Body.Close()
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusNotFound && sid != "":
		h.sessionEnded()
		return 0, false
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return 0, false // the server offers no GET stream
	case resp.StatusCode/100 != 2 || mt != "text/event-stream":
		body, _ := readAtMost(resp.Body, maxErrorBody)
		h.c.log.Debug("the server refused the GET stream", slog.Int("status", resp.StatusCode), slog.String("body", clip(body)))
		return 0, false
	}
	r := sse.NewReader(resp.Body, h.c.opts.MaxLineBytes)
	for {
		data, err := r.Next()
		if err != nil {
			if bg.Err() != nil {
				return 0, false
			}
			if !errors.Is(err, io.EOF) {
				h.c.log.Debug("reading the GET stream", slog.Any("err", err))
				return 0, true
			}
			return cmp.Or(r.Retry, reopenDelay), true
		}
		h.c.dispatchLine(data)
	}
}

// shutdown is Close over HTTP: the legacy requests in flight are cancelled
// (as over stdio, so the server stops work nobody awaits), every response
// stream is closed (the cancellation of 2026-07-28), the legacy session is
// ended with DELETE, and every goroutine is waited for. It returns an
// error only when the DELETE failed.
func (h *httpConn) shutdown() error {
	c := h.c
	gone := errors.Is(c.Err(), ErrSessionEnded)
	c.mu.Lock()
	var inFlight []int64
	c.pending.each(func(id int64, p *pending) {
		if p.cancellable {
			inFlight = append(inFlight, id)
		}
	})
	c.mu.Unlock()
	c.end(ErrClosed)
	h.mu.Lock()
	h.closed = true
	var legacy []int64
	for _, id := range inFlight {
		if s := h.streams[id]; s != nil && !s.modern {
			legacy = append(legacy, id)
		}
	}
	streams := make([]*stream, 0, len(h.streams))
	for _, s := range h.streams {
		streams = append(streams, s)
	}
	sid := h.session
	h.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CloseGrace)
	defer cancel()
	if !gone {
		for _, id := range legacy {
			line := cancelledLine(id, "client closing")
			mi := inspect(line)
			if err := h.deliver(ctx, line, &mi); err != nil {
				c.log.Debug("cancelling a request at close", slog.Any("err", err))
			}
		}
	}
	for _, s := range streams {
		s.cancel()
	}
	var err error
	if sid != "" && !gone {
		err = h.deleteSession(ctx)
	}
	c.bgCancel()
	c.wg.Wait()
	if h.own {
		h.hc.CloseIdleConnections()
	}
	return err
}

// deleteSession ends the legacy session. A server that does not let
// clients end sessions (405), or no longer knows it (404), is no error.
func (h *httpConn) deleteSession(ctx context.Context) error {
	req, _, err := h.newRequest(ctx, http.MethodDelete, nil, nil)
	if err != nil {
		return err
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return fmt.Errorf("client: ending the session: %w", err)
	}
	defer resp.Body.Close()
	body, _ := readAtMost(resp.Body, maxErrorBody)
	switch {
	case resp.StatusCode/100 == 2, resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusMethodNotAllowed:
		return nil
	}
	return fmt.Errorf("client: ending the session: %w", &HTTPError{Status: resp.StatusCode, Body: clip(body)})
}

// readAtMost reads r to its end, failing past max bytes.
func readAtMost(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return b, err
	}
	if len(b) > max {
		return b[:max], fmt.Errorf("the body is longer than %d bytes", max)
	}
	return b, nil
}

// visibleASCII: 0x21 to 0x7E only, as a session id must be.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
