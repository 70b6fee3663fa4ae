package fault

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonschema"
	"github.com/mcprt/mcprt/session/sse"
)

// The Streamable HTTP campaign. The plan is the stdio campaign's, request
// for request, shared out among Campaign.Clients clients; every request is
// its own POST, and what comes back is checked as the transport says:
//
//   - a request gets exactly one JSON-RPC response for its id, as the JSON
//     body or as the last event of an SSE stream (200; an error may come
//     with an error status, a result may not); none once cancelled;
//   - everything on the wire is JSON-RPC: a JSON body, or an SSE stream
//     (UTF-8, whole events, ending cleanly) whose every event is one
//     message; a legacy GET stream carries no responses;
//   - statuses: 202 with no body for notifications, 400 for bodies that are
//     not JSON-RPC and for requests without the session or the headers the
//     era requires, 404 for an unknown or DELETEd session (and, in
//     2026-07-28, an unknown method), 413 past MaxBody, 415 for a body that
//     is not application/json.
//
// Back-pressure becomes a client that leaves a large response unread while
// others' calls must still be answered; EPIPE a client that disconnects in
// the middle of a response; stdin EOF does not apply. Legacy cancellation
// is notifications/cancelled by the client's id, sent with the call's
// stream open or after closing it; 2026-07-28's is closing the stream.

// modernVersion is the revision a 2026-07-28 campaign speaks.
const modernVersion = "2026-07-28"

// cancelAfter is how long a call runs before it is cancelled. Its POST
// travels on a connection of its own, so that is all that orders the two:
// a cancellation that overtakes its call is a race the server may lose.
const cancelAfter = 50 * time.Millisecond

// maxReplyBody bounds a JSON response body.
const maxReplyBody = 64 << 20

// hclient is one client of an HTTP campaign: a legacy session, initialized
// and with its GET stream open, or a stateless 2026-07-28 client. Each has
// connections of its own.
type hclient struct {
	n       int // files its requests apart: keys are "c<n>/" and the id's
	tr      *http.Transport
	hc      *http.Client
	session string // Mcp-Session-Id ("" none)
	version string // legacy: the revision negotiated, for MCP-Protocol-Version
	getDone chan struct{}
	getStop context.CancelFunc
	deleted atomic.Bool // its DELETE has been sent: its GET stream may find it gone
}

func newHClient(n int) *hclient {
	tr := &http.Transport{
		Proxy:               nil, // never a proxy: the server is the campaign's
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &hclient{n: n, tr: tr, hc: &http.Client{Transport: tr}}
}

// unreading is a sibling for a client that stops reading: its connections
// keep a small receive buffer (64 KiB), so that what it leaves unread
// backs up into the server at once. Left to autotuning, Linux may grow a
// loopback receive buffer to tens of megabytes (tcp_rmem), and a paused
// client would then hold a whole large answer without the server noticing.
func (c *hclient) unreading() *hclient {
	s := c.sibling()
	dial := (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	s.tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(64 << 10)
		}
		return conn, err
	}
	return s
}

// sibling is another client of the same session, with connections of its own.
func (c *hclient) sibling() *hclient {
	s := newHClient(c.n)
	s.session, s.version = c.session, c.version
	return s
}

func (c *hclient) key(idKey string) string { return "c" + strconv.Itoa(c.n) + "/" + idKey }

func (c *hclient) who(id json.RawMessage) string {
	return fmt.Sprintf("id %s (client %d)", id, c.n)
}

// hrun is one execution of an HTTP campaign. The bookkeeping (requests,
// report, violations, window, tally) is the stdio run's.
type hrun struct {
	*run
	url string
	tg  httpTarget // nil: a server at a URL, not the campaign's

	ctx      context.Context // of every exchange; ends when the campaign is over
	stopAll  context.CancelFunc
	callCtx  context.Context // of the calls; ended first at EndNone (2026-07-28)
	stopCall context.CancelFunc

	clients  []*hclient
	sessions bool // the server gave Mcp-Session-Ids

	posts    sync.WaitGroup
	episodes sync.WaitGroup
	gets     sync.WaitGroup
	cancels  sync.WaitGroup // calls to cancel whose cancellation is not yet sent
	// unwritten: the plan's calls not yet written to a connection. The
	// ending waits for them: a call still on its way when the server
	// shuts down is one it never had, not one it failed to answer.
	unwritten sync.WaitGroup
	noted     map[string]bool
}

// runHTTP executes a campaign over Streamable HTTP.
func runHTTP(ctx context.Context, cfg *Campaign) (*Report, error) {
	start := time.Now()
	var (
		tg  httpTarget
		u   = cfg.URL
		err error
	)
	switch {
	case cfg.URL != "":
	case cfg.Server != nil:
		tg, u, err = startHTTPTree(cfg.Server, cfg.ServerOptions, cfg.MaxBody)
	default:
		tg, u, err = startHTTPProcess(cfg.Command, cfg.Env, min(cfg.Timeout, 30*time.Second))
	}
	if err != nil {
		return nil, err
	}
	h := &hrun{run: newRun(cfg, nil), url: u, tg: tg, noted: map[string]bool{}}
	h.run.clients = cfg.Clients
	h.clients = make([]*hclient, cfg.Clients)
	for i := range h.clients {
		h.clients[i] = newHClient(i)
	}
	h.rep.Transport, h.rep.URL, h.rep.Clients, h.rep.HTTPStatuses = "http", u, cfg.Clients, map[int]int{}
	h.ctx, h.stopAll = context.WithCancel(context.Background())
	h.callCtx, h.stopCall = context.WithCancel(h.ctx)
	defer h.stopAll()
	return h.runCampaign(ctx, start)
}

// setModern sets the era (AutoEra settles it after the run is made).
func (h *hrun) setModern(modern bool) {
	h.cfg.Modern = modern
	if modern {
		h.rep.Era = "modern"
		h.meta = []byte(`{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcprt-fault","version":"1"}}`)
	} else {
		h.rep.Era, h.meta = "legacy", nil
	}
}

func (h *hrun) exited() <-chan struct{} {
	if h.tg == nil {
		return nil
	}
	return h.tg.exited()
}

