package fault

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime"
)

// Ending is how a campaign ends the server, right after its last request.
type Ending int

const (
	// EndEOF closes the server's stdin with requests still in flight: every
	// one must be answered before the server exits, with status 0.
	EndEOF Ending = iota
	// EndSIGTERM waits for the quick requests to be answered, so that the
	// server has read every line, then sends SIGTERM (Drain, in-process)
	// with the hung requests still in flight and stdin left open: each must
	// be answered before the server exits, with status 0. (Lines a server
	// has not read when the signal comes are lost by design, so the
	// campaign does not leave any.)
	EndSIGTERM
	// EndClosedStdout waits for the quick requests to be answered, then
	// closes the client's read end of the server's stdout and sends a few
	// more requests: the server's writes fail (EPIPE) and it must exit on
	// its own, status 0, stdin still open. Requests outstanding when stdout
	// closed are counted as Unread, not as lost.
	EndClosedStdout
	// EndNone leaves the server running: the ending of a campaign against
	// a server at a URL, which it did not start. Legacy sessions are
	// DELETEd (their calls in flight are answered or their streams end),
	// the streams of 2026-07-28 calls still in flight are closed; requests
	// still outstanding then are counted as Unread.
	EndNone
)

// String returns the name ParseEnding reads: eof, sigterm, epipe or none.
func (e Ending) String() string {
	switch e {
	case EndEOF:
		return "eof"
	case EndSIGTERM:
		return "sigterm"
	case EndClosedStdout:
		return "epipe"
	case EndNone:
		return "none"
	}
	return "Ending(" + strconv.Itoa(int(e)) + ")"
}

// healthText is what the health check asks the echo tool to return.
const healthText = "fault: still healthy?"

// ParseEnding maps "eof", "sigterm", "epipe" and "none" to an Ending.
func ParseEnding(s string) (Ending, error) {
	for e := EndEOF; e <= EndNone; e++ {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, fmt.Errorf("fault: unknown ending %q (want eof, sigterm, epipe or none)", s)
}

// Rates are the probabilities, per request, of each kind of fault the
// campaign injects. Panic, Hang, Slow and Cancel choose what a request is
// and must add up to at most 1 (the rest are quick calls of the echo tool,
// or pings); Garbage and Pause are drawn independently for every request.
type Rates struct {
	Panic  float64 // a tools/call of the panic tool
	Hang   float64 // the slow tool for Campaign.HangFor: only the server's deadline or drain can answer it
	Slow   float64 // the slow tool for up to Campaign.SlowFor
	Cancel float64 // the slow tool for Campaign.HangFor, cancelled (notifications/cancelled) right after
	// Garbage precedes the request with a malformed line: garbage (not
	// JSON), a request cut short, one with text that is not UTF-8, one
	// nested past encoding/json's depth limit, or a huge one.
	Garbage float64
	// Pause makes the client stop reading stdout for Campaign.PauseFor
	// after the request: back-pressure on the server's writes. Over HTTP
	// it is a client of its own that calls the echo tool with
	// Campaign.PauseSize bytes of text and leaves the response unread
	// until other clients' calls have been answered meanwhile.
	Pause float64
	// Disconnect (HTTP only) is a client of its own that closes its
	// connection in the middle of a response stream: a large echo read in
	// part, or a slow call's progress stream after its first event.
	Disconnect float64
	// Delete (HTTP, legacy only) starts a session of its own, gives it
	// calls, and DELETEs it with them in flight: they must be answered or
	// their streams end, and the session's id must then get 404.
	Delete float64
}

// DefaultRates are the rates of `mcprt chaos`.
var DefaultRates = Rates{Panic: 0.05, Hang: 0.01, Slow: 0.10, Cancel: 0.05, Garbage: 0.02, Pause: 0.005, Disconnect: 0.005, Delete: 0.003}

func (r Rates) validate() error {
	sum := 0.0
	for _, p := range []float64{r.Panic, r.Hang, r.Slow, r.Cancel, r.Garbage, r.Pause, r.Disconnect, r.Delete} {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("fault: rate %v is not between 0 and 1", p)
		}
	}
	sum = r.Panic + r.Hang + r.Slow + r.Cancel
	if sum > 1+1e-9 {
		return fmt.Errorf("fault: panic+hang+slow+cancel rates add up to %v, more than 1", sum)
	}
	return nil
}

// Tools names the tools a campaign calls. Empty names are looked up in
// tools/list: "echo", "sleep" and "panic", the tools of mcprt's reference
// server and of the benchmark contract, or, behind a gateway that prefixes
// its backends' names, "<prefix>__echo" and so on (of the one prefix that
// has the most of the three). Without an echo tool, quick requests are
// pings (tools/list in 2026-07-28); without a slow or panic tool, the
// faults that need it are not injected (see Report.Notes). Report.Tools
// says which were used.
type Tools struct {
	Echo  string // returns its "text" argument as a text block; answers are checked
	Slow  string // sleeps "ms" milliseconds, and stops when cancelled
	Panic string // fails, by panicking or otherwise, on every call
}

