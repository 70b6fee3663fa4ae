package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/statuspage"
	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/resourceserver"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// httpFlags are the Streamable HTTP settings of the verbs that serve
// (serve, gateway): the same flags, with the same defaults, in both.
type httpFlags struct {
	addr, path        string
	allowOrigins      string
	tokenFile         string
	stateKeyFile      string
	tag               string
	maxSessions       int
	sessionIdle       time.Duration
	maxBody           int64
	readHeaderTimeout time.Duration
	idleTimeout       time.Duration
	shutdownGrace     time.Duration
	health            string
	metrics           string
	status            string
	oauth             oauthFlags
	// moreMetrics add their families to the -http-metrics page, after
	// the verb's own (the duration histograms: telemetry.writeMetrics).
	moreMetrics []func(io.Writer)
}

// addHTTPFlags defines the -http flags on fs.
func addHTTPFlags(fs *flag.FlagSet) *httpFlags {
	hf := &httpFlags{}
	fs.StringVar(&hf.addr, "http", "", "serve Streamable HTTP on `addr` (host:port; a bare port or :port means 127.0.0.1) instead of stdio")
	fs.StringVar(&hf.path, "http-path", "/mcp", "the MCP endpoint's path")
	fs.StringVar(&hf.allowOrigins, "http-allow-origin", "", "comma-separated Origin values accepted besides loopback ones (others get 403)")
	fs.StringVar(&hf.tokenFile, "http-token-file", "", "require Authorization: Bearer <token>, the token read from `file` (others get 401)")
	fs.StringVar(&hf.stateKeyFile, "http-state-key-file", "", "sign 2026-07-28 requestState and seal legacy session ids with the key in `file` (32 bytes or more; without it, a random key per process); replicas behind one load balancer must share it")
	fs.StringVar(&hf.tag, "http-session-tag", "", "prefix legacy session ids with `tag.` so a proxy can route each session to this replica")
	fs.IntVar(&hf.maxSessions, "http-max-sessions", 1000, "legacy sessions open at once; an initialize past it closes the session idle the longest (its client gets 404 and initializes again), or gets 503 when every session is in use")
	fs.DurationVar(&hf.sessionIdle, "http-session-idle", 10*time.Minute, "end a legacy session idle this long (its id then gets 404)")
	fs.Int64Var(&hf.maxBody, "http-max-body", 16<<20, "largest request body in `bytes` (larger: 413)")
	fs.DurationVar(&hf.readHeaderTimeout, "http-header-timeout", 10*time.Second, "how long a client may take to send a request's headers")
	fs.DurationVar(&hf.idleTimeout, "http-idle-timeout", 2*time.Minute, "how long an idle keep-alive connection is kept")
	fs.StringVar(&hf.health, "http-health", "", "also answer GET on `path` (e.g. /healthz) with 200 and a JSON status while serving, for probes and load balancers (the gateway's lists each backend's state)")
	fs.StringVar(&hf.metrics, "http-metrics", "", "also answer GET on `path` (e.g. /metrics) with metrics in Prometheus's text format: the process's, the sessions', the tasks' by state, the OAuth refusals by reason and, for the gateway, each backend's state, restarts by cause, restart intensity used, give-ups, requests in flight and tool calls by outcome")
	fs.StringVar(&hf.status, "http-status", "", "also answer GET on `path` (e.g. /status) with a status page for a person, in HTML: the tasks and sessions and, for the gateway, each backend's state, pid, protocol, uptime, restarts with their causes, last stderr lines, calls and errors per minute and latency percentiles; served only to loopback clients, or behind -http-token-file or -http-oauth-issuer when given")
	fs.DurationVar(&hf.shutdownGrace, "http-shutdown-grace", 10*time.Second, "after SIGTERM, how long requests in flight may still run before connections are closed")
	addOAuthFlags(fs, &hf.oauth)
	return hf
}

