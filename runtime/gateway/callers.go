package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/resourceserver"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/session/client/oauth"
)

// callers are the connections of an AuthExchange backend's incarnation,
// one per caller (by principal), each with an Authorizer that exchanges
// that caller's token for the backend's: the backend sees the caller's
// own identity, and a caller's token reaches no one else's connection.
// A connection per caller rather than one with per-request credentials,
// because a Streamable HTTP session (2025-11-25) is bound to the
// principal that opened it. They share one transport (the TCP
// connections to the backend). At most max at once: a new caller closes
// the least recently used idle one; a sweeper closes those idle longer
// than idle. The incarnation (conn) owns them: close stops the sweeper
// and closes every connection, and waits.
type callers struct {
	b    *backend
	base http.RoundTripper
	as   *http.Client // to the authorization server, shared
	max  int
	idle time.Duration

	mu     sync.Mutex
	m      map[string]*callerConn
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup // the sweeper and the closes
}

// callerConn is one caller's connection; ready is closed once cl or err
// is set.
type callerConn struct {
	ready chan struct{}
	cl    *client.Client
	err   error
	// token is the caller's latest access token: the subject token of
	// the next exchange (callers.mu).
	token string
	// agent, for AuthUser, says whether the connection needed a sign-in.
	agent    *noSigninAgent
	busy     int       // requests using it (callers.mu)
	lastUsed time.Time // (callers.mu)
}

func newCallers(b *backend) *callers {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	cs := &callers{b: b, base: t, as: oauth.NewHTTPClient(), max: maxCallers, idle: callerIdle,
		m: map[string]*callerConn{}, stop: make(chan struct{})}
	cs.wg.Go(cs.sweep)
	return cs
}

// noCallerToken: the request came without an OAuth access token, and
// the backend is reached only as a caller.
const noCallerSignIn = "signs each caller in to its own authorization server (auth \"user\"), and this request comes from no one the gateway knows: " +
	"reach the gateway over HTTP with an access token from its authorization server (mcprt gateway -http -http-oauth-issuer …)"

const noCallerToken = "acts as each caller (auth \"exchange\"), and this request carries no OAuth access token to act on: " +
	"reach the gateway over HTTP with an access token from its authorization server (mcprt gateway -http -http-oauth-issuer …)"

// get returns the caller's connection, connecting it first if need be
// (within ctx), and the func to call when the request is done with it
// (with the request's error, if any).
func (cs *callers) get(ctx context.Context, req *handlers.Request) (*client.Client, func(error), error) {
	cl, release, err := cs.getOnce(ctx, req)
	if errors.Is(err, errSignedInNow) {
		// A sign-in ended with the token kept while this request was
		// looking: once more, with it.
		if cl, release, err = cs.getOnce(ctx, req); errors.Is(err, errSignedInNow) {
			err = &unavailable{backend: cs.b.name, why: "has just signed you in; call again"}
		}
	}
	return cl, release, err
}

