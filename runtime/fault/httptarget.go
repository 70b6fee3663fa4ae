package fault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/mcprt/mcprt/session"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// httpTarget is a Streamable HTTP server the campaign started and ends: a
// child process, or runtime/streamhttp in-process. Its methods are called
// by the campaign's goroutine.
type httpTarget interface {
	// terminate asks the server to shut down gracefully (SIGTERM).
	terminate() error
	// exited is closed when the server has exited.
	exited() <-chan struct{}
	// kill stops the server at once; exited is closed afterwards.
	kill()
	// result is the exit status (-1: killed by a signal) and the CPU time
	// used (0 when unknown), valid once exited is closed.
	result() (code int, cpu time.Duration)
	stderrTail() string
}

// urlPattern finds the endpoint a server prints.
var urlPattern = regexp.MustCompile(`https?://[^\s"'<>]+`)

// urlWriter is the stdout and stderr of an HTTP server started by the
// campaign: it keeps their tail, and sends the first URL printed on a line
// to found.
type urlWriter struct {
	tail  *tailBuffer
	mu    sync.Mutex
	line  []byte
	seen  bool
	found chan string
}

func (w *urlWriter) Write(p []byte) (int, error) {
	w.tail.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			if len(w.line) > 64<<10 { // a line that long names no endpoint
				w.line = w.line[:0]
			}
			return len(p), nil
		}
		if u := endpointIn(w.line[:i]); u != "" {
			w.seen = true
			w.line = nil
			w.found <- u
			return len(p), nil
		}
		w.line = w.line[i+1:]
	}
}

// endpointIn returns the first http(s) URL in line, its host put on
// loopback when it is an unspecified address (0.0.0.0, [::]), or "".
func endpointIn(line []byte) string {
	m := urlPattern.Find(line)
	if m == nil {
		return ""
	}
	s := strings.TrimRight(string(m), ".,;:)]}")
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		lo := "127.0.0.1"
		if ip.To4() == nil {
			lo = "::1"
		}
		if p := u.Port(); p != "" {
			u.Host = net.JoinHostPort(lo, p)
		} else if ip.To4() == nil {
			u.Host = "[" + lo + "]"
		} else {
			u.Host = lo
		}
	}
	return u.String()
}

// startHTTPProcess starts argv and waits, at most wait, for it to print its
// endpoint's URL. Its stdin is a pipe left open: an HTTP server has no use
// for it, and must not take its end for a signal to stop.
func startHTTPProcess(argv, env []string, wait time.Duration) (*procTarget, string, error) {
	if len(argv) == 0 {
		return nil, "", errors.New("fault: empty command")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, "", err
	}
	t := &procTarget{in: inW, errs: &tailBuffer{max: 8 << 10}, done: make(chan struct{})}
	w := &urlWriter{tail: t.errs, found: make(chan string, 1)}
	t.cmd = exec.Command(argv[0], argv[1:]...)
	t.cmd.Env = env
	t.cmd.Stdin = inR
	t.cmd.Stdout = w
	t.cmd.Stderr = w
	// A child of the server's that keeps its output open must not keep
	// the campaign waiting for the copy to end.
	t.cmd.WaitDelay = 5 * time.Second
	err = t.cmd.Start()
	inR.Close()
	if err != nil {
		inW.Close()
		return nil, "", err
	}
	go func() {
		t.wait()
		inW.Close()
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case u := <-w.found:
		return t, u, nil
	case <-t.done:
		return nil, "", fmt.Errorf("fault: the server exited (status %d) without printing its URL; output:\n%s", t.code, t.errs.String())
	case <-timer.C:
		t.kill()
		return nil, "", fmt.Errorf("fault: the server printed no http:// URL within %v; output:\n%s", wait, t.errs.String())
	}
}

// inprocHTTP is a handlers.Server served by runtime/streamhttp on a
// loopback port, in-process.
type inprocHTTP struct {
	h    *streamhttp.Handler
	hs   *http.Server
	once sync.Once
	done chan struct{}
	code int
}

func startHTTPTree(srv *handlers.Server, o runtime.Options, maxBody int64) (*inprocHTTP, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		ln.Close()
		return nil, "", fmt.Errorf("fault: %w", err)
	}
	h, err := streamhttp.New(e, srv, streamhttp.Options{
		Logger:       o.Logger,
		MaxBodyBytes: maxBody,
		EventHook:    o.EventHook,
		Options:      session.Options{MaxInFlight: o.MaxInFlight, MaxQueued: o.MaxQueued, RequestTimeout: o.RequestTimeout, DrainTimeout: o.DrainTimeout, CacheTTL: o.CacheTTL, PanicDetail: o.PanicDetail},
	})
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	t := &inprocHTTP{h: h, hs: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() { _ = t.hs.Serve(ln) }()
	go func() {
		// The tree gave up on its own: an exit with status 1, as mcprt
		// serve -http makes it.
		select {
		case <-h.Done():
			t.stop(runtime.ExitFailure, context.Background())
		case <-t.done:
		}
	}()
	return t, "http://" + ln.Addr().String() + "/mcp", nil
}

// stop shuts the server down as mcprt serve -http does on SIGTERM: no new
// connections, requests in flight answered (bounded by ctx), every session
// ended.
func (t *inprocHTTP) stop(code int, ctx context.Context) {
	t.once.Do(func() {
		go func() {
			shut := make(chan error, 1)
			go func() { shut <- t.hs.Shutdown(ctx) }()
			_ = t.h.Shutdown(ctx)
			if <-shut != nil {
				t.hs.Close()
			}
			t.code = code
			close(t.done)
		}()
	})
}

func (t *inprocHTTP) terminate() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.stop(runtime.ExitOK, ctx)
	go func() {
		<-t.done
		cancel()
	}()
	return nil
}

func (t *inprocHTTP) exited() <-chan struct{} { return t.done }

func (t *inprocHTTP) kill() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.hs.Close()
	t.stop(-1, ctx)
	<-t.done
}

func (t *inprocHTTP) result() (int, time.Duration) { return t.code, 0 }
func (t *inprocHTTP) stderrTail() string           { return "" }

// The process target's terminate is SIGTERM, as over stdio.
var _ httpTarget = (*procTarget)(nil)
