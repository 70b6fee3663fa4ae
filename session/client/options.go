package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/trace"
)

// Command is the server process to run: Path is looked up in PATH when it
// has no slash, as exec.Command does.
type Command struct {
	Path string
	Args []string
	// Env entries ("KEY=value") are added to the client's own environment,
	// and win over it when a key is in both.
	Env []string
	// Dir is the working directory; empty means the client's.
	Dir string
}

// String is the command line, for messages.
func (c Command) String() string {
	return strings.Join(append([]string{c.Path}, c.Args...), " ")
}

// InputHandler answers one server request for client input
// (sampling/createMessage, elicitation/create), whether it arrives as a
// JSON-RPC request (legacy era) or inside an input_required result
// (2026-07-28). params is the request's raw params; the returned value is
// marshalled as the result. Returning a *jsonrpc.Error chooses the error
// code the server sees; any other error is sent as -32603.
type InputHandler func(ctx context.Context, params json.RawMessage) (any, error)

// Options configure a Client. The zero value (or a nil *Options) is usable;
// every zero field means the default named in its comment.
type Options struct {
	// ClientInfo is sent as clientInfo; default {Name: "mcprt-client",
	// Version: "0.1.0"}.
	ClientInfo mcp.Implementation

	// Era chooses how to connect (default EraAuto). Version pins one
	// revision: connecting fails rather than use another. A Version implies
	// its era; Era and Version must agree when both are set.
	Era     Era
	Version string
	// ProbeTimeout bounds the server/discover probe of EraAuto; a server
	// that does not answer in time is taken for a legacy one. Default
	// 5s.
	ProbeTimeout time.Duration

	// Tracer, when set, makes an mcp.client span for each request sent
	// with Call or the typed methods, a child of the span context of the
	// request's context (trace.FromContext), and puts the span's context
	// in the request's _meta (traceparent, tracestate, baggage: SEP-414),
	// so that the server's span is its child. Nil: no tracing.
	Tracer *trace.Tracer

	// Timeout bounds each request (handshake included) unless its context
	// ends earlier; negative means no bound. Default 60s.
	Timeout time.Duration
	// MaxTimeout, when longer than a request's timeout, lets the server's
	// notifications/progress for the request (sent only for requests that
	// ask for progress, WithProgress) start its timeout again, up to
	// MaxTimeout after it was sent: a long request that reports progress
	// is not cut, one that falls silent still is.
	MaxTimeout time.Duration

	// CloseGrace is how long Close waits for the server to exit after its
	// stdin is closed, and TermGrace how long after SIGTERM, before it
	// sends SIGKILL. Defaults 2s and 2s.
	CloseGrace time.Duration
	TermGrace  time.Duration

	// MaxLineBytes bounds one line of the server's stdout; a longer line
	// is skipped, and fails its request when it starts like a response to
	// one. Default 64 MiB.
	MaxLineBytes int

	// StderrLines is how many of the server's first stderr lines, and how
	// many of its last, are kept for error messages (default
	// 10 each): the first say why a server refused to
	// start, the last why it crashed. LogLimit lines are logged per
	// LogWindow; the rest of the window is dropped after one "throttling"
	// line (defaults 10, 5s).
	StderrLines int
	LogLimit    int
	LogWindow   time.Duration
	// Logger receives the server's stderr (at Info, throttled as above)
	// unless OnStderr is set, and the client's own diagnostics; nil means
	// slog.Default().
	Logger *slog.Logger
	// OnStderr, if set, receives every line the server writes to stderr,
	// in order, unthrottled and without its line ending, instead of the
	// Logger (a line longer than 64 KiB is cut). It is called on the
	// goroutine that reads the server's stderr: while it blocks, a server
	// writing to stderr may block too. The first and last lines are kept
	// for error messages either way.
	OnStderr func(line string)

	// Roots, Sampling and Elicitation answer the server's requests for
	// client input. Each one that is set declares its client capability;
	// a request whose handler is nil is answered with -32601.
	Roots       func(ctx context.Context) ([]mcp.Root, error)
	Sampling    InputHandler
	Elicitation InputHandler
	// RootsListChanged declares, with Roots, that the client tells the
	// server when its roots change (roots.listChanged): see
	// Client.RootsListChanged.
	RootsListChanged bool

	// Extensions are the extensions the client supports, by identifier
	// ("io.modelcontextprotocol/ui"), each with its settings object (nil:
	// {}): declared in capabilities.extensions, at initialize and on every
	// 2026-07-28 request (see WithExtensions for one request's own).
	Extensions map[string]json.RawMessage

	// LogLevel, if set, asks the server for notifications/message at that
	// level and above ("debug" .. "emergency"): logging/setLevel after
	// initialize (when the server declares logging), or the logLevel _meta
	// key of every 2026-07-28 request. Subscribe to receive them.
	LogLevel string

	// OnListChanged, if set, is called (on a client goroutine) after a
	// cached list was refreshed because the server said it changed. It
	// may make requests, but must not call Close.
	OnListChanged func(ListKind)

	// SysProcAttr, if set, adjusts the attributes the server process is
	// started with, after the client has set its own (on Unix, Setpgid:
	// the server leads a process group of its own; keep that). The use it
	// is for is Pdeathsig on Linux, so that the server is killed when this
	// process dies without closing it (SIGKILL, a crash): a supervisor of
	// many servers must leave no orphans. Pdeathsig fires when the thread
	// that started the process exits; the Go runtime does not end its
	// threads, unless a goroutine locked to one (runtime.LockOSThread)
	// returns, so do not Connect from such a goroutine.
	SysProcAttr func(*syscall.SysProcAttr)

	// HTTPClient sends the requests of ConnectURL (nil: a client of the
	// package's own, whose idle connections Close closes). It must not
	// have a Timeout: response streams last as long as their requests,
	// which Timeout and the contexts bound instead. For a server that
	// wants OAuth, session/client/oauth's Authorizer.Client is one that
	// signs in on the server's 401 and sends the token to it alone.
	HTTPClient *http.Client
	// Header is added to every HTTP request of ConnectURL, for
	// credentials ("Authorization: Bearer …") and the like. The headers
	// the transport defines (Accept, Content-Type, Mcp-*) are set over it.
	Header http.Header
}

