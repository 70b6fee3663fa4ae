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
	// state is the pending authorization request's: a redirect back
	// with another is not the user's (another local process can GET
	// /callback too) and is not taken.
	state string
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
		q := r.URL.Query()
		l.mu.Lock()
		want := l.state
		l.mu.Unlock()
		if want == "" || q.Get("state") != want {
			// RFC 6749 §10.12: the state binds the answer to the
			// request. This is not it; the listener keeps waiting for the
			// one that is.
			http.Error(w, "this is not the answer to the sign-in mcprt is waiting for", http.StatusBadRequest)
			return
		}
		select {
		case l.got <- q:
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
	au, err := url.Parse(authURL)
	if err != nil || au.Query().Get("state") == "" {
		return nil, errors.New("the authorization URL has no state")
	}
	l.mu.Lock()
	l.state = au.Query().Get("state")
	l.mu.Unlock()
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