// Campaign drives one MCP server, over stdio or Streamable HTTP, through a
// seeded mix of requests and faults and checks everything it sends back.
// Set exactly one of Command, Server and URL; every other field has a
// usable zero value.
type Campaign struct {
	// Command runs the server as a child process: the program and its
	// arguments. Env is its environment (nil: this process's).
	Command []string
	Env     []string
	// Server runs the server in-process instead: runtime.Start in an engine
	// of its own, over in-memory pipes, with ServerOptions. Process faults
	// map to their in-process equivalents (SIGTERM is Instance.Drain).
	Server        *handlers.Server
	ServerOptions runtime.Options

	// HTTP speaks Streamable HTTP to the server the campaign starts,
	// instead of stdio. A Command must print its endpoint's URL: the first
	// http:// or https:// URL on a line of its stdout or stderr, as
	// `mcprt serve -http 127.0.0.1:0` does (a host of 0.0.0.0 or [::] is
	// reached on loopback). A Server is served in-process by
	// runtime/streamhttp on a loopback port, at /mcp. The Ending is
	// EndSIGTERM (the zero Ending means it here): in-process, the handler's
	// Shutdown.
	HTTP bool
	// URL drives a Streamable HTTP server that is already running at this
	// endpoint: the campaign does not end it (EndNone).
	URL string
	// Header is sent with every HTTP request (an Authorization, say).
	Header http.Header
	// Clients share the requests over HTTP (0: 4): legacy sessions, each
	// initialized and with its GET stream open, or 2026-07-28 clients,
	// stateless; each has connections of its own, and they use the same
	// request ids at once.
	Clients int
	// MaxBody is the server's bound on a request body, when known (mcprt
	// serve's -http-max-body; in-process it is set on the handler): a body
	// larger must get 413, a smaller one an answer. 0: unknown, a huge
	// body may get either.
	MaxBody int64
	// PauseSize is the text, in bytes, echoed to a paused or disconnecting
	// HTTP client (0: 8 MiB, at most MaxBody less 4 KiB): more than the
	// buffers of a loopback connection hold (Linux lets a socket's send
	// buffer grow to 4 MiB), so that the server's writes do block.
	PauseSize int
	// Flood (HTTP, legacy era) is a number of initialize handshakes sent
	// once the plan's requests are, never used again nor deleted: each
	// must be served or refused as busy (503), a new client must then be
	// served at once, and every session in use (the clients', their GET
	// streams open) must still answer. Past its cap on sessions a server
	// must close idle ones, not lock new clients out (mcprt serve's cap is
	// -http-max-sessions, 1000 by default). 0: no flood.
	Flood int
	// AutoEra (HTTP only) settles the era first, as a 2026-07-28 client
	// does: server/discover, and the initialize handshake if the server
	// does not answer it. Modern is then ignored.
	AutoEra bool

	// Seed fixes every choice the campaign makes: which request is which
	// fault, ids, texts, garbage. The same seed gives the same plan.
	Seed uint64
	// Requests is how many requests to send (0: 1000).
	Requests int
	Rates    Rates
	Tools    Tools
	Ending   Ending
	// Modern speaks 2026-07-28 (server/discover, _meta on every request;
	// over HTTP the headers that go with them) instead of the initialize
	// handshake.
	Modern bool
	// ProtocolVersion is offered in initialize (legacy only; "": 2025-06-18).
	// With RequireVersion, a server that answers another revision fails
	// the handshake; without, the campaign goes on in the one it answered.
	ProtocolVersion string
	RequireVersion  bool
	// Window bounds the quick requests (echo, panic, slow) awaiting an
	// answer at once (0: 64). Hangs and cancelled requests do not count.
	Window int

	HangFor  time.Duration // how long hung and cancelled calls ask to sleep (0: 10 min)
	SlowFor  time.Duration // the longest a slow call sleeps (0: 20 ms)
	PauseFor time.Duration // how long a pause stops the reader (0: 200 ms)
	HugeSize int           // bytes in the text of a huge line (0: 1 MiB)
	// Timeout bounds the handshake and the sending (0: 2 min); ExitTimeout
	// bounds the wait for the answer to the health check, and for the
	// server to exit once ended (0: 30 s), after which it is killed.
	Timeout     time.Duration
	ExitTimeout time.Duration
}

// Report is what a campaign saw. Every request is in exactly one of
// AnsweredOnce, AnsweredTwice, NeverAnswered, Unread and the cancelled
// requests that got no answer (Cancelled - CancelledAnswered).
type Report struct {
	Seed   uint64
	Ending Ending
	// Transport is "stdio" or "http"; Era "legacy" or "modern". Over HTTP,
	// URL is the endpoint, Clients how many clients shared the requests,
	// and HTTPStatuses counts the statuses of every response.
	Transport    string
	Era          string
	URL          string
	Clients      int
	HTTPStatuses map[int]int
	// Sent counts the requests sent, handshake and fault lines excluded.
	Sent              int // over HTTP, paused clients' calls included
	AnsweredOnce      int
	AnsweredTwice     int // answered more than once: always a violation
	NeverAnswered     int // not cancelled and no answer by the time the server's output closed
	Unread            int // EndClosedStdout: still outstanding when the client stopped reading; EndNone: when the sessions ended
	Cancelled         int
	CancelledAnswered int // answered anyway: the cancel raced with the answer
	// CancelledBlind are the cancellations whose outcome a client cannot
	// see: over HTTP, those whose stream the client closed (2026-07-28's
	// cancellation, and legacy ones closed before notifications/cancelled).
	CancelledBlind int
	// Faults counts what was injected, by name: panic, hang, slow, cancel,
	// garbage, truncated, invalid-utf8, deep, huge, pause; over HTTP also
	// media-type, no-session, unknown-session, header-mismatch,
	// notification, unknown-method, disconnect, delete and flood (the
	// handshakes of Campaign.Flood).
	Faults map[string]int
	// FloodServed and FloodRefused count the flood's handshakes served and
	// refused as busy; FloodNewClient is true when a new client was served
	// after them.
	FloodServed, FloodRefused int
	FloodNewClient            bool
	// NullIDErrors are error responses with a null id (answers to lines
	// whose id could not be read); Notifications and ServerRequests count
	// the other messages the server sent.
	NullIDErrors   int
	Notifications  int
	ServerRequests int
	// EchoErrors are echo calls answered with an error rather than their
	// text: deadlines passed under load, refusals while shutting down. Not
	// a failure; an echo answered with the wrong text is.
	EchoErrors int
	// Violations are the protocol violations seen on stdout and the answers
	// that were wrong, in order (at most 100 kept; ViolationCount has all).
	Violations     []string
	ViolationCount int
	// Exited is false when the server had to be killed after ExitTimeout.
	// ExitCode is its status (-1: killed by a signal); TimeToExit runs from
	// the ending (EOF, SIGTERM, closed stdout) to the exit.
	// Healthy is true when, after every request and fault and before the
	// Ending, the server still answered one more call correctly.
	Healthy bool
	// ExitedEarly is true when the server exited before the campaign ended
	// it (crashed, or stopped on its own), which is a failure.
	Exited      bool
	ExitedEarly bool
	ExitCode    int
	TimeToExit  time.Duration
	// CPU is the user and system time the server process used (0 in-process).
	CPU     time.Duration
	Elapsed time.Duration
	// Tools are the tools the campaign called ("" for none).
	Tools Tools
	// Notes explain faults that could not be injected and other remarks
	// that are not failures.
	Notes      []string
	StderrTail string

	problems []string
}