func (cs *callers) getOnce(ctx context.Context, req *handlers.Request) (*client.Client, func(error), error) {
	// AuthExchange and AuthUser.
	b := cs.b
	token := subjectToken(ctx)
	caller := req.Caller
	user := b.cfg.Auth == AuthUser
	principal := caller.Principal()
	if user {
		principal = b.g.signins.principalOf(req)
	}
	switch {
	case user && principal == "":
		return nil, nil, &unavailable{backend: b.name, why: noCallerSignIn}
	case user && b.g.signins == nil:
		return nil, nil, &unavailable{backend: b.name, why: "signs each caller in (auth \"user\"), and the gateway keeps no sign-ins: start it with -user-token-dir and -user-token-key"}
	case user:
	case caller == nil || caller.Principal() == "":
		return nil, nil, &unavailable{backend: b.name, why: noCallerToken}
	case token == "":
		// A DPoP-bound token: its proofs are its client's to make.
		return nil, nil, &unavailable{backend: b.name, why: "acts as each caller (auth \"exchange\"), and this request's token cannot be exchanged: it is bound to its client's key (DPoP); use a bearer token"}
	}
	if !user && caller.Issuer != b.cfg.OAuth.Issuer {
		// A user's token is shown to the authorization server that
		// issued it, and no other.
		return nil, nil, &unavailable{backend: b.name, why: fmt.Sprintf("exchanges tokens at %s, and this caller's token is from %s: it is not sent to another authorization server",
			redacted(b.cfg.OAuth.Issuer), redacted(caller.Issuer))}
	}
	// A user's token deleted (a sign-out, the operator's -forget-user,
	// even by another process) ends the connection made with it: one
	// look at the folder per call.
	forgotten := user && !b.g.signins.u.Tokens.Has(principal, b.cfg.URL)
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return nil, nil, &unavailable{backend: b.name, why: "is reconnecting; try again shortly"}
	}
	e := cs.m[principal]
	if e != nil && e.settled() && (e.err != nil || e.cl.Err() != nil || forgotten) {
		cs.dropLocked(principal, e)
		e = nil
	}
	fresh := e == nil
	if fresh {
		if len(cs.m) >= cs.max && !cs.evictLocked() {
			cs.mu.Unlock()
			return nil, nil, &unavailable{backend: b.name, why: fmt.Sprintf("has as many callers at once as it takes (%d); try again shortly", cs.max)}
		}
		e = &callerConn{ready: make(chan struct{})}
		cs.m[principal] = e
	}
	e.token = token
	e.busy++
	cs.mu.Unlock()
	release := func(err error) {
		cs.mu.Lock()
		e.busy--
		e.lastUsed = time.Now()
		if err != nil && e.cl != nil && lostConnection(err) {
			cs.dropLocked(principal, e) // the next request connects again
		}
		cs.mu.Unlock()
	}
	if fresh {
		if user {
			e.agent = &noSigninAgent{u: b.g.signins.u}
		}
		e.cl, e.err = cs.connect(ctx, e, principal)
		close(e.ready)
	} else {
		select {
		case <-e.ready:
		case <-ctx.Done():
			release(nil)
			return nil, nil, ctx.Err()
		}
	}
	if e.err != nil {
		release(nil)
		if e.agent != nil && e.agent.wasAsked() {
			return nil, nil, b.g.signins.required(ctx, b, principal)
		}
		if user {
			return nil, nil, &unavailable{backend: b.name, why: fmt.Sprintf("could not be reached as you: %v", e.err)}
		}
		return nil, nil, callerError(b.name, b.cfg.OAuth.Issuer, e.err)
	}
	return e.cl, release, nil
}

// lostConnection: a request's error says its connection is no good any
// more (a session the backend forgot, a refused or broken connection, a
// 5xx), not that the backend answered with an error or the request ended.
func lostConnection(err error) bool {
	var re *client.RPCError
	if errors.As(err, &re) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, mcp.ErrInputRequired) {
		return false
	}
	return errors.Is(err, client.ErrSessionEnded) || connectionGone(err)
}