func (h *hrun) runCampaign(parent context.Context, start time.Time) (*Report, error) {
	ctx, cancel := context.WithTimeout(parent, h.cfg.Timeout)
	defer cancel()
	defer h.closeIdle()
	if err := h.handshake(ctx); err != nil {
		h.abort()
		return nil, err
	}
	steps := h.plan()
	h.rep.Tools = h.cfg.Tools
	timedOut := h.send(ctx, steps)
	if !timedOut {
		h.flood(ctx)
		h.checkHealth(ctx)
	}
	select {
	case <-h.exited():
		h.rep.ExitedEarly = true
	default:
	}
	// Quick calls answered, cancellations sent, episodes over: the ending
	// finds in flight only the hung calls, the cancelled ones that raced,
	// and GET streams.
	h.awaitQuick(ctx)
	h.cancels.Wait()
	h.episodes.Wait()

	if h.tg != nil {
		h.endProcess()
	} else {
		h.endNone()
	}
	code, cpu := 0, time.Duration(0)
	if h.tg != nil {
		code, cpu = h.tg.result()
		h.rep.StderrTail = h.tg.stderrTail()
	}
	h.rep.ExitCode, h.rep.CPU = code, cpu
	h.rep.Elapsed = time.Since(start)
	h.tally(timedOut)
	return h.rep, nil
}

// closeIdle closes the clients' connections that have nothing in flight.
func (h *hrun) closeIdle() {
	for _, c := range h.clients {
		c.tr.CloseIdleConnections()
	}
}

// abort ends a campaign whose handshake failed.
func (h *hrun) abort() {
	if h.tg != nil {
		h.tg.kill()
	}
	h.stopAll()
	h.posts.Wait()
	h.gets.Wait()
}

// awaitQuick waits until every quick request is over, by taking the whole
// window, or until ctx ends or the server exits.
func (h *hrun) awaitQuick(ctx context.Context) {
	for range cap(h.slots) {
		select {
		case h.slots <- struct{}{}:
		case <-ctx.Done():
			return
		case <-h.exited():
			return
		}
	}
}

// endProcess sends SIGTERM with the hung calls and the GET streams in
// flight: each call must be answered, each stream end cleanly, and the
// server exit with status 0.
func (h *hrun) endProcess() {
	// Every call is on the wire before the server is told to stop.
	if !waitFor(h.cfg.ExitTimeout, &h.unwritten) {
		h.note("calls still unwritten %v after the last was sent", h.cfg.ExitTimeout)
	}
	// Connections with nothing in flight are closed first: a server's
	// graceful shutdown may wait for them (net/http waits 5s for a
	// connection that has not sent a request, as a transport may leave
	// one it dialed and did not need).
	h.closeIdle()
	at := time.Now()
	if !h.rep.ExitedEarly {
		if err := h.tg.terminate(); err != nil {
			h.note("SIGTERM: %v", err)
		}
	}
	t := time.NewTimer(h.cfg.ExitTimeout)
	defer t.Stop()
	select {
	case <-h.tg.exited():
		h.rep.Exited = true
		if !h.rep.ExitedEarly {
			h.rep.TimeToExit = time.Since(at)
		}
	case <-t.C:
		h.tg.kill()
	}
	// The server is gone: every exchange has ended, or ends now.
	if !waitFor(5*time.Second, &h.posts, &h.gets) {
		h.note("exchanges still open 5s after the server exited (a child process holding its socket?): closed")
		h.stopAll()
		h.posts.Wait()
		h.gets.Wait()
	}
}

// endNone ends the campaign with a server it did not start: legacy
// sessions are DELETEd, 2026-07-28 calls still in flight have their streams
// closed (a cancellation), and what is still outstanding is Unread.
func (h *hrun) endNone() {
	h.mu.Lock()
	for _, q := range h.reqs {
		if q.first == nil && q.kind != kindLenient && !q.cancelled && !q.over {
			q.kind = kindLenient
			h.rep.Unread++
			h.lenientN++
		}
	}
	h.mu.Unlock()
	if h.meta != nil || !h.sessions {
		h.stopCall()
	}
	for _, c := range h.clients {
		if c.session != "" && !h.deleteSession(c, fmt.Sprintf("DELETE of client %d's session", c.n), true) {
			h.stopCall() // a session the server would not end: its calls' streams are closed
		}
	}
	if !waitFor(h.cfg.ExitTimeout, &h.posts, &h.gets) {
		h.mu.Lock()
		h.violate("exchanges still open %v after the campaign ended its sessions: calls in flight must be answered, or their streams end, when their session ends", h.cfg.ExitTimeout)
		h.mu.Unlock()
		h.stopAll()
		h.posts.Wait()
		h.gets.Wait()
	}
}