// Problems lists everything that makes the report a failure: violations,
// lost or duplicated answers, and a server that did not exit cleanly.
func (r *Report) Problems() []string { return r.problems }

// OK reports whether the campaign found nothing wrong.
func (r *Report) OK() bool { return len(r.problems) == 0 }

// String renders the report for people.
func (r *Report) String() string {
	var b []byte
	b = fmt.Appendf(b, "seed %d, ending %s, %v\n", r.Seed, r.Ending, r.Elapsed.Round(time.Millisecond))
	if r.Transport == "http" {
		who := "legacy sessions"
		if r.Era == "modern" {
			who = "stateless clients"
		}
		b = fmt.Appendf(b, "http: %s, %d %s; statuses:", r.URL, r.Clients, who)
		codes := make([]int, 0, len(r.HTTPStatuses))
		for c := range r.HTTPStatuses {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		for _, c := range codes {
			b = fmt.Appendf(b, " %d=%d", c, r.HTTPStatuses[c])
		}
		b = append(b, '\n')
	}
	b = fmt.Appendf(b, "requests: %d sent, %d answered once, %d answered twice, %d never answered, %d unread\n",
		r.Sent, r.AnsweredOnce, r.AnsweredTwice, r.NeverAnswered, r.Unread)
	b = fmt.Appendf(b, "cancelled: %d (%d answered anyway: raced", r.Cancelled, r.CancelledAnswered)
	if r.CancelledBlind > 0 {
		b = fmt.Appendf(b, "; %d by closing the stream, unseen", r.CancelledBlind)
	}
	b = fmt.Appendf(b, "); healthy after: %v\n", r.Healthy)
	b = fmt.Appendf(b, "faults:")
	for _, k := range faultNames {
		if n := r.Faults[k]; n > 0 {
			b = fmt.Appendf(b, " %s=%d", k, n)
		}
	}
	if n := r.Faults["flood"]; n > 0 {
		b = fmt.Appendf(b, "\nsession flood: %d handshakes abandoned, %d served, %d refused as busy; a new client served after them: %v",
			n, r.FloodServed, r.FloodRefused, r.FloodNewClient)
	}
	b = fmt.Appendf(b, "\nother output: %d echo errors, %d null-id errors, %d notifications, %d server requests\n",
		r.EchoErrors, r.NullIDErrors, r.Notifications, r.ServerRequests)
	switch {
	case r.Ending == EndNone && !r.ExitedEarly:
		b = fmt.Appendf(b, "exit: not ended (a server the campaign did not start)")
	case r.ExitedEarly:
		b = fmt.Appendf(b, "exit: status %d, before the ending", r.ExitCode)
	case r.Exited:
		b = fmt.Appendf(b, "exit: status %d, %v after the ending", r.ExitCode, r.TimeToExit.Round(time.Millisecond))
	default:
		b = fmt.Appendf(b, "exit: none within the exit timeout; killed")
	}
	if r.CPU > 0 {
		b = fmt.Appendf(b, ", %v CPU", r.CPU.Round(time.Millisecond))
	}
	b = append(b, '\n')
	b = fmt.Appendf(b, "tools: echo %s, slow %s, panic %s\n", toolOrNone(r.Tools.Echo), toolOrNone(r.Tools.Slow), toolOrNone(r.Tools.Panic))
	for _, n := range r.Notes {
		b = fmt.Appendf(b, "note: %s\n", n)
	}
	for _, v := range r.Violations {
		b = fmt.Appendf(b, "violation: %s\n", v)
	}
	if r.ViolationCount > len(r.Violations) {
		b = fmt.Appendf(b, "violation: ... %d more\n", r.ViolationCount-len(r.Violations))
	}
	if r.OK() {
		b = append(b, "PASS\n"...)
	} else {
		for _, p := range r.problems {
			b = fmt.Appendf(b, "FAIL: %s\n", p)
		}
	}
	return string(b)
}

var faultNames = []string{"panic", "hang", "slow", "cancel", "garbage", "truncated", "invalid-utf8", "deep", "huge", "pause",
	"media-type", "no-session", "unknown-session", "header-mismatch", "notification", "unknown-method", "disconnect", "delete", "flood"}

const maxViolations = 100

// Run executes the campaign. It returns an error only when the campaign
// could not be carried out (the server did not start or failed the
// handshake); everything wrong with the server's behaviour after that is in
// the Report. ctx cancels the run like Timeout does.
func (c *Campaign) Run(ctx context.Context) (*Report, error) {
	cfg := *c
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.HTTP || cfg.URL != "" {
		return runHTTP(ctx, &cfg)
	}
	var (
		tg  target
		err error
	)
	if cfg.Server != nil {
		tg, err = startTree(cfg.Server, cfg.ServerOptions)
	} else {
		tg, err = startProcess(cfg.Command, cfg.Env)
	}
	if err != nil {
		return nil, err
	}
	r := newRun(&cfg, tg)
	return r.run(ctx)
}

// ErrBadCampaign is wrapped by the errors of Run for a Campaign that cannot
// be run as configured (no server, rates that are not probabilities, an
// ending the transport does not have).
var ErrBadCampaign = errors.New("fault: bad campaign")

func (c *Campaign) defaults() error {
	n := 0
	for _, set := range []bool{len(c.Command) > 0, c.Server != nil, c.URL != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%w: set exactly one of Command, Server and URL", ErrBadCampaign)
	}
	if err := c.Rates.validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadCampaign, err)
	}
	switch {
	case c.URL != "":
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: URL %q is not an http:// or https:// URL", ErrBadCampaign, c.URL)
		}
		if c.Ending != EndEOF && c.Ending != EndNone {
			return fmt.Errorf("%w: a server at a URL is not the campaign's to end (ending %s; want none)", ErrBadCampaign, c.Ending)
		}
		c.Ending = EndNone
	case c.HTTP:
		if c.Ending != EndEOF && c.Ending != EndSIGTERM {
			return fmt.Errorf("%w: over HTTP the campaign ends the server it starts with SIGTERM (ending %s)", ErrBadCampaign, c.Ending)
		}
		c.Ending = EndSIGTERM
	default:
		if c.Ending == EndNone {
			return fmt.Errorf("%w: ending none is for a server at a URL", ErrBadCampaign)
		}
		if c.AutoEra {
			return fmt.Errorf("%w: AutoEra is for HTTP (over stdio, settle the era first, as mcprt chaos -era auto does)", ErrBadCampaign)
		}
	}
	if c.MaxBody < 0 {
		return fmt.Errorf("%w: MaxBody %d is negative", ErrBadCampaign, c.MaxBody)
	}
	if c.Flood < 0 || (c.Flood > 0 && !c.HTTP && c.URL == "") {
		return fmt.Errorf("%w: Flood %d: a flood of sessions is for Streamable HTTP, and not negative", ErrBadCampaign, c.Flood)
	}
	if c.Clients <= 0 {
		c.Clients = 4
	}
	if c.PauseSize <= 0 {
		c.PauseSize = 8 << 20
	}
	if c.MaxBody > 0 && int64(c.PauseSize) > c.MaxBody-4096 {
		c.PauseSize = int(max(c.MaxBody-4096, c.MaxBody/2, 1))
	}
	if c.Requests <= 0 {
		c.Requests = 1000
	}
	if c.ProtocolVersion == "" {
		c.ProtocolVersion = "2025-06-18"
	}
	if c.Window <= 0 {
		c.Window = 64
	}
	if c.HangFor <= 0 {
		c.HangFor = 10 * time.Minute
	}
	if c.SlowFor <= 0 {
		c.SlowFor = 20 * time.Millisecond
	}
	if c.PauseFor <= 0 {
		c.PauseFor = 200 * time.Millisecond
	}
	if c.HugeSize <= 0 {
		c.HugeSize = 1 << 20
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Minute
	}
	if c.ExitTimeout <= 0 {
		c.ExitTimeout = 30 * time.Second
	}
	return nil
}