func (e *callerConn) settled() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// connect opens a caller's connection, bounded by the backend's Timeout.
func (cs *callers) connect(ctx context.Context, e *callerConn, principal string) (*client.Client, error) {
	b, g := cs.b, cs.b.g
	o := b.cfg.OAuth
	subject := func(context.Context) (string, error) {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		return e.token, nil
	}
	cfg := oauth.Config{
		Grant: oauth.TokenExchange, SubjectToken: subject,
		ClientIssuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		Scopes: o.Scopes, MetadataOrigins: o.MetadataOrigins, AllowPrivate: o.AllowPrivate,
		Logger: g.log.With("backend", b.name),
	}
	if e.agent != nil {
		// AuthUser: the caller's kept token, refreshed as it nears its
		// expiry; none (or one refused) needs a sign-in (signins).
		// A refresh does not bring back a token deleted meanwhile.
		cfg = userConfig(b, g.signins.u.Tokens.ForKept(principal), e.agent)
	}
	cfg.Base, cfg.HTTPClient = cs.base, cs.as
	if o.KeyFile != "" {
		pemData, err := os.ReadFile(o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("oauth keyFile: %w", err)
		}
		if cfg.ClientKey, err = oauth.ParsePrivateKey(pemData); err != nil {
			return nil, fmt.Errorf("oauth keyFile %s: %w", o.KeyFile, err)
		}
	}
	a, err := oauth.New(b.cfg.URL, cfg)
	if err != nil {
		return nil, err
	}
	era, version, err := protocolOf(b.cfg.Protocol)
	if err != nil {
		return nil, err
	}
	opts := &client.Options{
		ClientInfo: mcp.Implementation{Name: g.opts.Info.Name, Version: g.opts.Info.Version},
		Era:        era, Version: version,
		Timeout: b.cfg.Timeout, MaxTimeout: b.cfg.MaxTimeout, CloseGrace: g.opts.CloseGrace,
		Logger: g.log.With("backend", b.name), LogLevel: "debug",
		Sampling:    b.askHandler("sampling/createMessage"),
		Elicitation: b.askHandler("elicitation/create"),
		Extensions:  g.declareExtensions(),
		HTTPClient:  a.Client(),
		Header:      http.Header{},
	}
	for k, v := range b.cfg.Headers {
		opts.Header.Set(k, v)
	}
	// The connection outlives this request: it is bounded by the
	// backend's Timeout, not ended with the request's context, though
	// the request stops waiting for it when that ends (get).
	cctx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), b.cfg.Timeout, fmt.Errorf("not connected within %v", b.cfg.Timeout))
	defer cancel()
	cl, err := client.ConnectURL(cctx, b.cfg.URL, opts)
	if err != nil && context.Cause(cctx) != nil {
		err = fmt.Errorf("%w (%w)", context.Cause(cctx), err)
	}
	return cl, err
}

// callerError says, in words a user understands, why the gateway could
// not reach the backend as the caller. No token is in err: the oauth
// package keeps them out of its errors.
func callerError(backend, issuer string, err error) error {
	var te *oauth.TokenError
	switch {
	case errors.As(err, &te) && (te.Code == "invalid_grant" || te.Code == "access_denied" || te.Code == "invalid_target" || te.Code == "invalid_scope" || te.Code == "unauthorized_client"):
		return &unavailable{backend: backend, why: fmt.Sprintf("cannot be used as you: the authorization server %s refused to exchange your sign-in for access to it (%v)", redacted(issuer), err)}
	case errors.Is(err, oauth.ErrWrongIssuer):
		return &unavailable{backend: backend, why: fmt.Sprintf("names an authorization server other than %s, where the gateway exchanges tokens, and gets no token (%v)", redacted(issuer), err)}
	}
	return &unavailable{backend: backend, why: fmt.Sprintf("could not be reached as you (your token is exchanged at the authorization server %s): %v", redacted(issuer), err)}
}

// evictLocked closes the least recently used idle connection to make
// room; false when every one is in use (cs.mu held).
func (cs *callers) evictLocked() bool {
	var oldest string
	var at time.Time
	for p, e := range cs.m {
		if e.busy == 0 && e.settled() && (oldest == "" || e.lastUsed.Before(at)) {
			oldest, at = p, e.lastUsed
		}
	}
	if oldest == "" {
		return false
	}
	cs.dropLocked(oldest, cs.m[oldest])
	return true
}

// dropLocked forgets p's connection e and closes it in the background
// (cs.mu held); a request still using it finishes on it or fails.
func (cs *callers) dropLocked(p string, e *callerConn) {
	if cs.m[p] == e {
		delete(cs.m, p)
	}
	if e.cl != nil {
		cl := e.cl
		cs.wg.Go(func() { _ = cl.Close() })
	}
}

// sweep closes the connections idle longer than cs.idle until close.
func (cs *callers) sweep() {
	every := cs.idle / 4
	if callerSweep > 0 {
		every = callerSweep
	}
	t := time.NewTicker(max(every, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-cs.stop:
			return
		case now := <-t.C:
			cs.mu.Lock()
			for p, e := range cs.m {
				if e.busy == 0 && e.settled() && now.Sub(e.lastUsed) > cs.idle {
					cs.dropLocked(p, e)
				}
			}
			cs.mu.Unlock()
		}
	}
}

// recentCallersShown bounds Status.RecentCallers.
const recentCallersShown = 20

