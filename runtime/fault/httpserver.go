package fault

import (
	"os"
	"syscall"
	"time"
)

// HTTPServer is a Streamable HTTP server process started by
// StartHTTPServer, for a campaign of the caller's own (mcprt chaos
// -tasks) that kills and restarts it.
type HTTPServer struct {
	t *procTarget
	// URL is the endpoint the server printed.
	URL string
}

// StartHTTPServer starts argv (env nil: this process's environment) and
// waits, at most wait, for it to print its endpoint's URL on stdout or
// stderr, as mcprt serve -http 127.0.0.1:0 does.
func StartHTTPServer(argv, env []string, wait time.Duration) (*HTTPServer, error) {
	if env == nil {
		env = os.Environ()
	}
	t, u, err := startHTTPProcess(argv, env, wait)
	if err != nil {
		return nil, err
	}
	return &HTTPServer{t: t, URL: u}, nil
}

// Kill ends the server with SIGKILL, and reaps it.
func (s *HTTPServer) Kill() { s.t.kill() }

// Stop sends SIGTERM, waits at most grace for the exit, then kills; it
// returns the exit status (-1 for a signal).
func (s *HTTPServer) Stop(grace time.Duration) int {
	_ = s.t.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-s.t.done:
	case <-t.C:
		s.t.kill()
	}
	return s.t.code
}

// Output is the tail of what the server wrote to stdout and stderr.
func (s *HTTPServer) Output() string { return s.t.errs.String() }