// reqKind is what one planned request is.
type reqKind int

const (
	kindQuick reqKind = iota // echo (checked) or ping
	kindPanic
	kindHang
	kindSlow
	kindCancel
	kindControl // handshake and tool discovery
	kindLenient // fault lines and the EPIPE burst: at most one answer, maybe none
)

// reqKindNames name the request kinds that are faults, as Report.Faults does.
var reqKindNames = map[reqKind]string{kindPanic: "panic", kindHang: "hang", kindSlow: "slow", kindCancel: "cancel"}

// req is the campaign's record of one id it sent.
type req struct {
	kind      reqKind
	text      string // the echo text expected back; "" when not checked
	cancelled bool
	blind     bool // cancelled by closing its stream: no answer could be seen
	over      bool // HTTP: its exchange has ended
	answers   int
	first     *outMsg
}

// run is one execution of a campaign.
type run struct {
	cfg *Campaign
	tg  target
	rep *Report

	wmu    sync.Mutex // one writer of stdin at a time
	closed bool       // stdin closed; under wmu

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every line read
	reqs        map[string]*req
	lenientN    int // lenient lines sent: the most null-id errors that may come back
	readerDone  chan struct{}
	pauseUntil  atomic.Int64 // unix ns before which the reader does not read
	stdinBroken atomic.Bool  // a write to stdin failed

	slots chan struct{} // the window: one token per quick request awaiting its answer
	meta  []byte        // 2026-07-28 _meta, nil in legacy

	// Over HTTP: how many clients share the plan (0: stdio), and the
	// malformed requests of the transport, besides the lines of stdio.
	clients    int
	httpFaults []string
}

func newRun(cfg *Campaign, tg target) *run {
	r := &run{
		cfg:        cfg,
		tg:         tg,
		rep:        &Report{Seed: cfg.Seed, Ending: cfg.Ending, Faults: map[string]int{}, Transport: "stdio", Era: "legacy"},
		changed:    make(chan struct{}),
		reqs:       map[string]*req{},
		readerDone: make(chan struct{}),
		slots:      make(chan struct{}, cfg.Window),
	}
	if cfg.Modern {
		r.rep.Era = "modern"
		r.meta = []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcprt-fault","version":"1"}}`)
	}
	return r
}