func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.ClientInfo.Name == "" {
		r.ClientInfo = mcp.Implementation{Name: "mcprt-client", Version: "0.1.0"}
	}
	if r.ProbeTimeout <= 0 {
		r.ProbeTimeout = defaultProbeTimeout
	}
	if r.Timeout == 0 {
		r.Timeout = defaultTimeout
	}
	if r.CloseGrace <= 0 {
		r.CloseGrace = defaultCloseGrace
	}
	if r.TermGrace <= 0 {
		r.TermGrace = defaultTermGrace
	}
	if r.MaxLineBytes <= 0 {
		r.MaxLineBytes = defaultMaxLine
	}
	if r.StderrLines <= 0 {
		r.StderrLines = defaultStderrLines
	}
	if r.LogLimit <= 0 {
		r.LogLimit = defaultLogLimit
	}
	if r.LogWindow <= 0 {
		r.LogWindow = defaultLogWindow
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	if r.LogLevel != "" && !slices.Contains(mcp.LogLevels, r.LogLevel) {
		return r, fmt.Errorf("client: unknown log level %q (one of %s)", r.LogLevel, strings.Join(mcp.LogLevels, ", "))
	}
	if r.Version != "" {
		era, ok := VersionEra(r.Version)
		if !ok {
			return r, fmt.Errorf("client: unknown protocol version %q (supported: %s)", r.Version, strings.Join(mcp.SupportedVersions(), ", "))
		}
		if r.Era != EraAuto && r.Era != era {
			return r, fmt.Errorf("client: version %s is not of the %s era", r.Version, r.Era)
		}
		r.Era = era
	}
	return r, nil
}

// ErrClosed is the error of requests made after Close, and of those still
// waiting when it was called.
var ErrClosed = errors.New("client closed")

// ExitError says how the server process ended, with the first and last
// lines it wrote to stderr. Requests pending when the server goes away fail with an
// error wrapping it; Close and Err return it.
type ExitError struct {
	// Exited is false when the server closed its stdout but was still
	// running when the session ended.
	Exited bool
	// Code is the exit status, or -1 when a signal ended the process.
	Code int
	// Signal is the signal that ended the process, if any.
	Signal syscall.Signal
	// Killed is true when Close had to send SIGKILL.
	Killed bool
	// Stderr are the first and the last lines the server wrote to stderr
	// (Options.StderrLines of each), in order; when lines were left out
	// between them, a line "… N lines omitted …" stands for them.
	Stderr []string
}

// Error says how the server ended, then its stderr lines.
func (e *ExitError) Error() string {
	var b strings.Builder
	switch {
	case !e.Exited:
		b.WriteString("server closed its stdout")
	case e.Killed:
		b.WriteString("server ignored stdin EOF and SIGTERM; killed")
	case e.Signal != 0:
		fmt.Fprintf(&b, "server killed by signal %s", e.Signal)
	default:
		fmt.Fprintf(&b, "server exited with status %d", e.Code)
	}
	if len(e.Stderr) > 0 {
		b.WriteString(": ")
		b.WriteString(strings.Join(e.Stderr, "; "))
	}
	return b.String()
}

// clean reports an end that is not a failure: status 0, or the SIGTERM
// Close sent.
func (e *ExitError) clean(termSent bool) bool {
	return e.Exited && !e.Killed && (e.Code == 0 && e.Signal == 0 || termSent && e.Signal == syscall.SIGTERM)
}

func exitErrorFrom(st *os.ProcessState, stderr []string) *ExitError {
	e := &ExitError{Stderr: stderr}
	if st == nil {
		return e
	}
	e.Exited = true
	e.Code = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
	}
	return e
}
