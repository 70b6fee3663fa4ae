package gateway

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
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
	"github.com/mcprt/mcprt/handlers/mcp"
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
	// Loopback is for a gateway over stdio, whose one client is its one
	// local user: a request without a caller is that user's
	// (localPrincipal), who signs in as mcprt login does, through a
	// redirect to a listener of the gateway's on 127.0.0.1 (RFC 8252
	// §7.3), one per sign-in. The link is the authorization URL itself,
	// and no confirmation code is asked: the redirect reaches only a
	// browser on this machine, so a link passed to someone else binds
	// nothing. Base is not used.
	Loopback bool
}

// localPrincipal is the local user's, over stdio (UserSignIn.Loopback).
const localPrincipal = "local"

// principalOf is whom req is made for, to an AuthUser backend: its
// caller, else (over stdio) the local user; "" for no one.
func (s *signins) principalOf(req *handlers.Request) string {
	if p := req.Caller.Principal(); p != "" || s == nil || !s.u.Loopback {
		return p
	}
	return localPrincipal
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
// authURL is known or the sign-in ended; obtained once the token came
// back (kept in pending, in memory, until the caller confirms it with
// code); done once it ended (err).
//
// Why the confirmation: the link is bound to the caller only by being
// handed to them. Whoever completes it in a browser (a victim the link
// was passed to) would otherwise have their account at the third party
// bound to the caller who asked (login CSRF). So the token is bound to
// the caller only when that caller, authenticated, enters the code the
// browser was shown (confirmSignIn).
type signin struct {
	key, backend, principal string
	issuer, confirmName     string
	state                   string // the link's
	asState, authURL        string // (signins.mu)
	opened                  bool   // the link was followed (signins.mu)
	returned                bool   // the browser came back over loopback (signins.mu)
	ready, done, obtained   chan struct{}
	readyOnce               sync.Once
	back                    chan url.Values
	pending                 *pendingStore
	code                    string     // set before obtained is closed
	tries                   int        // wrong codes entered (signins.mu)
	claimed                 bool       // ended by confirmSignIn (signins.mu)
	result                  chan error // confirmSignIn's outcome, buffered
	err                     error
}

// pendingStore keeps a sign-in's token in memory until it is confirmed:
// the Authorizer's Store during the sign-in.
type pendingStore struct {
	mu     sync.Mutex
	server string
	s      *oauth.Stored
}

func (p *pendingStore) Load(string) (*oauth.Stored, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.s, nil
}

func (p *pendingStore) Save(server string, s *oauth.Stored) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.server, p.s = server, s
	return nil
}

func (p *pendingStore) take() (string, *oauth.Stored) {
	p.mu.Lock()
	defer p.mu.Unlock()
	server, s := p.server, p.s
	p.s = nil
	return server, s
}

// maxSignins bounds the sign-ins under way (each may hold a token in
// memory until it is confirmed or its signInTTL ends).
const maxSignins = 1000

// maxCodeTries is how many wrong confirmation codes end a sign-in.
const maxCodeTries = 3

// codeAlphabet is the confirmation code's: no 0/O, 1/I; 32 letters, so
// a random byte maps to one without bias.
const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