func (r *run) run(ctx context.Context) (*Report, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	go r.read()
	// A write blocked on a server that stopped reading must not outlive
	// the timeout: closing stdin unblocks it.
	watchDone := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() {
		select {
		case <-ctx.Done():
			r.closeStdin()
		case <-watchDone:
		}
	})
	stopWatch := sync.OnceFunc(func() {
		close(watchDone)
		watch.Wait()
	})
	defer stopWatch()

	if err := r.handshake(ctx); err != nil {
		r.abort()
		return nil, err
	}
	steps := r.plan()
	r.rep.Tools = r.cfg.Tools
	timedOut := r.send(ctx, steps)
	if !timedOut {
		r.checkHealth(ctx)
	}
	// From here on the Ending alone decides what the server sees: a late
	// timeout must not add an EOF to a SIGTERM or EPIPE ending.
	stopWatch()
	if r.stdinBroken.Load() {
		// stdin broke (EPIPE): the server is on its way out, which must
		// not pass for the effect of the ending.
		t := time.NewTimer(r.cfg.ExitTimeout)
		select {
		case <-r.tg.exited():
		case <-t.C:
		}
		t.Stop()
	}
	select {
	case <-r.tg.exited():
		r.rep.ExitedEarly = true
	default:
	}
	endAt := r.end(ctx)

	// Wait for the exit, then for the output to close: only then is the
	// count of answers final.
	exitTimer := time.NewTimer(r.cfg.ExitTimeout)
	defer exitTimer.Stop()
	select {
	case <-r.tg.exited():
		r.rep.Exited = true
		if !r.rep.ExitedEarly {
			r.rep.TimeToExit = time.Since(endAt)
		}
	case <-exitTimer.C:
		r.tg.kill()
	}
	r.closeStdin()
	r.waitReader()
	r.rep.ExitCode, r.rep.CPU = r.tg.result()
	r.rep.StderrTail = r.tg.stderrTail()
	r.rep.Elapsed = time.Since(start)
	r.tally(timedOut)
	return r.rep, nil
}

// waitReader waits for the reader to see the end of the output. A process
// that left a child holding its stdout would keep it open: past a bound,
// the read end is closed under the reader.
func (r *run) waitReader() {
	select {
	case <-r.readerDone:
		return
	case <-time.After(5 * time.Second):
	}
	r.note("stdout stayed open 5s after the server exited (a child process holding it?)")
	r.tg.closeStdout()
	<-r.readerDone
}

// abort kills the server after a failed handshake and waits for the reader.
func (r *run) abort() {
	r.tg.kill()
	r.closeStdin()
	r.waitReader()
}

func (r *run) note(format string, args ...any) {
	r.mu.Lock()
	r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// violate records a violation; r.mu must be held.
func (r *run) violate(format string, args ...any) {
	r.rep.ViolationCount++
	if len(r.rep.Violations) < maxViolations {
		r.rep.Violations = append(r.rep.Violations, fmt.Sprintf(format, args...))
	}
}

// ---- output ----

// read is the only reader of the server's output.
func (r *run) read() {
	defer close(r.readerDone)
	br := bufio.NewReaderSize(r.tg.stdout(), 64<<10)
	for {
		if d := time.Until(time.Unix(0, r.pauseUntil.Load())); d > 0 {
			time.Sleep(d)
		}
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			r.handle(line, err == nil)
		}
		if err != nil {
			return
		}
	}
}

func (r *run) handle(line []byte, terminated bool) {
	r.mu.Lock()
	defer func() {
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}()
	if !terminated {
		r.violate("last line has no newline: %s", clip(line))
		return
	}
	m, err := parseOut(line[:len(line)-1])
	if err != nil {
		r.violate("not a JSON-RPC message (%v): %s", err, clip(line))
		return
	}
	switch m.kind {
	case outNotification:
		r.rep.Notifications++
		return
	case outRequest:
		r.rep.ServerRequests++
		return
	}
	if string(m.id) == "null" {
		if !m.isError {
			r.violate("result with a null id: %s", clip(line))
		}
		r.rep.NullIDErrors++
		return
	}
	q, first := r.answer(m.key, "", m, line)
	if first {
		switch q.kind {
		case kindQuick, kindPanic, kindSlow:
			select {
			case <-r.slots:
			default: // cannot happen: each quick request holds one
			}
		}
	}
}

// answer files m, a response, as an answer to the request filed under key,
// and checks it; r.mu is held. who names the request in violations ("":
// "id" and m's id). It returns the request (nil if unknown) and whether m
// is its first answer.
func (r *run) answer(key, who string, m *outMsg, raw []byte) (*req, bool) {
	if who == "" {
		who = "id " + string(m.id)
	}
	q := r.reqs[key]
	if q == nil {
		r.violate("response to unknown id %s: %s", m.id, clip(raw))
		return nil, false
	}
	q.answers++
	if q.answers > 1 {
		r.violate("%s answered %d times; latest: %s", who, q.answers, clip(raw))
		return q, false
	}
	q.first = m
	switch {
	case q.text == "":
	case m.isError || isToolError(m.result):
		// A deadline that passed under load, a server refusing work once
		// ended, a gateway whose backend died: an error, as a JSON-RPC
		// error or a tool result with isError, is still an answer, and not
		// a wrong one.
		r.rep.EchoErrors++
	default:
		if got, err := echoText(m.result); err != nil || got != q.text {
			r.violate("echo %s answered %q (%v), want %s", who, clipString(got), err, clipString(q.text))
		}
	}
	return q, true
}