// waitFor waits for every group, at most d; it reports whether they ended.
func waitFor(d time.Duration, wgs ...*sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		for _, wg := range wgs {
			wg.Wait()
		}
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// ---- handshake ----

func (h *hrun) handshake(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c0 := h.clients[0]
	discovered := false
	if h.cfg.AutoEra {
		// As a 2026-07-28 client does: server/discover, and initialize
		// when the server does not answer it.
		h.setModern(true)
		body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"fault-probe","method":"server/discover","params":{"_meta":%s}}`, h.meta)
		rp := h.do(ctx, post{c: c0, body: body, quiet: true})
		discovered = rp.err == nil && rp.status == http.StatusOK && len(rp.msgs) > 0 &&
			rp.msgs[len(rp.msgs)-1].kind == outResponse && !rp.msgs[len(rp.msgs)-1].isError
		if !discovered {
			if rp.err != nil && rp.status == 0 {
				return fmt.Errorf("fault: %s: %w", h.url, rp.err) // not listening: initialize would fail too
			}
			h.setModern(false)
		}
	}
	if h.meta != nil {
		if !discovered {
			m, _, err := h.control(ctx, c0, "fault-discover", "server/discover", fmt.Appendf(nil, `{"_meta":%s}`, h.meta))
			if err != nil {
				return err
			}
			if m.isError {
				return errors.New("fault: server/discover failed: the server does not speak 2026-07-28")
			}
		}
	} else {
		for _, c := range h.clients {
			if err := h.initSession(ctx, c); err != nil {
				return err
			}
		}
		h.sessions = c0.session != ""
		if !h.sessions {
			h.note("the server gave no Mcp-Session-Id: no GET streams, and no session faults (unknown session, DELETE)")
		}
	}
	h.httpFaults = []string{"media-type", "unknown-method"}
	switch {
	case h.meta != nil:
		h.httpFaults = append(h.httpFaults, "header-mismatch", "notification")
	case h.sessions:
		h.httpFaults = append(h.httpFaults, "no-session", "unknown-session")
	}
	// Listed also when every tool is named (see run.discoverTools).
	var params []byte
	if h.meta != nil {
		params = fmt.Appendf(nil, `{"_meta":%s}`, h.meta)
	}
	m, _, err := h.control(ctx, c0, "fault-tools", "tools/list", params)
	if err != nil {
		return err
	}
	return fillTools(&h.cfg.Tools, m)
}

// initSession runs the initialize handshake for a legacy client, and
// opens its GET stream when the server gave it a session.
func (h *hrun) initSession(ctx context.Context, c *hclient) error {
	params := fmt.Appendf(nil, `{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcprt-fault","version":"1"}}`, h.cfg.ProtocolVersion)
	m, rp, err := h.control(ctx, c, "fault-init", "initialize", params)
	if err != nil {
		return err
	}
	if m.isError {
		return fmt.Errorf("fault: initialize failed (client %d)", c.n)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(m.result, &res)
	if h.cfg.RequireVersion && res.ProtocolVersion != h.cfg.ProtocolVersion {
		return fmt.Errorf("fault: the server answered initialize with protocol version %q; %s was required", res.ProtocolVersion, h.cfg.ProtocolVersion)
	}
	c.session = rp.hdr.Get("Mcp-Session-Id")
	c.version = res.ProtocolVersion
	h.notify(c, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), fmt.Sprintf("notifications/initialized (client %d)", c.n))
	if c.session != "" {
		h.openGet(c)
	}
	return nil
}

// control sends one request the campaign needs answered (handshake, tool
// discovery, health check) and returns its response.
func (h *hrun) control(ctx context.Context, c *hclient, id, method string, params []byte) (*outMsg, *reply, error) {
	raw, _ := json.Marshal(id)
	key := c.key(idKey(raw))
	h.track(key, &req{kind: kindControl})
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q`, raw, method)
	if params != nil {
		body = fmt.Appendf(body, `,"params":%s`, params)
	}
	body = append(body, '}')
	who := fmt.Sprintf("%s %s (client %d)", method, raw, c.n)
	rp := h.do(ctx, post{c: c, body: body, what: who})
	m := h.settleCall(key, who, idKey(raw), rp)
	if m == nil {
		if rp.err != nil {
			return nil, rp, fmt.Errorf("fault: %s: %w", who, rp.err)
		}
		return nil, rp, fmt.Errorf("fault: no answer to %s (HTTP %d)", who, rp.status)
	}
	return m, rp, nil
}

// notify POSTs a notification: it must be accepted, 202 with no body.
func (h *hrun) notify(c *hclient, body []byte, who string) {
	rp := h.do(h.ctx, post{c: c, body: body, what: who})
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case rp.err != nil && !rp.ours:
		h.violate("%s: %v", who, rp.err)
	case rp.err == nil && rp.status != http.StatusAccepted:
		h.violate("%s: HTTP %d, want 202 Accepted%s", who, rp.status, rp.firstRaw())
	case len(rp.msgs) > 0:
		h.violate("%s: a notification is owed no message: %s", who, clip(rp.raws[0]))
	}
}

// checkHealth asks, after every request and fault and before the ending,
// for one more answer that must be right.
func (h *hrun) checkHealth(ctx context.Context) {
	select {
	case <-h.exited():
		return
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.ExitTimeout)
	defer cancel()
	c0 := h.clients[0]
	var (
		m   *outMsg
		rp  *reply
		err error
	)
	// A server saturated by the campaign's hung calls may refuse it as
	// busy (503, -32000) for a while: it is asked again until it answers.
	for try := 1; ; try++ {
		id := "fault-health"
		if try > 1 {
			id += "-" + strconv.Itoa(try)
		}
		switch {
		case h.cfg.Tools.Echo != "":
			params := fmt.Appendf(nil, `{"name":%q,"arguments":{"text":%q}`, h.cfg.Tools.Echo, healthText)
			if h.meta != nil {
				params = fmt.Appendf(params, `,"_meta":%s`, h.meta)
			}
			m, rp, err = h.control(ctx, c0, id, "tools/call", append(params, '}'))
		case h.meta != nil:
			m, rp, err = h.control(ctx, c0, id, "tools/list", fmt.Appendf(nil, `{"_meta":%s}`, h.meta))
		default:
			m, rp, err = h.control(ctx, c0, id, "ping", nil)
		}
		if err != nil || !busy(rp) {
			break
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
	if err != nil || m.isError {
		return
	}
	if h.cfg.Tools.Echo != "" {
		if got, err := echoText(m.result); err != nil || got != healthText {
			return
		}
	}
	h.rep.Healthy = true
}

// ---- sending ----

// send starts the plan's requests, each on its own goroutine. It reports
// whether the timeout cut it short.
func (h *hrun) send(ctx context.Context, steps []step) (timedOut bool) {
	for i := range steps {
		s := &steps[i]
		if ctx.Err() != nil {
			return true
		}
		c := h.clients[i%len(h.clients)]
		if s.bad != nil {
			h.sendBad(c, s)
		}
		switch s.kind {
		case kindQuick, kindPanic, kindSlow:
			select {
			case h.slots <- struct{}{}:
			case <-ctx.Done():
				return true
			case <-h.exited():
				return false // no one left to answer: the report says so
			}
		}
		key := c.key(s.key)
		h.track(key, &req{kind: s.kind, text: s.text, cancelled: s.kind == kindCancel})
		if name := reqKindNames[s.kind]; name != "" {
			h.rep.Faults[name]++
		}
		h.rep.Sent++
		body, cancelMsg, _ := bytes.Cut(s.line, []byte("\n"))
		cancelMsg = bytes.TrimRight(cancelMsg, "\n")
		h.posts.Add(1)
		h.unwritten.Add(1)
		if s.kind == kindCancel {
			h.cancels.Add(1)
		}
		go h.call(c, s, key, body, cancelMsg)
		if s.pause {
			h.pause(c, i, s.pauseSSE)
		}
		if s.disconnect {
			h.disconnect(c, i, s.disconnectSSE)
		}
		if s.del && h.sessions && h.meta == nil {
			h.deleteEpisode(i)
		}
	}
	return false
}

// call runs one planned request.
func (h *hrun) call(c *hclient, s *step, key string, body, cancelMsg []byte) {
	defer h.posts.Done()
	switch s.kind {
	case kindQuick, kindPanic, kindSlow:
		defer func() { <-h.slots }()
	}
	var id json.RawMessage
	if m, err := parseOut(body); err == nil {
		id = m.id
	}
	who := c.who(id)
	if s.kind == kindCancel {
		h.cancelCall(c, s, key, who, body, cancelMsg)
		return
	}
	rp := h.do(h.callCtx, post{c: c, body: body, what: who, wrote: h.unwritten.Done})
	h.settleCall(key, who, s.key, rp)
}

// cancelCall runs a call and cancels it as the era says: legacy,
// notifications/cancelled by the client's id, with the call's stream open
// (what comes on it can be seen) or closed first; 2026-07-28, closing the
// stream.
func (h *hrun) cancelCall(c *hclient, s *step, key, who string, body, cancelMsg []byte) {
	ctx, stop := context.WithCancel(h.callCtx)
	defer stop()
	cancelled := sync.OnceFunc(h.cancels.Done)
	defer cancelled()
	res := make(chan *reply, 1)
	go func() { res <- h.do(ctx, post{c: c, body: body, what: who, wrote: h.unwritten.Done}) }()
	var rp *reply
	t := time.NewTimer(cancelAfter)
	defer t.Stop()
	select {
	case rp = <-res:
		// Over before the cancellation (refused as busy, say): it was
		// never cancelled, and is owed its answer.
		if !rp.ours {
			h.mu.Lock()
			h.reqs[key].cancelled = false
			h.mu.Unlock()
		}
	case <-t.C:
	}
	blind := false
	if rp == nil {
		if h.meta != nil || s.closeFirst {
			// Whatever came before the close raced with it; nothing
			// after it can be seen.
			stop()
			rp = <-res
			blind = true
		}
		if h.meta == nil {
			h.notify(c, cancelMsg, "notifications/cancelled for "+who)
		}
		cancelled()
		if rp == nil {
			rp = <-res // must end: with no response, or with one that raced
		}
	}
	if blind {
		h.mu.Lock()
		h.reqs[key].blind = true
		h.mu.Unlock()
	}
	h.settleCall(key, who, s.key, rp)
}

// sendBad POSTs the malformed request planned before a step.
func (h *hrun) sendBad(c *hclient, s *step) {
	key := c.key(s.faultID)
	h.track(key, &req{kind: kindLenient})
	h.rep.Faults[s.fault]++
	body := bytes.TrimRight(s.bad, "\n")
	who := fmt.Sprintf("%s body %s (client %d)", s.fault, strings.TrimPrefix(s.faultID, "s:"), c.n)
	p := post{c: c, body: body, what: who}
	switch s.fault {
	case "media-type":
		p.ctype = "text/plain"
	case "no-session":
		p.session = new(string)
	case "unknown-session":
		sid := "fault-no-such-session-" + strings.TrimPrefix(s.faultID, "s:")
		p.session = &sid
	case "header-mismatch":
		p.hdr = http.Header{"Mcp-Method": {"ping"}}
	}
	h.posts.Add(1)
	go func() {
		defer h.posts.Done()
		rp := h.do(h.callCtx, p)
		h.settleBad(s.fault, key, who, s.faultID, len(body), rp)
	}()
}

// pause starts a client of the session c belongs to, with connections of
// its own, that calls the echo tool with PauseSize bytes of text (or, with
// sse, a slow call with a progress stream) and leaves the response unread
// for PauseFor, and then until another client's call has been answered
// (probe): a client that does not read must not stall the others. Its
// answer is then read and must be right.
func (h *hrun) pause(c *hclient, i int, sse bool) {
	t := h.cfg.Tools
	pc := c.unreading()
	id, _ := json.Marshal("p-" + strconv.Itoa(i+1))
	key := pc.key(idKey(id))
	var body []byte
	text := ""
	switch {
	case sse && t.Slow != "":
		body = callLine(id, t.Slow, []byte(`{"ms":200`), h.progressMeta(id))
	case t.Echo != "":
		text = strings.Repeat("p", h.cfg.PauseSize)
		body = callLine(id, t.Echo, fmt.Appendf(nil, `{"text":%q`, text), h.meta)
	default:
		h.noteOnce("pause", "no echo or slow tool: no paused clients")
		return
	}
	body = bytes.TrimRight(body, "\n")
	h.track(key, &req{kind: kindQuick, text: text})
	h.rep.Faults["pause"]++
	h.rep.Sent++
	who := fmt.Sprintf("paused call %s (client %d)", id, c.n)
	h.episodes.Add(1)
	go func() {
		defer h.episodes.Done()
		defer pc.tr.CloseIdleConnections()
		hold := func() {
			t := time.NewTimer(h.cfg.PauseFor)
			select {
			case <-t.C:
			case <-h.ctx.Done():
				t.Stop()
				return
			}
			h.probe(c, i, who)
		}
		rp := h.do(h.callCtx, post{c: pc, body: body, what: who, hold: hold})
		h.settleCall(key, who, idKey(id), rp)
	}()
}

// probe calls the server from another client than c, with connections of
// its own, while c's paused client is not reading: the call must be
// answered within ExitTimeout.
func (h *hrun) probe(c *hclient, i int, who string) {
	pc := h.clients[(c.n+1)%len(h.clients)].sibling()
	defer pc.tr.CloseIdleConnections()
	id, _ := json.Marshal("probe-" + strconv.Itoa(i+1))
	var body []byte
	switch {
	case h.cfg.Tools.Echo != "":
		body = callLine(id, h.cfg.Tools.Echo, []byte(`{"text":"probe"`), h.meta)
	case h.meta != nil:
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{"_meta":%s}}`, id, h.meta)
	default:
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`, id)
	}
	key := pc.key(idKey(id))
	h.track(key, &req{kind: kindLenient})
	probe := fmt.Sprintf("call %s (client %d) made while %s was not read", id, pc.n, who)
	ctx, cancel := context.WithTimeout(h.callCtx, h.cfg.ExitTimeout)
	defer cancel()
	rp := h.do(ctx, post{c: pc, body: bytes.TrimRight(body, "\n"), what: probe})
	h.mu.Lock()
	defer h.mu.Unlock()
	resp := h.fileMsgs(key, probe, idKey(id), rp, false)
	switch {
	case rp.err != nil && ctx.Err() == context.DeadlineExceeded:
		h.violate("%s: no answer within %v: one client that does not read stalls the others", probe, h.cfg.ExitTimeout)
	case rp.err != nil && !rp.ours:
		h.violate("%s: %v", probe, rp.err)
	case resp == nil && !rp.ours:
		h.violate("%s: never answered: %s", probe, rp.describe())
	}
}

// disconnect starts a client of c's session, with connections of its own,
// that closes its connection in the middle of a response: a large echo
// after 4 KiB of it, or a slow call's progress stream after its first
// event. Its request is owed nothing more; the server must go on.
func (h *hrun) disconnect(c *hclient, i int, sse bool) {
	t := h.cfg.Tools
	id, _ := json.Marshal("d-" + strconv.Itoa(i+1))
	var (
		body      []byte
		cutBytes  int
		cutEvents int
	)
	switch {
	case sse && t.Slow != "":
		body = callLine(id, t.Slow, []byte(`{"ms":500`), h.progressMeta(id))
		cutEvents = 1
	case t.Echo != "":
		text := strings.Repeat("d", h.cfg.PauseSize)
		body = callLine(id, t.Echo, fmt.Appendf(nil, `{"text":%q`, text), h.meta)
		cutBytes = 4 << 10
	default:
		h.noteOnce("disconnect", "no echo or slow tool: no disconnecting clients")
		return
	}
	body = bytes.TrimRight(body, "\n")
	dc := c.sibling()
	key := dc.key(idKey(id))
	h.track(key, &req{kind: kindLenient})
	h.rep.Faults["disconnect"]++
	who := fmt.Sprintf("disconnecting call %s (client %d)", id, c.n)
	h.episodes.Add(1)
	go func() {
		defer h.episodes.Done()
		defer dc.tr.CloseIdleConnections()
		rp := h.do(h.callCtx, post{c: dc, body: body, what: who, cutBytes: cutBytes, cutEvents: cutEvents})
		h.mu.Lock()
		defer h.mu.Unlock()
		h.fileMsgs(key, who, idKey(id), rp, false)
		switch {
		case rp.err != nil && !rp.ours:
			h.violate("%s: %v", who, rp.err)
		case rp.err == nil && rp.status != http.StatusOK && !busy(rp):
			h.violate("%s: HTTP %d, want 200%s", who, rp.status, rp.firstRaw())
		}
	}()
}

// busy reports whether rp is a refusal for load: 503 and error -32000.
func busy(rp *reply) bool {
	if rp.status != http.StatusServiceUnavailable {
		return false
	}
	for _, m := range rp.msgs {
		if m.kind == outResponse && m.isError && m.code == -32000 {
			return true
		}
	}
	return false
}

// progressMeta is the _meta of a call that asks for progress, id its token.
func (h *hrun) progressMeta(id json.RawMessage) []byte {
	if h.meta == nil {
		return []byte(`{"progressToken":` + string(id) + `}`)
	}
	return append(bytes.TrimSuffix(bytes.Clone(h.meta), []byte("}")), `,"progressToken":`+string(id)+`}`...)
}

// deleteEpisode starts a legacy session of its own, gives it calls (a hung
// one, a slow one, a quick one), DELETEs it while they are in flight, and
// checks that each is answered or its stream ends, that the session's GET
// stream ends, and that its id then gets 404.
func (h *hrun) deleteEpisode(i int) {
	h.rep.Faults["delete"]++
	h.episodes.Add(1)
	go func() {
		defer h.episodes.Done()
		dc := newHClient(1000 + i)
		defer dc.tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(h.ctx, h.cfg.ExitTimeout)
		defer cancel()
		name := fmt.Sprintf("deleted session %d", dc.n)
		if err := h.initSession(ctx, dc); err != nil {
			h.mu.Lock()
			h.violate("%s: %v", name, err)
			h.mu.Unlock()
			return
		}
		if dc.session == "" {
			return
		}
		t := h.cfg.Tools
		type call struct {
			id   json.RawMessage
			body []byte
		}
		var calls []call
		add := func(suffix string, tool string, args []byte) {
			id, _ := json.Marshal(fmt.Sprintf("del-%d-%s", i+1, suffix))
			calls = append(calls, call{id, bytes.TrimRight(callLine(id, tool, args, nil), "\n")})
		}
		if t.Slow != "" {
			add("hang", t.Slow, fmt.Appendf(nil, `{"ms":%d`, h.cfg.HangFor.Milliseconds()))
			add("slow", t.Slow, fmt.Appendf(nil, `{"ms":%d`, h.cfg.SlowFor.Milliseconds()))
		}
		quick := make(chan struct{})
		if t.Echo != "" {
			add("echo", t.Echo, []byte(`{"text":"before the DELETE"`))
		} else {
			close(quick)
		}
		callCtx, stopCalls := context.WithCancel(h.ctx)
		defer stopCalls()
		var wg sync.WaitGroup
		for _, cl := range calls {
			key := dc.key(idKey(cl.id))
			h.track(key, &req{kind: kindLenient})
			who := fmt.Sprintf("%s: call %s", name, cl.id)
			wg.Add(1)
			h.posts.Add(1)
			go func() {
				defer h.posts.Done()
				defer wg.Done()
				rp := h.do(callCtx, post{c: dc, body: cl.body, what: who})
				if bytes.HasSuffix(cl.id, []byte(`-echo"`)) {
					close(quick)
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				h.fileMsgs(key, who, idKey(cl.id), rp, false)
				switch {
				case rp.err != nil && !rp.ours:
					h.violate("%s: %v (it must be answered, or its stream end cleanly, when its session is deleted)", who, rp.err)
				case rp.err == nil && rp.status != http.StatusOK && rp.status != http.StatusNotFound:
					h.violate("%s: HTTP %d, want 200 (answered, or the stream ended) or 404 (after the DELETE)%s", who, rp.status, rp.firstRaw())
				}
			}()
		}
		select { // the quick call answered: the others are in flight
		case <-quick:
		case <-ctx.Done():
		}
		if !h.deleteSession(dc, name+": DELETE", false) {
			stopCalls()
			wg.Wait()
			return
		}
		if !waitFor(h.cfg.ExitTimeout, &wg) {
			h.mu.Lock()
			h.violate("%s: calls still open %v after the DELETE: they must be answered, or their streams end", name, h.cfg.ExitTimeout)
			h.mu.Unlock()
			stopCalls()
			wg.Wait()
		}
		ping := []byte(`{"jsonrpc":"2.0","id":"del-ping","method":"ping"}`)
		rp := h.do(ctx, post{c: dc, body: ping, what: name + ": a request after the DELETE"})
		h.mu.Lock()
		if rp.err != nil || rp.status != http.StatusNotFound {
			h.violate("%s: a request after the DELETE got %s, want 404%s", name, rp.describe(), rp.firstRaw())
		}
		h.mu.Unlock()
		rp = h.do(ctx, post{c: dc, method: http.MethodDelete, what: name + ": DELETE again"})
		h.mu.Lock()
		if rp.err != nil || rp.status != http.StatusNotFound {
			h.violate("%s: a second DELETE got %s, want 404%s", name, rp.describe(), rp.firstRaw())
		}
		h.mu.Unlock()
		h.awaitGet(dc, name)
	}()
}

// deleteSession DELETEs c's session: 2xx, or 405 from a server that does
// not let clients end sessions (all the same at the end of a campaign).
// It reports whether the session was ended.
func (h *hrun) deleteSession(c *hclient, who string, atEnd bool) bool {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.ExitTimeout)
	defer cancel()
	c.deleted.Store(true)
	rp := h.do(ctx, post{c: c, method: http.MethodDelete, what: who})
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case rp.err != nil:
		h.violate("%s: %v", who, rp.err)
	case rp.status == http.StatusMethodNotAllowed:
		if !h.noted["delete405"] {
			h.noted["delete405"] = true
			h.rep.Notes = append(h.rep.Notes, "the server does not let clients DELETE sessions (405)")
		}
		if atEnd && c.getStop != nil {
			c.getStop()
		}
	case rp.status < 200 || rp.status > 299:
		h.violate("%s: %s, want 2xx%s", who, rp.describe(), rp.firstRaw())
	default:
		return true
	}
	return false
}

// awaitGet waits for a deleted session's GET stream to end.
func (h *hrun) awaitGet(c *hclient, name string) {
	if c.getDone == nil {
		return
	}
	t := time.NewTimer(h.cfg.ExitTimeout)
	defer t.Stop()
	select {
	case <-c.getDone:
	case <-t.C:
		h.mu.Lock()
		h.violate("%s: its GET stream still open %v after the DELETE", name, h.cfg.ExitTimeout)
		h.mu.Unlock()
		c.getStop()
		<-c.getDone
	}
}

// openGet opens a legacy session's GET stream and reads it until it ends:
// notifications and requests only, no responses.
func (h *hrun) openGet(c *hclient) {
	ctx, stop := context.WithCancel(h.ctx)
	c.getDone, c.getStop = make(chan struct{}), stop
	who := fmt.Sprintf("GET stream (client %d)", c.n)
	h.gets.Add(1)
	go func() {
		defer h.gets.Done()
		defer close(c.getDone)
		defer stop()
		rp := h.do(ctx, post{c: c, method: http.MethodGet, what: who, onMsg: func(m *outMsg, raw []byte) {
			if m.kind == outResponse {
				h.mu.Lock()
				h.violate("%s: a response on the GET stream, which carries none: %s", who, clip(raw))
				if string(m.id) != "null" && h.reqs[c.key(m.key)] != nil {
					h.answer(c.key(m.key), c.who(m.id), m, raw)
				}
				h.mu.Unlock()
			}
		}})
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, m := range rp.msgs {
			switch m.kind {
			case outNotification:
				h.rep.Notifications++
			case outRequest:
				h.rep.ServerRequests++
			}
		}
		switch {
		case rp.err != nil && !rp.ours:
			h.violate("%s: %v", who, rp.err)
		case rp.err == nil && rp.status == http.StatusMethodNotAllowed:
			// A server may offer no GET stream.
		case rp.err == nil && rp.status == http.StatusNotFound && c.deleted.Load():
			// Opened as the session was being deleted.
		case rp.err == nil && rp.status != http.StatusOK:
			h.violate("%s: %s, want 200 or 405%s", who, rp.describe(), rp.firstRaw())
		case rp.err == nil && !rp.sse:
			h.violate("%s: Content-Type %q, want text/event-stream", who, rp.ctype)
		}
	}()
}

// ---- one exchange ----

// post is one HTTP request of the campaign.
type post struct {
	c       *hclient
	method  string // "": POST
	body    []byte
	session *string     // instead of the client's Mcp-Session-Id ("": none)
	ctype   string      // "": application/json
	hdr     http.Header // set last, over the campaign's own
	what    string      // names the exchange in violations
	// hold runs once the response's headers are in, before its body is
	// read: a client that does not read.
	hold func()
	// cutBytes and cutEvents disconnect after that much of the body.
	cutBytes, cutEvents int
	// onMsg sees each event's message as it comes (the GET stream's).
	onMsg func(*outMsg, []byte)
	quiet bool // report nothing about the wire: a probe
	// wrote runs once, when the request has been written or has failed.
	wrote func()
}

// reply is what one exchange got back. Every message in it was valid.
type reply struct {
	status int
	hdr    http.Header
	ctype  string
	sse    bool
	msgs   []*outMsg
	raws   [][]byte
	err    error // the exchange failed, or its body ended uncleanly
	ours   bool  // the campaign ended it (a cut, a cancellation, the end)
}

// describe says what came back, for violations.
func (rp *reply) describe() string {
	if rp.err != nil && rp.status == 0 {
		return rp.err.Error()
	}
	s := "HTTP " + strconv.Itoa(rp.status)
	switch {
	case rp.sse:
		s += fmt.Sprintf(", an SSE stream of %d messages", len(rp.msgs))
	case len(rp.msgs) == 0:
		s += ", no body"
	}
	if rp.err != nil {
		s += ", then " + rp.err.Error()
	}
	return s
}

// firstRaw is ": " and the first message, clipped, or "".
func (rp *reply) firstRaw() string {
	if len(rp.raws) == 0 {
		return ""
	}
	return ": " + clip(rp.raws[0])
}

// do runs one exchange and checks the wire: a JSON-RPC message as the
// body, or an SSE stream of them. What the messages mean is for the
// caller.
func (h *hrun) do(ctx context.Context, p post) *reply {
	if p.wrote != nil {
		wrote := sync.OnceFunc(p.wrote)
		defer wrote()
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { wrote() },
		})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // after a cut, this closes the connection
	method := cmp.Or(p.method, http.MethodPost)
	var body io.Reader
	if method == http.MethodPost {
		body = bytes.NewReader(p.body)
	}
	rq, err := http.NewRequestWithContext(ctx, method, h.url, body)
	if err != nil {
		return &reply{err: err}
	}
	hd := rq.Header
	for k, v := range h.cfg.Header {
		hd[k] = v
	}
	switch method {
	case http.MethodPost:
		hd.Set("Content-Type", cmp.Or(p.ctype, "application/json"))
		hd.Set("Accept", "application/json, text/event-stream")
	case http.MethodGet:
		hd.Set("Accept", "text/event-stream")
	}
	if h.meta != nil {
		modernHeaders(hd, p.body)
	} else {
		sid := p.c.session
		if p.session != nil {
			sid = *p.session
		}
		if sid != "" {
			hd.Set("Mcp-Session-Id", sid)
		}
		if p.c.version != "" {
			hd.Set("Mcp-Protocol-Version", p.c.version)
		}
	}
	for k, v := range p.hdr {
		hd[k] = v
	}
	rp := &reply{}
	resp, err := p.c.hc.Do(rq)
	if err != nil {
		rp.err, rp.ours = err, ctx.Err() != nil
		return rp
	}
	defer resp.Body.Close()
	rp.status, rp.hdr = resp.StatusCode, resp.Header
	if !p.quiet {
		h.mu.Lock()
		h.rep.HTTPStatuses[rp.status]++
		h.mu.Unlock()
	}
	if p.hold != nil {
		p.hold()
	}
	rp.ctype, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	wire := func(format string, args ...any) {
		if p.quiet {
			return
		}
		h.mu.Lock()
		h.violate("%s: "+format, append([]any{p.what}, args...)...)
		h.mu.Unlock()
	}
	add := func(data []byte) {
		m, err := parseOut(data)
		if err != nil {
			wire("not a JSON-RPC message (%v): %s", err, clip(data))
			return
		}
		rp.msgs = append(rp.msgs, m)
		rp.raws = append(rp.raws, data)
		if p.onMsg != nil && rp.sse {
			p.onMsg(m, data)
		}
	}
	if rp.ctype == "text/event-stream" {
		rp.sse = true
		if rp.status != http.StatusOK {
			wire("an SSE stream with HTTP %d", rp.status)
		}
		if p.cutBytes > 0 {
			// A stream cut by bytes is not read for messages.
			if _, err := io.CopyN(io.Discard, resp.Body, int64(p.cutBytes)); err == nil {
				rp.ours = true
			}
			return rp
		}
		read := 0
		err := readSSE(resp.Body, func(data []byte) bool {
			add(data)
			read++
			return p.cutEvents == 0 || read < p.cutEvents
		})
		switch {
		case err == errStopped:
			rp.ours = true
		case err != nil:
			rp.err, rp.ours = err, ctx.Err() != nil
		}
		return rp
	}
	var b []byte
	if p.cutBytes > 0 {
		b, err = io.ReadAll(io.LimitReader(resp.Body, int64(p.cutBytes)+1))
		if err == nil && len(b) > p.cutBytes {
			rp.ours = true // disconnected mid-body
			return rp
		}
	} else {
		b, err = io.ReadAll(io.LimitReader(resp.Body, maxReplyBody))
	}
	if err != nil {
		rp.err, rp.ours = err, ctx.Err() != nil
		if rp.ours {
			return rp
		}
	}
	t := bytes.TrimSpace(b)
	switch {
	case len(t) == 0:
		if rp.status == http.StatusOK {
			wire("HTTP 200 with no body")
		}
	case rp.status == http.StatusAccepted || rp.status == http.StatusNoContent:
		wire("HTTP %d with a body: %s", rp.status, clip(t))
	case rp.ctype != "application/json":
		wire("HTTP %d with a body of type %q, not JSON-RPC: %s", rp.status, rp.ctype, clip(t))
	default:
		add(t)
	}
	return rp
}

// modernHeaders sets the headers 2026-07-28 requires of a POST, from its
// body: MCP-Protocol-Version, Mcp-Method and, for the methods that name
// something, Mcp-Name. A body that cannot be read gets the version only.
func modernHeaders(hd http.Header, body []byte) {
	hd.Set("Mcp-Protocol-Version", modernVersion)
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name *string `json:"name"`
			URI  *string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method == "" {
		return
	}
	hd.Set("Mcp-Method", m.Method)
	var name *string
	switch m.Method {
	case "tools/call", "prompts/get":
		name = m.Params.Name
	case "resources/read":
		name = m.Params.URI
	}
	if name != nil {
		hd.Set("Mcp-Name", jsonschema.EncodeHeaderValue(*name))
	}
}

// errStopped is readSSE's error when its callback asked it to stop.
var errStopped = errors.New("stopped")

// readSSE reads a text/event-stream, calling fn with the data of each
// message event that has some, until the stream ends, fn returns false (a
// disconnect: errStopped) or it finds the stream broken (a line that is
// not UTF-8, an event or a line the stream ends inside: sse.Reader's
// Strict). A clean end is nil: EOF right after a whole event (or a
// comment).
func readSSE(r io.Reader, fn func(data []byte) bool) error {
	rd := sse.NewReader(r, maxReplyBody)
	rd.Strict = true
	for {
		data, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fn(data) {
			return errStopped
		}
	}
}

// ---- what came back ----

// fileMsgs files the messages of a request's reply, under key (want is the
// key of the id its response must carry), and returns its response; r.mu
// is held. nullOK: a malformed body, whose error may carry a null id (as
// may any error that comes with an HTTP error status).
func (h *hrun) fileMsgs(key, who, want string, rp *reply, nullOK bool) *outMsg {
	var resp *outMsg
	for i, m := range rp.msgs {
		raw := rp.raws[i]
		if resp != nil {
			h.violate("%s: a message after its response, which must end its stream: %s", who, clip(raw))
		}
		switch m.kind {
		case outNotification:
			h.rep.Notifications++
			continue
		case outRequest:
			h.rep.ServerRequests++
			continue
		}
		if string(m.id) == "null" {
			if !m.isError {
				h.violate("%s: a result with a null id: %s", who, clip(raw))
			} else if !nullOK && rp.status < 400 {
				// With an error status the transport allows an error
				// without the id; otherwise a request's error carries it.
				h.violate("%s: answered with a null id: %s", who, clip(raw))
			}
			h.rep.NullIDErrors++
			if resp == nil {
				resp = m
			}
			continue
		}
		if m.key != want {
			h.violate("%s: its stream carries a response to id %s: %s", who, m.id, clip(raw))
			continue
		}
		h.answer(key, who, m, raw)
		if resp == nil {
			resp = m
		}
	}
	return resp
}

// settleCall files a call's reply and checks it: one response, with the
// status that goes with it, unless the call was cancelled or is owed
// nothing any more.
func (h *hrun) settleCall(key, who, want string, rp *reply) *outMsg {
	h.mu.Lock()
	defer h.mu.Unlock()
	resp := h.fileMsgs(key, who, want, rp, false)
	if resp != nil && string(resp.id) == "null" {
		resp = nil // a violation already; not an answer
	}
	q := h.reqs[key]
	q.over = true
	owed := q.kind != kindLenient && !q.cancelled
	switch {
	case rp.err != nil && !rp.ours && resp != nil:
		h.violate("%s: after its response: %v", who, rp.err)
	case rp.status == http.StatusAccepted:
		h.violate("%s: 202 Accepted for a request, which is owed a response", who)
	case resp != nil && !resp.isError && rp.status != http.StatusOK:
		h.violate("%s: a result with HTTP %d", who, rp.status)
	case resp == nil && owed:
		h.violate("%s: never answered: %s", who, rp.describe())
	}
	return resp
}

// settleBad files the reply to a malformed request and checks its status.
func (h *hrun) settleBad(fault, key, who, want string, size int, rp *reply) {
	h.mu.Lock()
	defer h.mu.Unlock()
	resp := h.fileMsgs(key, who, want, rp, true)
	over := h.cfg.MaxBody > 0 && int64(size) > h.cfg.MaxBody
	if rp.err != nil {
		if over && rp.status == 0 {
			// A server may close the connection on a body past its bound.
			if !h.noted["closed-over"] {
				h.noted["closed-over"] = true
				h.rep.Notes = append(h.rep.Notes, "a body over MaxBody had its connection closed before the 413 could be read")
			}
			return
		}
		if !rp.ours {
			h.violate("%s: %v", who, rp.err)
		}
		return
	}
	answered := resp != nil && string(resp.id) != "null" && rp.status == http.StatusOK
	var want1 []int // the statuses allowed; an answer when 200 is among them
	switch fault {
	case "garbage", "truncated", "no-session":
		want1 = []int{400}
	case "media-type":
		want1 = []int{415}
	case "unknown-session":
		want1 = []int{404}
	case "notification":
		want1 = []int{202}
	case "header-mismatch":
		want1 = []int{400}
		if resp != nil && resp.isError && resp.code != -32020 {
			h.violate("%s: error %d, want -32020 (header mismatch)", who, resp.code)
		}
	case "unknown-method":
		if h.meta != nil {
			want1 = []int{404}
		} else {
			want1 = []int{200, 400, 404}
		}
		if resp == nil || !resp.isError || resp.code != -32601 {
			h.violate("%s: %s, want error -32601 (method not found)%s", who, rp.describe(), rp.firstRaw())
		}
	case "huge":
		switch {
		case over:
			want1 = []int{413}
		case h.cfg.MaxBody > 0:
			want1 = []int{200}
		default:
			want1 = []int{200, 413}
		}
	default: // invalid-utf8, deep: answered, or refused
		switch {
		case over:
			want1 = []int{413}
		case h.cfg.MaxBody > 0:
			want1 = []int{200, 400}
		default:
			want1 = []int{200, 400, 413}
		}
	}
	ok := false
	for _, s := range want1 {
		ok = ok || s == rp.status
	}
	switch fault {
	case "invalid-utf8", "deep", "huge", "unknown-method":
		// Requests a server may read: refused for load, they are answered.
		if !over && busy(rp) {
			return
		}
	}
	switch {
	case !ok:
		h.violate("%s (%d bytes): %s, want HTTP %s%s", who, size, rp.describe(), joinInts(want1), rp.firstRaw())
	case rp.status == http.StatusOK && !answered && fault != "unknown-method":
		h.violate("%s: HTTP 200 without its answer: %s", who, rp.describe())
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " or ")
}

// noteOnce adds a note the first time its key comes.
func (h *hrun) noteOnce(key, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.noted[key] {
		h.noted[key] = true
		h.rep.Notes = append(h.rep.Notes, fmt.Sprintf(format, args...))
	}
}

// httpFaultBody is the body of one of the transport's malformed requests
// (with its '\n', as the plan keeps lines): what is wrong with it is in
// how it is sent (sendBad), except for a notification and an unknown
// method.
func httpFaultBody(kind string, id json.RawMessage, meta []byte) []byte {
	params := ""
	if meta != nil {
		params = `,"params":{"_meta":` + string(meta) + `}`
	}
	switch kind {
	case "notification":
		p := `{"requestId":` + string(id) + `,"reason":"fault: a request never sent"`
		if meta != nil {
			p += `,"_meta":` + string(meta)
		}
		return []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + p + "}}\n")
	case "unknown-method":
		return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"method":"fault/no-such-method"` + params + "}\n")
	}
	method := "ping"
	if meta != nil {
		method = "tools/list"
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"method":"` + method + `"` + params + "}\n")
}