func confirmationCode() string {
	b := make([]byte, 8)
	rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
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

// start is principal's sign-in to b, under way or begun now; nil when
// too many are under way.
func (s *signins) start(b *backend, principal string) *signin {
	key := principal + "\x00" + b.name
	s.mu.Lock()
	defer s.mu.Unlock()
	if si := s.byKey[key]; si != nil {
		return si
	}
	if len(s.byKey) >= maxSignins {
		return nil
	}
	si := &signin{key: key, backend: b.name, principal: principal, issuer: b.cfg.OAuth.Issuer, confirmName: b.external(confirmTool), state: rand.Text(),
		ready: make(chan struct{}), done: make(chan struct{}), obtained: make(chan struct{}),
		back: make(chan url.Values, 1), pending: &pendingStore{}, result: make(chan error, 1)}
	s.byKey[key], s.byState[si.state] = si, si
	s.wg.Go(func() { s.run(b, si) })
	return si
}

// run signs principal in to b: an Authorizer of the code grant, sent to
// the backend without a token, meets its 401 and goes through the
// authorization server with the user (signinAgent), keeping the token in
// memory (si.pending); then it waits, within the same signInTTL, for the
// caller to confirm it (confirmSignIn), which moves it to the caller's
// sealed store. An unconfirmed token is dropped. Over stdio (Loopback)
// the token is kept as soon as it comes: there is no one else to confirm.
func (s *signins) run(b *backend, si *signin) {
	ctx, cancel := context.WithTimeoutCause(s.ctx, signInTTL, errors.New("the sign-in was not completed in time"))
	defer cancel()
	err := s.signIn(ctx, b, si)
	switch {
	case err == nil && s.u.Loopback:
		// Only this machine's browser came back: the local user's.
		if server, st := si.pending.take(); st != nil {
			err = s.u.Tokens.For(si.principal).Save(server, st)
		}
	case err == nil:
		si.code = confirmationCode()
		close(si.obtained)
		select {
		case err = <-si.result:
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
	}
	s.mu.Lock()
	si.err = err
	s.forgetLocked(si)
	s.mu.Unlock()
	si.pending.take() // an unconfirmed token is not kept
	si.readyOnce.Do(func() { close(si.ready) })
	close(si.done)
	if err != nil {
		b.g.log.Info("gateway: a caller's sign-in ended without a token", "backend", b.name, "reason", err.Error())
	}
}

// forgetLocked removes si from the maps (s.mu held), but not a newer
// sign-in of the same caller and backend.
func (s *signins) forgetLocked(si *signin) {
	if s.byKey[si.key] == si {
		delete(s.byKey, si.key)
	}
	delete(s.byState, si.state)
	if s.byAS[si.asState] == si {
		delete(s.byAS, si.asState)
	}
}

func (s *signins) signIn(ctx context.Context, b *backend, si *signin) error {
	var ua oauth.UserAgent = &signinAgent{s: s, si: si}
	if s.u.Loopback {
		lb := &oauth.Loopback{Open: func(_ context.Context, authURL string) error {
			s.publish(si, authURL)
			return nil
		}}
		defer lb.Close()
		ua = loopbackAgent{lb, s, si}
	}
	a, err := oauth.New(b.cfg.URL, userConfig(b, si.pending, ua))
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
	si.asState = au.Query().Get("state")
	s.byAS[si.asState] = si
	s.mu.Unlock()
	s.publish(si, authURL)
	select {
	case q := <-si.back:
		return q, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// loopbackAgent is a sign-in's Loopback that notes when the browser came
// back (signin.returned).
type loopbackAgent struct {
	*oauth.Loopback
	s  *signins
	si *signin
}

func (a loopbackAgent) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	q, err := a.Loopback.Authorize(ctx, authURL)
	if err == nil {
		a.s.mu.Lock()
		a.si.returned = true
		a.s.mu.Unlock()
	}
	return q, err
}

// publish makes authURL where si's link leads, and si ready.
func (s *signins) publish(si *signin, authURL string) {
	s.mu.Lock()
	si.authURL = authURL
	s.mu.Unlock()
	si.readyOnce.Do(func() { close(si.ready) })
}

// errSignedInNow: the sign-in that required found has just kept the
// caller's token; the request is to connect again.
var errSignedInNow = errors.New("signed in just now")

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
	if si == nil {
		return &unavailable{backend: b.name, why: "has as many sign-ins under way as it takes; try again shortly"}
	}
	select {
	case <-si.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	returned := si.returned
	s.mu.Unlock()
	if returned {
		// Over stdio the browser came back, and the token is being
		// fetched: the call waits for it rather than get a spent link.
		select {
		case <-si.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	select {
	case <-si.done:
		if si.err == nil {
			return errSignedInNow
		}
		return &unavailable{backend: b.name, why: fmt.Sprintf("needs you to sign in to its authorization server, and the sign-in ended without a token: %v", si.err)}
	default:
	}
	link := s.link(b, si)
	msg := fmt.Sprintf("Sign in to %s (backend %q) to use its tools as yourself: open the URL and sign in; the page then shows a code: call the tool %s with it {\"code\": \"…\"}, then call again.",
		redacted(b.cfg.OAuth.Issuer), b.name, b.external(confirmTool))
	if s.u.Loopback {
		msg = fmt.Sprintf("Sign in to %s (backend %q) to use its tools as yourself: open the URL and sign in, then call again.", redacted(b.cfg.OAuth.Issuer), b.name)
	}
	return &jsonrpc.Error{Code: codeURLElicitationRequired, Message: "This request requires more information.",
		Data: map[string]any{"elicitations": []map[string]any{{"mode": "url", "elicitationId": si.state, "url": link, "message": msg}}}}
}

// link is where the user goes to sign in: the gateway's single-use link
// to the authorization URL, or over stdio that URL itself.
func (s *signins) link(b *backend, si *signin) string {
	if s.u.Loopback {
		s.mu.Lock()
		defer s.mu.Unlock()
		return si.authURL
	}
	return strings.TrimSuffix(s.u.Base, "/") + "/signin/" + url.PathEscape(b.name) + "?state=" + si.state
}

// elicitURL asks a caller not signed in to sign in within the call, for
// a client that can wait: one of 2025-11-25 that declared URL-mode
// elicitation (capabilities.elicitation.url), outside a task. Instead of
// the -32042 error err, the gateway sends the client elicitation/create
// (mode "url") with the same link and elicitation id; once the user
// accepts, the call waits for the sign-in to end (bounded by signInTTL):
// the user opens the link, signs in, and confirms with the code the page
// shows through NAME__confirm_sign_in, a call of its own that the client
// makes meanwhile. The confirmation stays: without it a link passed to
// someone else would bind their account (signin). Then the gateway sends
// notifications/elicitation/complete and reports waited with no error:
// the call is made again, as the user. A declined elicitation, or a
// sign-in that ended without a token, is the call's answer. waited is
// false, and nothing was sent, when err is not -32042 or the client
// cannot wait: err stands (a 2026-07-28 client gets -32042 too, as its
// request cannot be held open for a browser).
func (s *signins) elicitURL(ctx context.Context, req *handlers.Request, b *backend, err error) (waited bool, _ error) {
	var je *jsonrpc.Error
	if s == nil || !errors.As(err, &je) || je.Code != codeURLElicitationRequired || req.Modern || req.Peer == nil || inTask(ctx) || !urlElicitation(req.ClientCapabilities) {
		return false, nil
	}
	data, _ := je.Data.(map[string]any)
	es, _ := data["elicitations"].([]map[string]any)
	if len(es) != 1 {
		return false, nil
	}
	id, _ := es[0]["elicitationId"].(string)
	s.mu.Lock()
	si := s.byState[id]
	s.mu.Unlock()
	if si == nil {
		return false, nil
	}
	msg := fmt.Sprintf("Sign in to %s (backend %q) to use its tools as yourself: open the URL and sign in; the page then shows a code: call the tool %s with it {\"code\": \"…\"}. This call goes on once you have.",
		redacted(b.cfg.OAuth.Issuer), b.name, b.external(confirmTool))
	if s.u.Loopback {
		msg = fmt.Sprintf("Sign in to %s (backend %q) to use its tools as yourself: open the URL and sign in. This call goes on once you have.", redacted(b.cfg.OAuth.Issuer), b.name)
	}
	params := map[string]any{"mode": "url", "elicitationId": id, "url": es[0]["url"], "message": msg}
	// The user's browsing is not the backend's time: the call's bound is
	// the sign-in's while it waits, the backend's again after.
	req.Peer.SetTimeout(signInTTL)
	defer req.Peer.SetTimeout(b.cfg.Timeout + toolMargin)
	raw, aerr := req.Ask(ctx, "elicitation/create", params)
	if aerr != nil {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		return true, err // the client could not take it: the link, as -32042
	}
	var res struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(raw, &res)
	if res.Action != "accept" {
		return true, &unavailable{backend: b.name, why: fmt.Sprintf("needs you to sign in to %s, and you did not (%s); call again to be asked again", redacted(b.cfg.OAuth.Issuer), cmp.Or(res.Action, "no answer"))}
	}
	select {
	case <-si.done:
	case <-ctx.Done():
		return true, ctx.Err()
	}
	if si.err != nil { // written before done was closed
		return true, &unavailable{backend: b.name, why: fmt.Sprintf("needs you to sign in to %s, and the sign-in ended without a token: %v", redacted(b.cfg.OAuth.Issuer), si.err)}
	}
	req.Peer.Notify("notifications/elicitation/complete", map[string]any{"elicitationId": id})
	return true, nil
}

// urlElicitation says whether client capabilities declare URL-mode
// elicitation ({"elicitation": {"url": {}}}; an empty "elicitation" is
// form mode only).
func urlElicitation(capabilities json.RawMessage) bool {
	var caps struct {
		Elicitation struct {
			URL json.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	return json.Unmarshal(capabilities, &caps) == nil && len(caps.Elicitation.URL) > 0 && string(caps.Elicitation.URL) != "null"
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
	case <-si.obtained:
	case <-si.done:
	case <-r.Context().Done():
		return
	}
	select {
	case <-si.obtained:
	default:
		http.Error(w, fmt.Sprintf("Signing in to %q failed: %v", si.backend, si.err), http.StatusBadGateway)
		return
	}
	// text/plain (set above), so nothing in it is markup.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	fmt.Fprintf(w, "Signed in at %s. One more step.\n\n"+
		"This connects your account at %s to the gateway user %q.\n"+
		"Enter this code only in the client where you asked to sign in; if you did not ask, close this page.\n\n"+
		"Code: %s\n\n"+
		"In that client, call the tool %s with {\"code\": \"%s\"} within %v, then call again.\n",
		redacted(si.issuer), redacted(si.issuer), si.principal, si.code, si.confirmName, si.code, signInTTL)
}

// signOutTool is the name, under an AuthUser backend's prefix, of the
// gateway's own tool that forgets the caller's token for it (unless the
// backend has a tool of that name).
const signOutTool = "sign_out"

func (b *backend) signOutHandler() handlers.ToolHandler {
	return func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		s := b.g.signins
		principal := s.principalOf(req)
		if s == nil || principal == "" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.TextContent(
				fmt.Sprintf("backend %q: %s", b.name, noCallerSignIn))}}, nil
		}
		if err := s.u.Tokens.Delete(principal, b.cfg.URL); err != nil {
			return nil, fmt.Errorf("gateway: forgetting the token: %w", err)
		}
		b.mu.Lock()
		cs := b.callers
		b.mu.Unlock()
		if cs != nil {
			cs.signOut(principal)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(
			fmt.Sprintf("Signed out of %q: your next call of its tools asks you to sign in again.", b.name))}}, nil
	}
}

