package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/session/client/oauth"
)

// UserSignIn is where the gateway keeps the callers' sign-ins to its
// AuthUser backends, and where their browsers reach it.
type UserSignIn struct {
	// Tokens keeps each caller's token per backend, sealed.
	Tokens *oauth.SealedStore
	// Base is the gateway's MCP endpoint as browsers reach it
	// (https://gw.example.com/mcp): the sign-in links are
	// Base/signin/NAME, the redirect URI Base/oauth/callback, both
	// served by Gateway.SignInHandler.
	Base string
}

// signInTTL bounds a sign-in from the link's making to the callback.
const signInTTL = 10 * time.Minute

// codeURLElicitationRequired is the 2025-11-25 error of a request that
// cannot go on until the user has visited a URL.
const codeURLElicitationRequired = -32042

// signins are the sign-ins under way, at most one per (caller, backend).
// Each runs on a goroutine of its own (an oauth.Authorizer's code grant,
// whose user agent waits for the callback), bounded by signInTTL; close
// ends them and waits.
type signins struct {
	u      *UserSignIn
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	byKey   map[string]*signin // principal NUL backend
	byState map[string]*signin // the link's state
	byAS    map[string]*signin // the authorization request's state
}

// signin is one caller's sign-in to one backend. ready is closed once
// authURL is known or the sign-in ended; done once it ended (err).
type signin struct {
	key, backend, principal string
	state                   string // the link's
	asState, authURL        string // (signins.mu)
	opened                  bool   // the link was followed (signins.mu)
	ready, done             chan struct{}
	readyOnce               sync.Once
	back                    chan url.Values
	err                     error
}

func newSignins(u *UserSignIn) *signins {
	if u == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &signins{u: u, ctx: ctx, cancel: cancel,
		byKey: map[string]*signin{}, byState: map[string]*signin{}, byAS: map[string]*signin{}}
}

func (s *signins) close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// start is principal's sign-in to b, under way or begun now.
func (s *signins) start(b *backend, principal string) *signin {
	key := principal + "\x00" + b.name
	s.mu.Lock()
	defer s.mu.Unlock()
	if si := s.byKey[key]; si != nil {
		return si
	}
	si := &signin{key: key, backend: b.name, principal: principal, state: randomHex(16),
		ready: make(chan struct{}), done: make(chan struct{}), back: make(chan url.Values, 1)}
	s.byKey[key], s.byState[si.state] = si, si
	s.wg.Go(func() { s.run(b, si) })
	return si
}

// run signs principal in to b: an Authorizer of the code grant, sent to
// the backend without a token, meets its 401 and goes through the
// authorization server with the user (signinAgent), keeping the token in
// the caller's sealed store.
func (s *signins) run(b *backend, si *signin) {
	ctx, cancel := context.WithTimeoutCause(s.ctx, signInTTL, errors.New("the sign-in was not completed in time"))
	defer cancel()
	err := s.signIn(ctx, b, si)
	s.mu.Lock()
	si.err = err
	delete(s.byKey, si.key)
	delete(s.byState, si.state)
	delete(s.byAS, si.asState)
	s.mu.Unlock()
	si.readyOnce.Do(func() { close(si.ready) })
	close(si.done)
	if err != nil {
		b.g.log.Info("gateway: a caller's sign-in ended without a token", "backend", b.name, "reason", err.Error())
	}
}

func (s *signins) signIn(ctx context.Context, b *backend, si *signin) error {
	a, err := oauth.New(b.cfg.URL, userConfig(b, s.u.Tokens.For(si.principal), &signinAgent{s: s, si: si}))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.cfg.URL, nil)
	if err != nil {
		return err
	}
	resp, err := a.Client().Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if a.Token() == nil {
		return fmt.Errorf("the server answered %d without asking for a sign-in", resp.StatusCode)
	}
	return nil
}

// userConfig is the Authorizer configuration of an AuthUser backend for
// one caller: the code grant, as the "oauth" block's client, bound to its
// issuer, the token kept in store.
func userConfig(b *backend, store oauth.Store, ua oauth.UserAgent) oauth.Config {
	o := b.cfg.OAuth
	return oauth.Config{
		Grant: oauth.AuthorizationCode, UserAgent: ua, Store: store,
		// A DPoP token is bound to a key of its Authorizer, and the
		// sign-in's is not the connection's: bearer tokens only.
		NoDPoP:       true,
		ClientIssuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		Scopes: o.Scopes, MetadataOrigins: o.MetadataOrigins, AllowPrivate: o.AllowPrivate,
		Logger: b.g.log.With("backend", b.name),
	}
}

// signinAgent is the user agent of a sign-in: it publishes the
// authorization URL (behind the link) and waits for the callback.
type signinAgent struct {
	s  *signins
	si *signin
}

func (a *signinAgent) RedirectURI(context.Context) (string, error) {
	return callbackURL(a.s.u), nil
}

func callbackURL(u *UserSignIn) string { return strings.TrimSuffix(u.Base, "/") + "/oauth/callback" }