// httpAddr puts a listen address without a host on the loopback interface:
// serving every interface has to be asked for (0.0.0.0:PORT, [::]:PORT).
func httpAddr(a string) string {
	if !strings.Contains(a, ":") {
		a = ":" + a
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || host != "" {
		return a
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// shownAddr is where the server listens, as said at start: the host as
// given (0.0.0.0 stays 0.0.0.0, where Go reports [::]), the port as bound.
func shownAddr(given string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(httpAddr(given))
	_, port, err2 := net.SplitHostPort(bound.String())
	if err != nil || err2 != nil {
		return bound.String()
	}
	return net.JoinHostPort(host, port)
}

// loopback reports whether a is a loopback address: reachable from this
// machine only.
func loopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// serveHTTP runs srv over Streamable HTTP until SIGINT or SIGTERM: then it
// stops accepting, lets in-flight requests finish (bounded), ends every
// session and returns 0. stdin is not read: a daemon's is often
// /dev/null. verb names the command in error messages ("mcprt serve").
func serveHTTP(verb string, srv *handlers.Server, o runtime.Options, hf *httpFlags, stderr io.Writer) int {
	l, status := listenHTTP(verb, o, hf, stderr)
	if l == nil {
		return status
	}
	return l.serve(srv, o, nil, processMetrics(time.Now()), nil)
}

// httpListener is a bound Streamable HTTP endpoint, not yet serving.
type httpListener struct {
	verb   string
	hf     *httpFlags
	so     streamhttp.ServeOptions
	guard  *resourceserver.Guard // nil: no -http-oauth-issuer
	ln     net.Listener
	stderr io.Writer
}

// listenHTTP reads the -http flags' files and binds the address; nil and
// the exit status when it cannot (the error is on stderr). A verb with
// more to start (the gateway's backends) does so after it, so that a bad
// flag or a taken port is said at once.
func listenHTTP(verb string, o runtime.Options, hf *httpFlags, stderr io.Writer) (*httpListener, int) {
	ho := streamhttp.Options{
		Logger:       runtime.LoggerFromEnv(nil, nil),
		MaxSessions:  hf.maxSessions,
		SessionIdle:  hf.sessionIdle,
		MaxBodyBytes: hf.maxBody,
		Options:      o.Options,
		SessionTag:   hf.tag,
		// A refused browser is told which flag would let it in.
		AllowOriginHint: "-http-allow-origin",
	}
	for _, origin := range strings.Split(hf.allowOrigins, ",") {
		if origin = strings.TrimSpace(origin); origin != "" {
			ho.AllowedOrigins = append(ho.AllowedOrigins, origin)
		}
	}
	if hf.tokenFile != "" {
		tok, err := readSecret(hf.tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "%s: -http-token-file: %v\n", verb, err)
			return nil, runtime.ExitUsage
		}
		ho.Authorize = streamhttp.BearerToken(tok)
	}
	if hf.stateKeyFile != "" {
		key, err := readSecret(hf.stateKeyFile)
		if err != nil || len(key) < 32 {
			fmt.Fprintf(stderr, "%s: -http-state-key-file: want a file of at least 32 bytes (%v)\n", verb, err)
			return nil, runtime.ExitUsage
		}
		ho.StateKey = []byte(key)
	}
	if hf.health != "" && (hf.health == hf.path || !strings.HasPrefix(hf.health, "/")) {
		fmt.Fprintf(stderr, "%s: -http-health wants a path of its own, such as /healthz\n", verb)
		return nil, runtime.ExitUsage
	}
	if hf.metrics != "" && (hf.metrics == hf.path || hf.metrics == hf.health || !strings.HasPrefix(hf.metrics, "/")) {
		fmt.Fprintf(stderr, "%s: -http-metrics wants a path of its own, such as /metrics\n", verb)
		return nil, runtime.ExitUsage
	}
	if hf.status != "" && (hf.status == hf.path || hf.status == hf.health || hf.status == hf.metrics || !strings.HasPrefix(hf.status, "/")) {
		fmt.Fprintf(stderr, "%s: -http-status wants a path of its own, such as /status\n", verb)
		return nil, runtime.ExitUsage
	}
	guard, usage, err := hf.oauth.guard(context.Background(), hf.tokenFile, ho.Logger)
	switch {
	case errors.Is(err, errNoOAuth):
	case err != nil && usage:
		fmt.Fprintf(stderr, "%s: %v\n", verb, err)
		return nil, runtime.ExitUsage
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", verb, err)
		return nil, runtime.ExitFailure
	default:
		if p := pathsClash(guard, hf.path, hf.health, hf.metrics, hf.status); p != "" {
			guard.Close()
			fmt.Fprintf(stderr, "%s: %s is where the protected resource metadata goes; serve the rest elsewhere\n", verb, p)
			return nil, runtime.ExitUsage
		}
		ho.Principal = resourceserver.Principal
		ho.ScopeChallenge = guard.ScopeChallenge
	}
	ln, err := net.Listen("tcp", httpAddr(hf.addr))
	if err != nil {
		if guard != nil {
			guard.Close()
		}
		fmt.Fprintf(stderr, "%s: %v\n", verb, err)
		return nil, runtime.ExitFailure
	}
	so := streamhttp.ServeOptions{
		Options:           ho,
		Path:              hf.path,
		ReadHeaderTimeout: hf.readHeaderTimeout,
		IdleTimeout:       hf.idleTimeout,
		ShutdownGrace:     hf.shutdownGrace,
		HealthPath:        hf.health,
		MetricsPath:       hf.metrics,
	}
	if guard != nil {
		so.Wrap = guard.Wrap
		so.Extra = map[string]http.Handler{}
		for _, p := range guard.MetadataPaths() {
			so.Extra[p] = guard.MetadataHandler()
		}
	}
	return &httpListener{verb: verb, hf: hf, so: so, guard: guard, ln: ln, stderr: stderr}, runtime.ExitOK
}

// close gives the address back without serving.
func (l *httpListener) close() {
	l.ln.Close()
	if l.guard != nil {
		l.guard.Close()
	}
}

// serve serves srv until SIGINT or SIGTERM, as serveHTTP says, health's
// report on -http-health (nil: "ok"), metrics on -http-metrics (and the
// tasks' and the OAuth guard's), and the status page on -http-status
// (backends, nil for serve, gives the gateway's backends): with
// runtime.Serve, the endpoint as its Transport, so that o's Parts, its
// tasks and the endpoint are one tree on one engine, stopped in reverse
// (the endpoint drains, the tasks stop, then the parts).
func (l *httpListener) serve(srv *handlers.Server, o runtime.Options, health func() (int, any), metrics func(io.Writer), backends func(time.Time) []statuspage.Backend) int {
	// The collector keeps Go's default pace (GOGC=100) and there is no
	// memory limit: an HTTP server's live memory grows with its sessions.
	// GOGC=200 took about a tenth off the CPU per request at 256 clients
	// but cost 8-10 MiB of peak RSS there, which made mcprt the heaviest of
	// the Go servers while it already used about half of mcp-go's CPU
	// per request (test/bench/RESULTS.md, 2026-11-28).
	if l.guard != nil {
		defer l.guard.Close()
	}
	so, log := l.so, l.so.Logger
	var server *streamhttp.Server // set once made, before it serves
	sv := l.seeInside(&o, &so, metrics, backends, func() streamhttp.Stats { return server.Stats() })
	so.Health, so.Metrics = health, withMoreMetrics(sv.metrics, l.hf.moreMetrics)
	if l.hf.status != "" {
		so.Extra = maps.Clone(so.Extra)
		if so.Extra == nil {
			so.Extra = map[string]http.Handler{}
		}
		so.Extra[l.hf.status] = l.protectStatus(statuspage.Handler(sv.page))
	}
	// The host as given, the port as bound (for a port of 0); tests and
	// scripts read it.
	addr := shownAddr(l.hf.addr, l.ln.Addr())
	so.OnServing = func() {
		fmt.Fprintf(l.stderr, "mcprt: serving Streamable HTTP on http://%s%s\n", addr, l.hf.path)
		if so.Authorize == nil && l.guard == nil && !loopback(l.ln.Addr()) {
			log.Warn("mcprt: serving beyond loopback with no -http-token-file or -http-oauth-issuer: anyone who can reach this address can use the server; require a token with one of them, or listen on 127.0.0.1", "addr", addr)
		}
	}
	server, err := streamhttp.NewServer(l.ln, srv, so)
	if err != nil {
		log.Error("mcprt: "+strings.TrimPrefix(err.Error(), "streamhttp: "), "verb", l.verb)
		return runtime.ExitFailure
	}
	o.Transport, o.Logger = server, log
	// runtime.Serve catches SIGINT and SIGTERM, and says why it failed.
	return runtime.ExitCode(runtime.Serve(context.Background(), srv, o))
}

func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", errors.New("the file is empty")
	}
	return s, nil
}

// withMoreMetrics is the metrics page: metrics, then each of more.
func withMoreMetrics(metrics func(io.Writer), more []func(io.Writer)) func(io.Writer) {
	if metrics == nil || len(more) == 0 {
		return metrics
	}
	return func(w io.Writer) {
		metrics(w)
		for _, m := range more {
			m(w)
		}
	}
}