// clipString quotes s, cut short if long (a paused client's echo is 1 MiB).
func clipString(s string) string {
	if len(s) > 200 {
		return strconv.Quote(s[:200]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return strconv.Quote(string(b))
}

// await waits until the request key has an answer, or ctx ends or the
// output closes, and returns the answer.
func (r *run) await(ctx context.Context, key string) *outMsg {
	for {
		r.mu.Lock()
		m := r.reqs[key].first
		ch := r.changed
		r.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		case <-r.readerDone:
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.reqs[key].first
		}
	}
}

// ---- input ----

func (r *run) write(b []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if r.closed {
		return errors.New("stdin closed")
	}
	_, err := r.tg.stdin().Write(b)
	if err != nil {
		r.stdinBroken.Store(true)
	}
	return err
}

func (r *run) closeStdin() {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if !r.closed {
		r.closed = true
		r.tg.stdin().Close()
	}
}

// track registers an id before its line is written, so an answer can never
// arrive for an id the reader does not know yet.
func (r *run) track(key string, q *req) {
	r.mu.Lock()
	r.reqs[key] = q
	if q.kind == kindLenient {
		r.lenientN++
	}
	r.mu.Unlock()
}

func (r *run) control(ctx context.Context, id, method string, params []byte) (*outMsg, error) {
	raw, _ := json.Marshal(id)
	r.track(idKey(raw), &req{kind: kindControl})
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q`, raw, method)
	if params != nil {
		line = fmt.Appendf(line, `,"params":%s`, params)
	}
	line = append(line, "}\n"...)
	if err := r.write(line); err != nil {
		return nil, fmt.Errorf("fault: writing %s: %w", method, err)
	}
	m := r.await(ctx, idKey(raw))
	if m == nil {
		return nil, fmt.Errorf("fault: no answer to %s", method)
	}
	return m, nil
}

func (r *run) handshake(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if r.cfg.Modern {
		m, err := r.control(ctx, "fault-discover", "server/discover", fmt.Appendf(nil, `{"_meta":%s}`, r.meta))
		if err != nil {
			return err
		}
		if m.isError {
			return errors.New("fault: server/discover failed: the server does not speak 2026-07-28")
		}
	} else {
		params := fmt.Appendf(nil, `{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcprt-fault","version":"1"}}`, r.cfg.ProtocolVersion)
		m, err := r.control(ctx, "fault-init", "initialize", params)
		if err != nil {
			return err
		}
		if m.isError {
			return errors.New("fault: initialize failed")
		}
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.result, &res)
		if r.cfg.RequireVersion && res.ProtocolVersion != r.cfg.ProtocolVersion {
			return fmt.Errorf("fault: the server answered initialize with protocol version %q; %s was required", res.ProtocolVersion, r.cfg.ProtocolVersion)
		}
		if err := r.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
			return fmt.Errorf("fault: writing notifications/initialized: %w", err)
		}
	}
	return r.discoverTools(ctx)
}

// discoverTools fills the empty names of Tools from tools/list.
func (r *run) discoverTools(ctx context.Context) error {
	// Listed also when every tool is named: a named tool the server does
	// not list would make its faults plain errors, and the campaign pass
	// without testing them.
	var params []byte
	if r.meta != nil {
		params = fmt.Appendf(nil, `{"_meta":%s}`, r.meta)
	}
	m, err := r.control(ctx, "fault-tools", "tools/list", params)
	if err != nil {
		return err
	}
	return fillTools(&r.cfg.Tools, m)
}

// fillTools fills the empty names of t from m, the answer to tools/list.
// A name given that the server does not list is an error (ErrBadCampaign)
// naming those it does; a server whose tools/list fails is taken at its
// word.
func fillTools(t *Tools, m *outMsg) error {
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if !m.isError {
		_ = json.Unmarshal(m.result, &list)
	}
	names := make([]string, len(list.Tools))
	for i, tl := range list.Tools {
		names[i] = tl.Name
	}
	if !m.isError {
		for _, named := range []struct{ kind, name string }{{"echo", t.Echo}, {"slow", t.Slow}, {"panic", t.Panic}} {
			if named.name != "" && !slices.Contains(names, named.name) {
				return unlistedTool(named.kind, named.name, names)
			}
		}
	}
	t.Echo, t.Slow, t.Panic = cmp.Or(t.Echo, findTool(names, "echo")), cmp.Or(t.Slow, findTool(names, "sleep")), cmp.Or(t.Panic, findTool(names, "panic"))
	return nil
}