func (a *signinAgent) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	au, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	s, si := a.s, a.si
	s.mu.Lock()
	si.asState, si.authURL = au.Query().Get("state"), authURL
	s.byAS[si.asState] = si
	s.mu.Unlock()
	si.readyOnce.Do(func() { close(si.ready) })
	select {
	case q := <-si.back:
		return q, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// errNeedSignIn: the caller has no usable token for the backend.
var errNeedSignIn = errors.New("not signed in")

// noSigninAgent is the user agent of a caller's connection: a sign-in
// is not made there, but through the link (signins), so it refuses, and
// remembers that it was asked.
type noSigninAgent struct {
	u     *UserSignIn
	asked bool // set before Authorize returns (on the connect's goroutine)
	mu    sync.Mutex
}

func (a *noSigninAgent) RedirectURI(context.Context) (string, error) { return callbackURL(a.u), nil }

func (a *noSigninAgent) Authorize(context.Context, string) (url.Values, error) {
	a.mu.Lock()
	a.asked = true
	a.mu.Unlock()
	return nil, errNeedSignIn
}

func (a *noSigninAgent) wasAsked() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}

// required is the answer to a call by principal, not signed in to b: the
// link to sign in, as error -32042 (URL elicitation required), once the
// sign-in knows where to send the user (within ctx).
func (s *signins) required(ctx context.Context, b *backend, principal string) error {
	si := s.start(b, principal)
	select {
	case <-si.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-si.done:
		return &unavailable{backend: b.name, why: fmt.Sprintf("needs you to sign in to its authorization server, and the sign-in could not start: %v", si.err)}
	default:
	}
	link := strings.TrimSuffix(s.u.Base, "/") + "/signin/" + url.PathEscape(b.name) + "?state=" + si.state
	msg := fmt.Sprintf("Sign in to %s (backend %q) to use its tools as yourself: open the URL, then call again.", redacted(b.cfg.OAuth.Issuer), b.name)
	return &jsonrpc.Error{Code: codeURLElicitationRequired, Message: "This request requires more information.",
		Data: map[string]any{"elicitations": []map[string]any{{"mode": "url", "elicitationId": si.state, "url": link, "message": msg}}}}
}

// SignInHandler serves the sign-in links and the OAuth callback of the
// AuthUser backends (Options.UserSignIn): mount it at
// <Base path>/signin/ and <Base path>/oauth/callback, unguarded (a
// browser comes without the caller's token; the state binds each request
// to the caller it was made for). nil without Options.UserSignIn.
func (g *Gateway) SignInHandler() http.Handler {
	if g.signins == nil {
		return nil
	}
	return g.signins
}

func (s *signins) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.Method != http.MethodGet {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	if strings.HasSuffix(r.URL.Path, "/oauth/callback") {
		s.callback(w, r, q)
		return
	}
	i := strings.LastIndex(r.URL.Path, "/signin/")
	if i < 0 {
		http.NotFound(w, r)
		return
	}
	name, _ := url.PathUnescape(r.URL.Path[i+len("/signin/"):])
	s.mu.Lock()
	si := s.byState[q.Get("state")]
	ok := si != nil && !si.opened && si.backend == name && si.authURL != ""
	if ok {
		si.opened = true // single use
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "This sign-in link is not valid (any more): call the tool again for a new one.", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, si.authURL, http.StatusFound)
}

func (s *signins) callback(w http.ResponseWriter, r *http.Request, q url.Values) {
	s.mu.Lock()
	si := s.byAS[q.Get("state")]
	ok := si != nil && si.opened
	if ok {
		delete(s.byAS, si.asState) // single use
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "This is not the answer to a sign-in the gateway is waiting for: call the tool again for a new link.", http.StatusBadRequest)
		return
	}
	select {
	case si.back <- q:
	default:
	}
	select {
	case <-si.done:
	case <-r.Context().Done():
		return
	}
	if si.err != nil {
		http.Error(w, fmt.Sprintf("Signing in to %q failed: %v", si.backend, si.err), http.StatusBadGateway)
		return
	}
	fmt.Fprintf(w, "Signed in to %q. Return to your client and call the tool again.\n", si.backend)
}

// signOutTool is the name, under an AuthUser backend's prefix, of the
// gateway's own tool that forgets the caller's token for it (unless the
// backend has a tool of that name).
const signOutTool = "sign_out"

func (b *backend) signOutHandler() handlers.ToolHandler {
	return func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
		s := b.g.signins
		if s == nil || req.Caller == nil || req.Caller.Principal() == "" {
			return &handlers.CallToolResult{IsError: true, Content: []handlers.Content{handlers.TextContent(
				fmt.Sprintf("backend %q: %s", b.name, noCallerSignIn))}}, nil
		}
		principal := req.Caller.Principal()
		if err := s.u.Tokens.Delete(principal, b.cfg.URL); err != nil {
			return nil, fmt.Errorf("gateway: forgetting the token: %w", err)
		}
		b.mu.Lock()
		cs := b.callers
		b.mu.Unlock()
		if cs != nil {
			cs.signOut(principal)
		}
		return &handlers.CallToolResult{Content: []handlers.Content{handlers.TextContent(
			fmt.Sprintf("Signed out of %q: your next call of its tools asks you to sign in again.", b.name))}}, nil
	}
}
