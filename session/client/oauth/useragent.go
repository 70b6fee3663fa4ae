package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
)

// Loopback is the UserAgent of a command-line client (RFC 8252 §7.3): it
// listens on a free port of 127.0.0.1 for the redirect back, and has the
// user open the authorization URL with Open (print it, start a browser).
// Close stops its listener.
type Loopback struct {
	// Open shows the user the authorization URL.
	Open func(ctx context.Context, authURL string) error

	mu     sync.Mutex
	srv    *http.Server
	served chan struct{} // closed when Serve returned
	got    chan url.Values
	uri    string
}

// RedirectURI listens, once, and is http://127.0.0.1:PORT/callback.
func (l *Loopback) RedirectURI(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.uri != "" {
		return l.uri, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	l.got = make(chan url.Values, 1)
	l.uri = fmt.Sprintf("http://%s/callback", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		select {
		case l.got <- r.URL.Query():
			// The browser's page, not the process's stdout.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "Authorization received; you can close this window.\n")
		default:
			http.Error(w, "an authorization is already being handled", http.StatusConflict)
		}
	})
	srv, served := &http.Server{Handler: mux}, make(chan struct{})
	l.srv, l.served = srv, served
	go func() { // stopped, and waited for, by Close
		defer close(served)
		srv.Serve(ln)
	}()
	return l.uri, nil
}

// Authorize opens authURL and waits for the redirect back.
func (l *Loopback) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	if _, err := l.RedirectURI(ctx); err != nil {
		return nil, err
	}
	if l.Open == nil {
		return nil, errors.New("no way to show the authorization URL")
	}
	if err := l.Open(ctx, authURL); err != nil {
		return nil, err
	}
	select {
	case v := <-l.got:
		return v, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops listening, and waits for the listener to end.
func (l *Loopback) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv == nil {
		return nil
	}
	err := l.srv.Close()
	<-l.served
	l.srv, l.uri = nil, ""
	return err
}