// unlistedTool says that the kind tool named name is not one of names,
// the tools the server lists, naming them, and the prefixed name a
// gateway gives it when one is listed.
func unlistedTool(kind, name string, names []string) error {
	msg := fmt.Sprintf("the %s tool %q is not one the server lists", kind, name)
	for _, n := range names {
		if strings.HasSuffix(n, "__"+name) {
			msg += fmt.Sprintf(" (behind a gateway its name is prefixed: %q?)", n)
			break
		}
	}
	const most = 30
	switch {
	case len(names) == 0:
		msg += "; it lists no tools"
	case len(names) > most:
		msg += fmt.Sprintf("; it lists %s and %d more", strings.Join(names[:most], ", "), len(names)-most)
	default:
		msg += "; it lists " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%w: %s", ErrBadCampaign, msg)
}

// findTool is the tool of names called want, or, when there is none (as
// behind a gateway), the one called "<prefix>__"+want of the prefix that
// has the most of echo, sleep and panic (the first such prefix in sorted
// order on a tie), so that one backend's tools are called together; ""
// when there is neither.
func findTool(names []string, want string) string {
	if slices.Contains(names, want) {
		return want
	}
	const sep = "__"
	count := map[string]int{}
	for _, n := range names {
		for _, w := range []string{"echo", "sleep", "panic"} {
			if p, ok := strings.CutSuffix(n, sep+w); ok && p != "" {
				count[p]++
			}
		}
	}
	best := ""
	for _, p := range slices.Sorted(maps.Keys(count)) {
		if slices.Contains(names, p+sep+want) && (best == "" || count[p] > count[best]) {
			best = p
		}
	}
	if best == "" {
		return ""
	}
	return best + sep + want
}

func toolOrNone(name string) string { return cmp.Or(name, "none") }

// step is one planned request, with the faults around it.
type step struct {
	kind    reqKind
	key     string
	line    []byte // the request, '\n' included, plus its cancellation if any
	text    string
	fault   string // name of the malformed line before it ("" none)
	faultID string // its id key
	bad     []byte
	pause   bool

	// Over HTTP only (drawn only there, so that stdio plans stay as they
	// were): a paused client's call is a slow call's progress stream
	// rather than a large echo; a legacy cancellation closes the call's
	// stream before notifications/cancelled; a client disconnects
	// mid-stream after this request (after part of a large echo, or, with
	// disconnectSSE, the first event of a slow call's progress stream); a
	// session is DELETEd with calls in flight.
	pauseSSE      bool
	closeFirst    bool
	disconnect    bool
	disconnectSSE bool
	del           bool
}

// plan draws every request and fault from the seed, before anything is
// sent: the same seed and tools give the same plan.
func (r *run) plan() []step {
	cfg := r.cfg
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x6d637072742d6661))
	t := cfg.Tools
	if t.Slow == "" && cfg.Rates.Hang+cfg.Rates.Slow+cfg.Rates.Cancel > 0 {
		r.note("no slow tool (name one, or list a \"sleep\" tool): hang, slow and cancel faults are plain requests")
	}
	if t.Panic == "" && cfg.Rates.Panic > 0 {
		r.note("no panic tool (name one, or list a \"panic\" tool): panic faults are plain requests")
	}
	if t.Echo == "" {
		r.note("no echo tool: quick requests are not checked for content, and malformed lines are garbage or truncated only")
	}
	rt := cfg.Rates
	steps := make([]step, cfg.Requests)
	for i := range steps {
		s := &steps[i]
		// Over HTTP request i goes to client i%clients, and the clients
		// use the same ids at once: each its own 1, 2, 3...
		n := i + 1
		if r.clients > 0 {
			n = i/r.clients + 1
		}
		var id json.RawMessage
		if rng.IntN(5) == 0 {
			id, _ = json.Marshal("f-" + strconv.Itoa(n))
		} else {
			id = strconv.AppendInt(nil, int64(n), 10)
		}
		s.key = idKey(id)
		u := rng.Float64()
		switch {
		case u < rt.Panic:
			s.kind = kindPanic
		case u < rt.Panic+rt.Hang:
			s.kind = kindHang
		case u < rt.Panic+rt.Hang+rt.Slow:
			s.kind = kindSlow
		case u < rt.Panic+rt.Hang+rt.Slow+rt.Cancel:
			s.kind = kindCancel
		}
		if (s.kind == kindPanic && t.Panic == "") || (s.kind >= kindHang && s.kind <= kindCancel && t.Slow == "") {
			s.kind = kindQuick
		}
		switch s.kind {
		case kindQuick:
			if t.Echo != "" {
				s.text = fmt.Sprintf("fault %d/%d ✓ \"q\" <&>", cfg.Seed, i+1)
				txt, _ := json.Marshal(s.text)
				s.line = callLine(id, t.Echo, fmt.Appendf(nil, `{"text":%s`, txt), r.meta)
			} else if r.meta != nil {
				s.line = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{"_meta":%s}}`+"\n", id, r.meta)
			} else {
				s.line = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", id)
			}
		case kindPanic:
			s.line = callLine(id, t.Panic, []byte("{"), r.meta)
		case kindSlow:
			ms := rng.Int64N(cfg.SlowFor.Milliseconds() + 1)
			s.line = callLine(id, t.Slow, fmt.Appendf(nil, `{"ms":%d`, ms), r.meta)
		case kindHang, kindCancel:
			s.line = callLine(id, t.Slow, fmt.Appendf(nil, `{"ms":%d`, cfg.HangFor.Milliseconds()), r.meta)
			if s.kind == kindCancel {
				s.line = fmt.Appendf(s.line, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"fault: cancelled"}}`+"\n", id)
			}
		}
		if rng.Float64() < rt.Garbage {
			r.planBad(s, rng, i)
		}
		s.pause = rng.Float64() < rt.Pause
		if r.clients > 0 {
			s.pauseSSE = rng.IntN(2) == 0 && t.Slow != ""
			s.closeFirst = rng.IntN(2) == 0 && s.kind == kindCancel && r.meta == nil
			s.disconnect = rng.Float64() < rt.Disconnect
			s.disconnectSSE = rng.IntN(2) == 0 && t.Slow != ""
			s.del = rng.Float64() < rt.Delete && r.meta == nil
		}
	}
	return steps
}