// recent is up to n callers with a connection, the most recently active
// first (a caller still connecting or busy counts as active now).
func (cs *callers) recent(n int) []CallerStatus {
	now := time.Now()
	cs.mu.Lock()
	out := make([]CallerStatus, 0, min(len(cs.m), n+1))
	for p, e := range cs.m {
		c := CallerStatus{Principal: p, LastUsed: e.lastUsed, InFlight: e.busy}
		if e.busy > 0 || c.LastUsed.IsZero() {
			c.LastUsed = now
		}
		out = append(out, c)
	}
	cs.mu.Unlock()
	slices.SortFunc(out, func(a, b CallerStatus) int {
		if c := b.LastUsed.Compare(a.LastUsed); c != 0 {
			return c
		}
		return strings.Compare(a.Principal, b.Principal)
	})
	return out[:min(len(out), n)]
}

// count is the number of callers with a connection.
func (cs *callers) count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}

// close ends every caller's connection and the sweeper, and waits. A
// connection still being made is closed once it is.
func (cs *callers) close() {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return
	}
	cs.closed = true
	close(cs.stop)
	pending := make([]*callerConn, 0, len(cs.m))
	for p, e := range cs.m {
		if e.settled() {
			cs.dropLocked(p, e)
		} else {
			delete(cs.m, p)
			pending = append(pending, e)
		}
	}
	cs.mu.Unlock()
	for _, e := range pending {
		<-e.ready // bounded by the backend's Timeout
		if e.cl != nil {
			_ = e.cl.Close()
		}
	}
	cs.wg.Wait()
	cs.base.(*http.Transport).CloseIdleConnections()
	cs.as.CloseIdleConnections()
}

func noRelease(error) {}

// maxCallers and callerIdle are defaultMaxCallers and defaultCallerIdle
// but in tests, and callerSweep how often idle connections are looked
// for (0: a quarter of callerIdle).
var (
	maxCallers  = defaultMaxCallers
	callerIdle  = defaultCallerIdle
	callerSweep time.Duration
)

// subjectToken is the caller's access token on a request's context
// (resourceserver.Options.PassToken); a test's own, in tests.
var subjectToken = resourceserver.SubjectToken

// setCallers makes cs the callers of incarnation inc.
func (b *backend) setCallers(inc int, cs *callers) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if inc == b.inc {
		b.callers = cs
	}
}

// signOut forgets principal's connection (AuthUser: after its token was
// deleted, so that the next call asks for a sign-in).
func (cs *callers) signOut(principal string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if e := cs.m[principal]; e != nil && e.settled() {
		cs.dropLocked(principal, e)
	}
}

// signInAgain is the answer to a request of req's caller that failed
// because the backend refused the caller's token and no refresh could
// renew it (AuthUser): the connection is forgotten, and the caller is
// asked to sign in again (-32042). nil when that is not why it failed.
func (b *backend) signInAgain(ctx context.Context, req *handlers.Request) error {
	b.mu.Lock()
	cs := b.callers
	b.mu.Unlock()
	principal := b.g.signins.principalOf(req)
	if cs == nil || principal == "" {
		return nil
	}
	cs.mu.Lock()
	e := cs.m[principal]
	asked := e != nil && e.agent != nil && e.agent.wasAsked()
	if asked {
		cs.dropLocked(principal, e)
	}
	cs.mu.Unlock()
	if !asked {
		return nil
	}
	if err := b.g.signins.required(ctx, b, principal); !errors.Is(err, errSignedInNow) {
		return err
	}
	return &unavailable{backend: b.name, why: "has just signed you in again; call again"}
}

// perCaller: the backend's requests go on each caller's own connection.
func (b *backend) perCaller() bool { return b.cfg.Auth == AuthExchange || b.cfg.Auth == AuthUser }

// callerClient is req's caller's connection to the backend (AuthExchange,
// AuthUser).
func (b *backend) callerClient(ctx context.Context, req *handlers.Request) (*client.Client, func(error), error) {
	b.mu.Lock()
	cs := b.callers
	b.mu.Unlock()
	if cs == nil {
		return nil, nil, &unavailable{backend: b.name, why: "is reconnecting; try again shortly"}
	}
	return cs.get(ctx, req)
}