// confirmTool is the name, under an AuthUser backend's prefix, of the
// gateway's own tool by which a caller confirms a sign-in with the code
// its browser was shown (unless the backend has a tool of that name).
const confirmTool = "confirm_sign_in"

// confirmSignIn binds the token of principal's sign-in to b to
// principal, when code is the one that sign-in showed: it ends the
// sign-in with the token moved from memory to principal's sealed store.
// A code of another caller's sign-in ends that sign-in (its link was
// completed by someone other than the one it was made for, or the code
// was leaked); maxCodeTries wrong codes end principal's own. The codes
// are compared in constant time.
func (s *signins) confirmSignIn(b *backend, principal, code string) (string, bool, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	s.mu.Lock()
	var match *signin
	for _, si := range s.byKey {
		if !si.claimed && si.obtainedNow() && subtle.ConstantTimeCompare([]byte(si.code), []byte(code)) == 1 {
			match = si
		}
	}
	own := s.byKey[principal+"\x00"+b.name]
	switch {
	case match != nil && match.principal == principal && match.backend == b.name:
		match.claimed = true
		s.forgetLocked(match)
		s.mu.Unlock()
		server, st := match.pending.take()
		var err error
		if st == nil {
			err = errors.New("the sign-in's token is gone")
		} else {
			err = s.u.Tokens.For(principal).Save(server, st)
		}
		match.result <- err
		if err != nil {
			return "", false, fmt.Errorf("gateway: keeping the token: %w", err)
		}
		return fmt.Sprintf("Signed in to %q: call its tools again.", b.name), true, nil
	case match != nil:
		// Someone else's code: that sign-in is not to be trusted.
		match.claimed = true
		s.forgetLocked(match)
		s.mu.Unlock()
		match.result <- errors.New("its confirmation code was entered by another gateway user")
		return "This code is not for you: that sign-in is ended. Call the tool again for a sign-in link of your own.", false, nil
	case own == nil || !own.obtainedNow() || own.claimed:
		s.mu.Unlock()
		return fmt.Sprintf("No sign-in to %q of yours is waiting for a code: call its tools for a sign-in link, open it, then enter the code it shows.", b.name), false, nil
	}
	own.tries++
	if own.tries < maxCodeTries {
		s.mu.Unlock()
		return "That is not the code: enter the one the sign-in page shows.", false, nil
	}
	own.claimed = true
	s.forgetLocked(own)
	s.mu.Unlock()
	own.result <- errors.New("too many wrong confirmation codes")
	return "That is not the code, too many times: the sign-in is ended. Call the tool again for a new link.", false, nil
}