// planBad chooses the malformed line to write before a request.
func (r *run) planBad(s *step, rng *rand.Rand, i int) {
	kinds := []string{"garbage", "truncated"}
	if r.cfg.Tools.Echo != "" {
		kinds = append(kinds, "invalid-utf8", "deep", "huge")
	}
	kinds = append(kinds, r.httpFaults...)
	s.fault = kinds[rng.IntN(len(kinds))]
	id, _ := json.Marshal("x-" + strconv.Itoa(i+1))
	s.faultID = idKey(id)
	echo := r.cfg.Tools.Echo
	switch s.fault {
	case "garbage":
		s.bad = garbageLine(rng)
	case "truncated":
		// Its own id, never the next request's: a server that salvaged
		// the id from the fragment must not seem to answer that twice.
		s.bad = truncatedLine(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`, id), rng)
	case "invalid-utf8":
		s.bad = invalidUTF8Line(id, echo, r.meta)
	case "deep":
		// Shallow enough to parse, or far past encoding/json's 10,000.
		depth := []int{64, 100_000}[rng.IntN(2)]
		s.bad = deepLine(id, echo, depth, r.meta)
	case "huge":
		s.bad = hugeLine(id, echo, r.cfg.HugeSize, r.meta)
	default:
		s.bad = httpFaultBody(s.fault, id, r.meta)
	}
}

// checkHealth asks, after every request and fault and before the Ending,
// for one more answer that must be right: the server survived the campaign.
func (r *run) checkHealth(ctx context.Context) {
	select {
	case <-r.tg.exited():
		return
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ExitTimeout)
	defer cancel()
	var (
		m   *outMsg
		err error
	)
	switch {
	case r.cfg.Tools.Echo != "":
		params := fmt.Appendf(nil, `{"name":%q,"arguments":{"text":%q}`, r.cfg.Tools.Echo, healthText)
		if r.meta != nil {
			params = fmt.Appendf(params, `,"_meta":%s`, r.meta)
		}
		m, err = r.control(ctx, "fault-health", "tools/call", append(params, '}'))
	case r.meta != nil:
		m, err = r.control(ctx, "fault-health", "tools/list", fmt.Appendf(nil, `{"_meta":%s}`, r.meta))
	default:
		m, err = r.control(ctx, "fault-health", "ping", nil)
	}
	if err != nil || m.isError {
		return
	}
	if r.cfg.Tools.Echo != "" {
		if got, err := echoText(m.result); err != nil || got != healthText {
			return
		}
	}
	r.rep.Healthy = true
}

// send writes the plan. It reports whether the timeout cut it short.
func (r *run) send(ctx context.Context, steps []step) (timedOut bool) {
	for i := range steps {
		s := &steps[i]
		if ctx.Err() != nil {
			return true
		}
		if s.bad != nil {
			// Every malformed line may draw one null-id error, or an
			// answer under its own id instead, once.
			r.track(s.faultID, &req{kind: kindLenient})
			r.rep.Faults[s.fault]++
			if err := r.write(s.bad); err != nil {
				r.stdinFailed(i, err)
				return ctx.Err() != nil
			}
		}
		switch s.kind {
		case kindQuick, kindPanic, kindSlow:
			select {
			case r.slots <- struct{}{}:
			case <-ctx.Done():
				return true
			case <-r.tg.exited():
				return false // no one left to answer: the report says so
			}
		}
		r.track(s.key, &req{kind: s.kind, text: s.text, cancelled: s.kind == kindCancel})
		if name := reqKindNames[s.kind]; name != "" {
			r.rep.Faults[name]++
		}
		r.rep.Sent++
		if err := r.write(s.line); err != nil {
			r.stdinFailed(i, err)
			return ctx.Err() != nil
		}
		if s.pause {
			r.rep.Faults["pause"]++
			r.pauseUntil.Store(time.Now().Add(r.cfg.PauseFor).UnixNano())
		}
	}
	return false
}

func (r *run) stdinFailed(i int, err error) {
	r.mu.Lock()
	r.violate("writing request %d to stdin failed: %v (the server stopped reading or exited early)", i+1, err)
	r.mu.Unlock()
}

// end carries out the Ending and returns when it happened.
func (r *run) end(ctx context.Context) time.Time {
	switch r.cfg.Ending {
	case EndSIGTERM:
		r.awaitQuick(ctx)
		at := time.Now()
		if err := r.tg.terminate(); err != nil {
			r.note("SIGTERM: %v", err)
		}
		return at
	case EndClosedStdout:
		// Quick requests first, so the accounting before the close is whole.
		r.awaitQuick(ctx)
		r.mu.Lock()
		for _, q := range r.reqs {
			if q.first == nil && q.kind != kindLenient && !q.cancelled {
				q.kind = kindLenient // outstanding when the client stopped reading
				r.rep.Unread++
				r.lenientN++
			}
		}
		r.mu.Unlock()
		at := time.Now()
		r.tg.closeStdout()
		r.pauseUntil.Store(0)
		// The server only learns of the close when it writes: give it
		// something to answer.
		for i := range 20 {
			id, _ := json.Marshal("epipe-" + strconv.Itoa(i))
			r.track(idKey(id), &req{kind: kindLenient})
			if r.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", id)) != nil {
				break // the server is gone: that is the point
			}
		}
		return at
	}
	at := time.Now()
	r.closeStdin()
	return at
}

// awaitQuick waits until every quick request has been answered, by taking
// the whole window, or until ctx ends or the server exits.
func (r *run) awaitQuick(ctx context.Context) {
	for range cap(r.slots) {
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			return
		case <-r.tg.exited():
			return
		}
	}
}

// tally sorts every request into the report's counts and lists the problems.
func (r *run) tally(timedOut bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.rep
	seenAnswered := 0 // cancelled requests whose stream stayed open, answered anyway
	for _, q := range r.reqs {
		switch {
		case q.kind == kindControl || q.kind == kindLenient:
			if q.answers > 1 {
				rep.AnsweredTwice++
			}
			continue
		case q.answers > 1:
			rep.AnsweredTwice++
		case q.answers == 1:
			rep.AnsweredOnce++
		case !q.cancelled:
			rep.NeverAnswered++
		}
		if q.cancelled {
			rep.Cancelled++
			if q.answers > 0 {
				rep.CancelledAnswered++
			}
			if q.blind {
				rep.CancelledBlind++
			} else if q.answers > 0 {
				seenAnswered++
			}
		}
	}
	p := &rep.problems
	if rep.ViolationCount > 0 {
		*p = append(*p, fmt.Sprintf("%d protocol violations", rep.ViolationCount))
	}
	if rep.AnsweredTwice > 0 {
		*p = append(*p, fmt.Sprintf("%d ids answered more than once", rep.AnsweredTwice))
	}
	if rep.NeverAnswered > 0 {
		*p = append(*p, fmt.Sprintf("%d requests never answered", rep.NeverAnswered))
	}
	if seen := rep.Cancelled - rep.CancelledBlind; seen >= 5 && seenAnswered == seen {
		*p = append(*p, fmt.Sprintf("all %d cancelled requests were answered: cancellation looks ignored", seen))
	}
	if rep.NullIDErrors > r.lenientN {
		*p = append(*p, fmt.Sprintf("%d null-id errors for %d malformed lines", rep.NullIDErrors, r.lenientN))
	}
	if timedOut {
		*p = append(*p, fmt.Sprintf("timed out after %v with %d of %d requests sent", r.cfg.Timeout, rep.Sent, r.cfg.Requests))
	}
	if !rep.Healthy && !rep.ExitedEarly && !timedOut {
		*p = append(*p, "no right answer to the health check after the campaign")
	}
	switch {
	case rep.ExitedEarly:
		*p = append(*p, fmt.Sprintf("the server exited (status %d) before the campaign ended it", rep.ExitCode))
	case rep.Ending == EndNone:
		// Not the campaign's to end.
	case !rep.Exited:
		*p = append(*p, fmt.Sprintf("no exit within %v of the ending (%s)", r.cfg.ExitTimeout, rep.Ending))
	case rep.ExitCode != 0:
		*p = append(*p, fmt.Sprintf("exit status %d after the ending (%s), want 0", rep.ExitCode, rep.Ending))
	}
}
