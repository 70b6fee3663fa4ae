package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// httpFlags are serve's Streamable HTTP settings.
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

// serveHTTP runs srv over Streamable HTTP until SIGINT or SIGTERM: then it
// stops accepting, lets in-flight requests finish (bounded), ends every
// session and exits 0. stdin is not read: a daemon's is often /dev/null.
func serveHTTP(srv *handlers.Server, o runtime.Options, hf httpFlags, stderr io.Writer) int {
	log := runtime.LoggerFromEnv()
	ho := streamhttp.Options{
		Logger:         log,
		MaxSessions:    hf.maxSessions,
		SessionIdle:    hf.sessionIdle,
		MaxBodyBytes:   hf.maxBody,
		MaxInFlight:    o.MaxInFlight,
		MaxQueued:      o.MaxQueued,
		RequestTimeout: o.RequestTimeout,
		DrainTimeout:   o.DrainTimeout,
		CacheTTL:       o.CacheTTL,
		PanicDetail:    o.PanicDetail,
		SessionTag:     hf.tag,
	}
	for _, origin := range strings.Split(hf.allowOrigins, ",") {
		if origin = strings.TrimSpace(origin); origin != "" {
			ho.AllowedOrigins = append(ho.AllowedOrigins, origin)
		}
	}
	if hf.tokenFile != "" {
		tok, err := readSecret(hf.tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "mcprt serve: -http-token-file: %v\n", err)
			return runtime.ExitUsage
		}
		ho.Authorize = streamhttp.BearerToken(tok)
	}
	if hf.stateKeyFile != "" {
		key, err := readSecret(hf.stateKeyFile)
		if err != nil || len(key) < 32 {
			fmt.Fprintf(stderr, "mcprt serve: -http-state-key-file: want a file of at least 32 bytes (%v)\n", err)
			return runtime.ExitUsage
		}
		ho.StateKey = []byte(key)
	}
	ln, err := net.Listen("tcp", httpAddr(hf.addr))
	if err != nil {
		fmt.Fprintf(stderr, "mcprt serve: %v\n", err)
		return runtime.ExitFailure
	}
	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "mcprt serve: %v\n", err)
		return runtime.ExitFailure
	}
	h, err := streamhttp.New(engine, srv, ho)
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "mcprt serve: %v\n", err)
		return runtime.ExitFailure
	}
	mux := http.NewServeMux()
	mux.Handle(hf.path, h)
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: hf.readHeaderTimeout,
		IdleTimeout:       hf.idleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	// The address as bound, for a port of 0; tests and scripts read it.
	fmt.Fprintf(stderr, "mcprt: serving Streamable HTTP on http://%s%s\n", ln.Addr(), hf.path)
	status := runtime.ExitOK
	select {
	case <-ctx.Done():
	case err := <-served:
		log.Error("mcprt: HTTP server failed", "err", err)
		status = runtime.ExitFailure
	case <-h.Done():
		log.Error("mcprt: the server's supervision tree gave up")
		status = runtime.ExitFailure
	}
	grace, cancel := context.WithTimeout(context.Background(), hf.shutdownGrace)
	defer cancel()
	// Stop accepting and let requests in flight finish, while the sessions
	// drain and answer them.
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(grace) }()
	if err := h.Shutdown(grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("mcprt: sessions did not all end cleanly", "err", err)
	}
	if err := <-shut; err != nil {
		hs.Close() // streams still open past the grace
	}
	if status == runtime.ExitOK {
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			status = runtime.ExitFailure
		}
	}
	return status
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