func (si *signin) obtainedNow() bool {
	select {
	case <-si.obtained:
		return true
	default:
		return false
	}
}

func (b *backend) confirmSignInHandler() handlers.ToolHandler {
	return func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		s := b.g.signins
		if s != nil && s.u.Loopback {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.TextContent(
				fmt.Sprintf("backend %q: over stdio a sign-in needs no code: open the link a call of its tools gives, sign in, then call again.", b.name))}}, nil
		}
		if s == nil || req.Caller == nil || req.Caller.Principal() == "" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.TextContent(
				fmt.Sprintf("backend %q: %s", b.name, noCallerSignIn))}}, nil
		}
		var in struct {
			Code string `json:"code"`
		}
		if err := json.Unmarshal(args, &in); err != nil || in.Code == "" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.TextContent(
				`give the code the sign-in page shows: {"code": "…"}`)}}, nil
		}
		principal := req.Caller.Principal()
		text, ok, err := s.confirmSignIn(b, principal, in.Code)
		if err != nil {
			return nil, err
		}
		if ok {
			b.mu.Lock()
			cs := b.callers
			b.mu.Unlock()
			if cs != nil {
				cs.signOut(principal) // the next call connects with the token
			}
		}
		return &mcp.CallToolResult{IsError: !ok, Content: []mcp.Content{mcp.TextContent(text)}}, nil
	}
}
