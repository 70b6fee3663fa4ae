package oauth

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Grant is how the Authorizer obtains tokens.
type Grant int

const (
	// AuthorizationCode: a user authorizes in a browser (the UserAgent),
	// PKCE S256; refresh tokens are used and offline_access asked for
	// (with prompt=consent) where the server offers it.
	AuthorizationCode Grant = iota
	// ClientCredentials: the client acts for itself (an unattended
	// gateway), with a secret or a private key.
	ClientCredentials
	// JWTBearer: the client presents an assertion (RFC 7523 §2.1) from
	// Config.Assertion: a workload identity, or an identity assertion
	// grant from an enterprise identity provider.
	JWTBearer
	// TokenExchange: the client acts for a user whose access token
	// Config.SubjectToken gives (RFC 8693): it presents that token as the
	// subject_token, authenticated as itself (its secret or key), and
	// gets a token for the MCP server's resource. A gateway's grant.
	TokenExchange
)

// RFC 8693 §3: the token type of an OAuth 2.0 access token.
const accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

// Config is how an Authorizer is a client.
type Config struct {
	Grant Grant

	// ClientID and ClientSecret are pre-registered credentials, and
	// ClientIssuer the authorization server that issued them: they are
	// offered to that issuer alone, never to one the MCP server names
	// instead. ClientIssuer is required with a secret or a key (a bare
	// public client id without it is offered to any issuer). Client
	// credentials and JWT bearer grants need them (the secret, or
	// ClientKey).
	ClientID     string
	ClientSecret string
	ClientIssuer string
	// ClientKey signs private_key_jwt client authentication (RFC 7523
	// §2.2) instead of a secret; ClientKeyID is its kid, if any.
	ClientKey   crypto.Signer
	ClientKeyID string

	// ClientMetadataURL is the client's Client ID Metadata Document: its
	// client_id wherever the server supports those.
	ClientMetadataURL string
	// ClientName is shown to users by servers that register the client
	// dynamically (default "mcprt").
	ClientName string

	// Scopes are asked for in addition to those the server's challenge
	// or metadata name (client credentials: the scopes to ask for).
	Scopes []string

	// UserAgent carries the user through authorization (authorization
	// code grant): a Loopback, or a host's own.
	UserAgent UserAgent

	// Assertion gives the JWT bearer grant's assertion for the
	// authorization server issuer and the resource.
	Assertion func(ctx context.Context, issuer, resource string) (string, error)

	// SubjectToken gives the token exchange grant's subject token: the
	// access token of the user the client acts for, issued by
	// ClientIssuer (it is presented to that issuer alone).
	SubjectToken func(ctx context.Context) (string, error)

	// NoDPoP: never bind tokens with DPoP, even where the server offers it.
	NoDPoP bool

	// MetadataOrigins are origins ("https://host[:port]") besides the
	// MCP server's own that its protected resource metadata may be
	// fetched from, when its 401 names such a URL.
	MetadataOrigins []string
	// AllowPrivate lets the MCP server name authorization servers (and
	// their endpoints) on private and loopback addresses even when the
	// server itself is not on one. Link-local addresses are refused
	// whatever this says.
	AllowPrivate bool

	// HTTPClient sends the requests to the authorization server and the
	// metadata documents (nil: a client with a 30 s timeout whose dialer
	// applies the address rule to the address it connects to); its
	// redirects are not followed whatever its CheckRedirect. Base is the
	// transport under the Authorizer's own requests to the MCP server (nil:
	// http.DefaultTransport).
	HTTPClient *http.Client
	Base       http.RoundTripper

	// Store keeps tokens across runs (nil: in memory only): a token
	// saved by an earlier run is used until the server refuses it, and
	// renewed with its refresh token.
	Store Store

	// Logger gets what the Authorizer does, never a secret (nil: none).
	Logger *slog.Logger
}

// UserAgent carries the user through the authorization endpoint.
type UserAgent interface {
	// RedirectURI is where the authorization server sends the user
	// back; it is registered before Authorize is called.
	RedirectURI(ctx context.Context) (string, error)
	// Authorize sends the user to authURL and returns the parameters of
	// the redirect back to RedirectURI.
	Authorize(ctx context.Context, authURL string) (url.Values, error)
}

// maxAuthorizations bounds the authorizations in a row that no successful
// request follows: a server that keeps refusing is not asked forever.
const maxAuthorizations = 3

// refreshSkew: a token this close to its expiry is renewed before use.
const refreshSkew = 30 * time.Second

// errSignInAgain: the authorization server the MCP server names is not
// the one that issued the token kept for it. The token, and its refresh
// token, are for that issuer alone; the user signs in again.
var errSignInAgain = errors.New("oauth: the server's authorization server changed since the token was obtained: sign in again")

// ErrWrongIssuer: the MCP server names an authorization server other than
// the one the configured client credentials were issued by; they are not
// offered to it.
var ErrWrongIssuer = errors.New("oauth: the server's authorization server is not the one the client credentials are for")

// errNoPKCE: the authorization server's metadata does not show PKCE with
// S256, and the client refuses to proceed (MCP authorization 2025-11-25,
// "Authorization Code Protection").
var errNoPKCE = errors.New("oauth: the authorization server does not advertise PKCE S256 (code_challenge_methods_supported); refusing to proceed")

// errResourceMismatch: the server's protected resource metadata names a
// resource that does not cover the server's URL (RFC 9728 §3.3); no
// authorization is started for it.
var errResourceMismatch = errors.New("oauth: the server's protected resource metadata names another resource")

// Authorizer authorizes the requests to one MCP server. It is an
// http.RoundTripper; Client gives an http.Client built on it.
type Authorizer struct {
	cfg    Config
	server *url.URL
	hc     *http.Client
	base   http.RoundTripper
	log    *slog.Logger

	mu       sync.Mutex
	tok      *Token
	resource string // as the resource metadata names it
	issuer   string
	meta     *serverMetadata
	clients  map[string]clientCredentials // by issuer
	scopes   []string                     // asked for so far
	failures int                          // authorizations in a row without success
	dpop     *dpopKey
	asNonce  string
	rsNonce  string
	// prmScopes: the resource metadata's scopes_supported; redirect: the
	// UserAgent's redirect URI, registered with the client.
	prmScopes []string
	redirect  string
	now       func() time.Time // time.Now; tests move it
	loaded    bool             // the Store was read
	// dpopWanted: the resource asks for DPoP (its challenge's scheme, or
	// its metadata's dpop_bound_access_tokens_required).
	dpopWanted bool
	// lookup resolves names for the address rule; serverClass caches the
	// MCP server's own class.
	lookup      lookupFunc
	serverClass *netClass
}

// New makes an Authorizer for the MCP server at endpoint.
func New(endpoint string, cfg Config) (*Authorizer, error) {
	u, err := httpURL(endpoint)
	if err != nil {
		return nil, fmt.Errorf("oauth: server: %w", err)
	}
	switch cfg.Grant {
	case AuthorizationCode:
		if cfg.UserAgent == nil {
			return nil, errors.New("oauth: the authorization code grant needs a UserAgent")
		}
	case ClientCredentials:
		if cfg.ClientID == "" || (cfg.ClientSecret == "" && cfg.ClientKey == nil) {
			return nil, errors.New("oauth: client credentials need a client id and a secret or key")
		}
	case TokenExchange:
		// The subject token goes to the client's issuer alone (bound),
		// with the client's authentication: a public client would hand
		// a user's token to whichever issuer the server names.
		if cfg.ClientID == "" || (cfg.ClientSecret == "" && cfg.ClientKey == nil) {
			return nil, errors.New("oauth: token exchange needs a client id and a secret or key")
		}
		if cfg.SubjectToken == nil {
			return nil, errors.New("oauth: token exchange needs a SubjectToken")
		}
	}
	if cfg.ClientSecret != "" || cfg.ClientKey != nil {
		// A secret offered to whichever issuer the MCP server names is
		// a secret given to the MCP server.
		if cfg.ClientIssuer == "" {
			return nil, errors.New("oauth: a client secret or key needs ClientIssuer, the authorization server it was issued by")
		}
		if cfg.ClientID == "" {
			return nil, errors.New("oauth: a client secret or key needs its client id")
		}
	}
	if cfg.ClientIssuer != "" {
		if _, err := secureURL(cfg.ClientIssuer); err != nil {
			return nil, fmt.Errorf("oauth: client issuer: %w", err)
		}
	}
	switch cfg.Grant {
	case AuthorizationCode, ClientCredentials, TokenExchange:
	case JWTBearer:
		if cfg.Assertion == nil {
			return nil, errors.New("oauth: the JWT bearer grant needs an Assertion")
		}
	default:
		return nil, errors.New("oauth: unknown grant")
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "mcprt"
	}
	a := &Authorizer{cfg: cfg, server: u, hc: cfg.HTTPClient, base: cfg.Base, log: cfg.Logger,
		clients: map[string]clientCredentials{}, now: time.Now, lookup: defaultLookup}
	if a.hc == nil {
		a.hc = defaultClient()
	} else {
		hc := *a.hc // the caller's, without its redirects
		hc.CheckRedirect = noRedirects
		a.hc = &hc
	}
	if a.base == nil {
		a.base = http.DefaultTransport
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return a, nil
}

// Client is an http.Client whose requests the Authorizer authorizes: the
// HTTPClient of session/client's Options.
func (a *Authorizer) Client() *http.Client { return &http.Client{Transport: a} }

// Token is the current token, nil before the first authorization.
func (a *Authorizer) Token() *Token {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tok == nil {
		return nil
	}
	t := *a.tok
	return &t
}

// Logout forgets the current token, and does not read the Store's (which
// is the caller's to delete): the next request signs in afresh.
func (a *Authorizer) Logout() {
	a.mu.Lock()
	a.tok, a.loaded = nil, true
	a.mu.Unlock()
}

// Issuer discovers, without authorizing, the authorization server the
// MCP server names: from the challenge of its 401 to a ping, else from
// its well-known resource metadata, under the same rules as an
// authorization (https, the server's origin, the address rule), and with
// that server's metadata found for it. mcprt login binds a client id
// and secret given without their issuer to this one.
func (a *Authorizer) Issuer(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.server.String(),
		strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	var ch challenge
	resp, err := a.base.RoundTrip(req)
	if err != nil {
		return "", fmt.Errorf("oauth: %s: %w", a.server.Redacted(), stripURL(err))
	}
	if resp.StatusCode == http.StatusUnauthorized {
		ch = parseChallenges(resp.Header.Values("WWW-Authenticate"))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.discover(ctx, ch); err != nil {
		return "", err
	}
	return a.issuer, nil
}

// RoundTrip sends req with the current token, if it is for req's URL;
// on 401, or 403 insufficient_scope, it authorizes and sends req again.
func (a *Authorizer) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		r := req.Clone(ctx)
		if attempt > 0 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		sent, err := a.authorize(r)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := a.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			if sent != nil {
				a.succeeded()
			}
			return resp, nil
		}
		if !a.ours(r.URL) {
			return resp, nil // another resource's challenge is not ours to answer
		}
		ch := parseChallenges(resp.Header.Values("WWW-Authenticate"))
		canRetry := attempt < 2*maxAuthorizations && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil)
		if !canRetry || (resp.StatusCode == http.StatusForbidden && ch.Error != "insufficient_scope") {
			return resp, nil
		}
		retry, err := a.challenged(ctx, sent, resp, ch)
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		if !retry {
			return resp, nil
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
}

// ours reports whether u is the server's: within the resource its
// metadata names, or the endpoint itself before any is known.
func (a *Authorizer) ours(u *url.URL) bool {
	a.mu.Lock()
	res := a.resource
	a.mu.Unlock()
	if res == "" {
		res = canonical(a.server)
	}
	return covers(res, u)
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		r.Body.Close()
	}
}

// authorize sets r's credentials: the current token, renewed first when
// it is about to expire, if it is for r's URL. It returns the token sent.
func (a *Authorizer) authorize(r *http.Request) (*Token, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.tok
	if t == nil && a.cfg.Store != nil && !a.loaded {
		// A token kept by an earlier run for this server: used as it
		// is; a 401 discovers afresh.
		a.loaded = true
		t = a.loadStored()
	}
	if t == nil || !covers(t.Resource, r.URL) {
		return nil, nil
	}
	if t.expiring(a.now(), refreshSkew) {
		if nt, err := a.renew(r.Context(), t); err == nil {
			t = nt
		} else if errors.Is(err, errSignInAgain) {
			return nil, err
		} else if err != errCannotRenew {
			a.log.Info("oauth: renewing the token before expiry failed", slog.String("reason", err.Error()))
		}
	}
	if t.TokenType == "DPoP" && a.dpop != nil {
		p, err := a.dpop.proof(r.Method, htu(r.URL), t.AccessToken, a.rsNonce)
		if err != nil {
			return nil, err
		}
		r.Header.Set("Authorization", "DPoP "+t.AccessToken)
		r.Header.Set("DPoP", p)
	} else if t.TokenType == "DPoP" {
		return nil, nil // bound to a key of an earlier run: not usable
	} else {
		r.Header.Set("Authorization", "Bearer "+t.AccessToken)
	}
	return t, nil
}

// loadStored is the Store's token for the server, if any (a.mu held).
// A DPoP token is not: its key died with the run that made it.
func (a *Authorizer) loadStored() *Token {
	st, err := a.cfg.Store.Load(canonical(a.server))
	if err != nil {
		a.log.Warn("oauth: reading the kept token failed", slog.String("reason", err.Error()))
		return nil
	}
	if st == nil || st.Token.TokenType != "Bearer" || st.Token.Resource == "" || !covers(st.Token.Resource, a.server) {
		return nil
	}
	t := st.Token
	a.tok, a.resource, a.issuer = &t, t.Resource, t.Issuer
	if st.ClientID != "" && st.ClientID != a.cfg.ClientID {
		// The client at the token's issuer of an earlier run: its
		// registration, or the id alone of a pre-registered client
		// (mcprt login -client-id), so that a refresh is that client's.
		// The configured client, when it is the one kept, is taken as
		// configured: with its secret, and its issuer binding.
		a.clients[t.Issuer] = clientCredentials{ID: st.ClientID, Secret: st.ClientSecret, Method: st.AuthMethod}
	}
	return &t
}

func (a *Authorizer) succeeded() {
	a.mu.Lock()
	a.failures = 0
	a.mu.Unlock()
}

// challenged handles a 401 or 403 to a request sent with token sent: it
// reports whether the request should be sent again.
func (a *Authorizer) challenged(ctx context.Context, sent *Token, resp *http.Response, ch challenge) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch.Error == "use_dpop_nonce" && sent != nil && sent.TokenType == "DPoP" {
		// RFC 9449 §9: the resource server wants its nonce in the proof.
		if n := resp.Header.Get("DPoP-Nonce"); n != "" && n != a.rsNonce {
			a.rsNonce = n
			return true, nil
		}
		return false, nil
	}
	if a.tok != sent && a.tok != nil {
		return true, nil // renewed meanwhile by another request
	}
	if a.failures >= maxAuthorizations {
		a.log.Warn("oauth: the server keeps refusing the client's tokens; not authorizing again",
			slog.Int("status", resp.StatusCode), slog.String("error", printable(ch.Error, 64)))
		return false, nil
	}
	a.failures++
	if resp.StatusCode == http.StatusUnauthorized && sent != nil && sent.RefreshToken != "" {
		_, err := a.refresh(ctx, sent)
		if err == nil {
			return true, nil
		}
		if errors.Is(err, errSignInAgain) {
			return false, err
		}
	}
	if err := a.obtain(ctx, ch, resp.StatusCode == http.StatusForbidden); err != nil {
		return false, err
	}
	return true, nil
}

// renew replaces t before it expires: by refresh token, or by the grant
// again when no user is needed (a.mu held).
func (a *Authorizer) renew(ctx context.Context, t *Token) (*Token, error) {
	if t.RefreshToken != "" {
		return a.refresh(ctx, t)
	}
	if a.cfg.Grant != AuthorizationCode {
		if a.meta == nil {
			if err := a.discover(ctx, challenge{}); err != nil {
				return nil, err
			}
		}
		if err := a.grant(ctx); err != nil {
			return nil, err
		}
		return a.tok, nil
	}
	return nil, errCannotRenew
}

// errCannotRenew: a user's token without a refresh token is used until
// the server refuses it; then the user signs in again.
var errCannotRenew = errors.New("no refresh token")

// refresh uses t's refresh token (a.mu held).
func (a *Authorizer) refresh(ctx context.Context, t *Token) (*Token, error) {
	if a.meta == nil { // a token kept by an earlier run
		if err := a.discover(ctx, challenge{}); err != nil {
			return nil, err
		}
	}
	if t.Issuer != a.issuer {
		// RFC 6749 §6 and §10.4: a refresh token is presented to the
		// authorization server that issued it, and no other; the server
		// now naming another is no reason to show it there.
		a.tok = nil
		return nil, fmt.Errorf("%w (the token is from %s; the server now names %s)", errSignInAgain, redact(t.Issuer), redact(a.issuer))
	}
	c, err := a.credentials(ctx)
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.RefreshToken}, "resource": {a.resource}}
	nt, err := a.tokenRequest(ctx, a.meta, c, form)
	var te *TokenError
	if errors.As(err, &te) && te.Code == "invalid_grant" {
		// RFC 6749 §5.2: the refresh token is invalid, expired or
		// revoked. Presenting it again would be refused again; it is
		// forgotten, here and in the Store.
		t.RefreshToken = ""
		a.save(t)
	}
	if err != nil {
		return nil, err
	}
	if nt.RefreshToken == "" {
		nt.RefreshToken = t.RefreshToken // RFC 6749 §6: the old one stays valid
	}
	if nt.Scope == "" {
		nt.Scope = t.Scope
	}
	a.keep(nt)
	return nt, nil
}

// keep makes t the current token (a.mu held).
func (a *Authorizer) keep(t *Token) {
	t.Resource, t.Issuer = a.resource, a.issuer
	a.tok = t
	a.save(t)
}

// save keeps t in the Store, if any (a.mu held).
func (a *Authorizer) save(t *Token) {
	if a.cfg.Store != nil {
		st := &Stored{Token: *t}
		if c, ok := a.clients[t.Issuer]; ok && !c.configured {
			// A registration of this run's: kept, as the refresh
			// needs it. Configured credentials stay where they are.
			st.ClientID, st.ClientSecret, st.AuthMethod = c.ID, c.Secret, c.Method
		} else if ok {
			// The configured client's id, not its secret: what it was
			// bound to is the token's issuer, and a later run refreshes
			// as that client.
			st.ClientID = c.ID
		}
		if err := a.cfg.Store.Save(canonical(a.server), st); err != nil {
			a.log.Warn("oauth: keeping the token failed", slog.String("reason", err.Error()))
		}
	}
}

// obtain discovers the server's authorization server and obtains a
// token from it (a.mu held). stepUp: the server wants more scope.
func (a *Authorizer) obtain(ctx context.Context, ch challenge, stepUp bool) error {
	if err := a.discover(ctx, ch); err != nil {
		return err
	}
	want := a.scopesFor(ch, stepUp)
	a.scopes = want
	return a.grant(ctx)
}

// discover finds the resource and its authorization server's metadata
// (a.mu held).
func (a *Authorizer) discover(ctx context.Context, ch challenge) error {
	prm, err := a.resourceMetadata(ctx, ch.ResourceMetadata)
	if err != nil {
		return err
	}
	var issuer string
	var legacy bool
	a.dpopWanted = strings.EqualFold(ch.Scheme, "DPoP") || (prm != nil && prm.DPoPBoundRequired)
	if prm == nil {
		// 2025-03-26: no resource metadata; the authorization server is
		// the MCP server's origin.
		issuer = a.server.Scheme + "://" + a.server.Host
		a.resource = canonical(a.server)
		legacy = true
		a.prmScopes = nil
	} else {
		if !covers(prm.Resource, a.server) {
			return fmt.Errorf("%w: %q for %s", errResourceMismatch, printable(prm.Resource, 200), a.server.Redacted())
		}
		issuer = prm.AuthorizationServers[0]
		a.resource = prm.Resource
		a.prmScopes = prm.ScopesSupported
	}
	if issuer != a.issuer {
		// Another authorization server: nothing of the last one's
		// (token, scopes, nonce) carries over; credentials are per issuer.
		if a.issuer != "" {
			a.log.Info("oauth: the server's authorization server changed", slog.String("issuer", issuer))
		}
		a.tok, a.scopes, a.asNonce = nil, nil, ""
	}
	a.issuer = issuer
	a.meta = nil
	m, err := a.serverMetadata(ctx, issuer, legacy)
	if err != nil {
		return err
	}
	// The endpoints the client will post secrets to, on the say-so of
	// a document the MCP server chose, unless the issuer is the one the
	// user configured. The authorization endpoint is the browser's to
	// open, not the client's to fetch: https only.
	trusted := a.trustedIssuer(issuer)
	for _, e := range []struct{ what, u string }{
		{"token endpoint", m.TokenEndpoint}, {"registration endpoint", m.RegistrationEndpoint},
	} {
		if e.u == "" {
			continue
		}
		eu, err := url.Parse(e.u)
		if err != nil {
			return fmt.Errorf("oauth: %s: not a URL", e.what)
		}
		if err := a.checkTarget(ctx, e.what, eu, trusted); err != nil {
			return err
		}
	}
	a.meta = m
	return nil
}

// trustedIssuer: issuer is the one the user configured, so its metadata
// and endpoints are the user's say-so, not the MCP server's.
func (a *Authorizer) trustedIssuer(issuer string) bool {
	return a.cfg.ClientIssuer != "" && issuer == a.cfg.ClientIssuer
}

// resourceMetadata fetches the protected resource metadata: from the
// challenge's URL, else the well-known URIs. nil, nil: the server
// publishes none (2025-03-26).
func (a *Authorizer) resourceMetadata(ctx context.Context, fromChallenge string) (*resourceMetadata, error) {
	urls := resourceMetadataURLs(a.server)
	if fromChallenge != "" {
		u, err := httpURL(fromChallenge)
		if err != nil {
			return nil, fmt.Errorf("oauth: the server's resource_metadata: %w", err)
		}
		// The server's own origin, or one the user allowed: a 401 is no
		// licence to make the client GET any URL at all (an internal
		// service, 169.254.169.254).
		if !sameOrigin(u, a.server) && !slices.Contains(a.cfg.MetadataOrigins, origin(u)) {
			return nil, fmt.Errorf("%w: resource_metadata %s is not on the server's origin", errForbiddenTarget, redact(fromChallenge))
		}
		urls = []string{fromChallenge}
	}
	for _, u := range urls {
		if _, err := secureURL(u); err != nil {
			return nil, fmt.Errorf("oauth: protected resource metadata: %w", err)
		}
		data, found, err := getDocument(a.withPolicy(ctx, u, false), a.hc, u)
		if err != nil {
			return nil, fmt.Errorf("oauth: protected resource metadata: %w", stripURL(err))
		}
		if !found {
			continue
		}
		return parseResourceMetadata(data)
	}
	if fromChallenge != "" {
		return nil, fmt.Errorf("oauth: protected resource metadata: %s not found", redact(fromChallenge))
	}
	return nil, nil
}

// serverMetadata fetches issuer's metadata from the well-known URIs; a
// legacy (2025-03-26) server without any gets the default endpoints at
// its origin.
func (a *Authorizer) serverMetadata(ctx context.Context, issuer string, legacy bool) (*serverMetadata, error) {
	iu, err := secureURL(issuer)
	if err != nil {
		return nil, fmt.Errorf("oauth: authorization server: %w", err)
	}
	trusted := a.trustedIssuer(issuer)
	if err := a.checkTarget(ctx, "authorization server", iu, trusted); err != nil {
		return nil, err
	}
	for _, u := range serverMetadataURLs(iu) {
		data, found, err := getDocument(a.withPolicy(ctx, u, trusted), a.hc, u)
		if err != nil {
			return nil, fmt.Errorf("oauth: authorization server metadata: %w", stripURL(err))
		}
		if found {
			return parseServerMetadata(data, issuer)
		}
		if legacy {
			break // 2025-03-26 knows RFC 8414 only
		}
	}
	if !legacy {
		return nil, fmt.Errorf("oauth: no metadata found for the authorization server %s", redact(issuer))
	}
	return &serverMetadata{
		Issuer:                issuer,
		AuthorizationEndpoint: issuer + "/authorize",
		TokenEndpoint:         issuer + "/token",
		RegistrationEndpoint:  issuer + "/register",
		// 2025-03-26 requires PKCE of servers without metadata; there is
		// no document to show it.
		CodeChallengeMethodsSupported: []string{"S256"},
	}, nil
}

// scopesFor: the challenge's scope, else the resource's scopes_supported,
// else none; on step-up, with those asked for before (SEP-2350); plus
// the configured ones, and offline_access when a user authorizes and the
// server offers it (SEP-2207).
func (a *Authorizer) scopesFor(ch challenge, stepUp bool) []string {
	var want []string
	if ch.Scope != "" {
		want = strings.Fields(ch.Scope)
	} else if len(a.prmScopes) > 0 {
		want = slices.Clone(a.prmScopes)
	}
	if stepUp {
		want = append(slices.Clone(a.scopes), want...)
	}
	want = append(want, a.cfg.Scopes...)
	if a.cfg.Grant == AuthorizationCode && len(want) > 0 && a.meta != nil &&
		slices.Contains(a.meta.ScopesSupported, "offline_access") {
		want = append(want, "offline_access")
	}
	var out []string
	for _, s := range want {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// grant obtains a token with the configured grant (a.mu held).
func (a *Authorizer) grant(ctx context.Context) error {
	if err := a.bound(); err != nil {
		return err
	}
	if a.usesDPoP(a.meta) && a.dpop == nil {
		k, err := newDPoPKey()
		if err != nil {
			return err
		}
		a.dpop = k
	}
	var t *Token
	var err error
	switch a.cfg.Grant {
	case AuthorizationCode:
		t, err = a.codeGrant(ctx)
	case ClientCredentials:
		t, err = a.simpleGrant(ctx, url.Values{"grant_type": {"client_credentials"}})
	case JWTBearer:
		var assertion string
		assertion, err = a.cfg.Assertion(ctx, a.issuer, a.resource)
		if err != nil {
			return fmt.Errorf("oauth: assertion: %w", err)
		}
		t, err = a.simpleGrant(ctx, url.Values{
			"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}})
	case TokenExchange:
		var subject string
		subject, err = a.cfg.SubjectToken(ctx)
		if err != nil {
			return fmt.Errorf("oauth: token exchange: %w", err)
		}
		// RFC 8693 §2.1: the token asked for is an access token for the
		// resource (simpleGrant names it and the scopes).
		t, err = a.simpleGrant(ctx, url.Values{
			"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"subject_token":        {subject},
			"subject_token_type":   {accessTokenType},
			"requested_token_type": {accessTokenType},
		})
	}
	if err != nil {
		return err
	}
	if t.Scope == "" {
		t.Scope = strings.Join(a.scopes, " ")
	}
	a.keep(t)
	a.log.Info("oauth: authorized", slog.Any("token", *t))
	return nil
}

// simpleGrant is a grant of one token request, no user involved.
func (a *Authorizer) simpleGrant(ctx context.Context, form url.Values) (*Token, error) {
	c, err := a.credentials(ctx)
	if err != nil {
		return nil, err
	}
	form.Set("resource", a.resource)
	if len(a.scopes) > 0 {
		form.Set("scope", strings.Join(a.scopes, " "))
	}
	return a.tokenRequest(ctx, a.meta, c, form)
}

// usesDPoP: the resource asks for DPoP, the authorization server offers
// it with ES256, and the client may use it. A resource that asks for
// Bearer gets Bearer, whatever its authorization server offers.
func (a *Authorizer) usesDPoP(m *serverMetadata) bool {
	return !a.cfg.NoDPoP && a.dpopWanted && m != nil && slices.Contains(m.DPoPSigningAlgValuesSupported, "ES256")
}

// codeGrant: authorization code with PKCE S256 (a.mu held).
func (a *Authorizer) codeGrant(ctx context.Context) (*Token, error) {
	m := a.meta
	if m.AuthorizationEndpoint == "" {
		return nil, errors.New("oauth: the authorization server has no authorization endpoint")
	}
	if !slices.Contains(m.CodeChallengeMethodsSupported, "S256") {
		// MCP authorization 2025-11-25: without
		// code_challenge_methods_supported the authorization server
		// does not support PKCE, and the client MUST refuse to proceed.
		return nil, fmt.Errorf("%w: %s", errNoPKCE, redact(a.issuer))
	}
	redirect, err := a.cfg.UserAgent.RedirectURI(ctx)
	if err != nil {
		return nil, fmt.Errorf("oauth: redirect URI: %w", err)
	}
	a.redirect = redirect
	c, err := a.credentials(ctx)
	if err != nil {
		return nil, err
	}
	verifier := randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	state := randomString(16)
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {c.ID},
		"redirect_uri":          {redirect},
		"code_challenge":        {b64.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"state":                 {state},
		"resource":              {a.resource},
	}
	if len(a.scopes) > 0 {
		q.Set("scope", strings.Join(a.scopes, " "))
	}
	if slices.Contains(a.scopes, "offline_access") {
		// OpenID Connect Core §11: an OpenID provider ignores
		// offline_access (no refresh token) unless the request's prompt
		// has consent; oidc-provider does.
		q.Set("prompt", "consent")
	}
	au, err := url.Parse(m.AuthorizationEndpoint)
	if err != nil {
		return nil, err
	}
	for k, vs := range au.Query() { // the endpoint's own query stays
		if _, ours := q[k]; !ours {
			q[k] = vs
		}
	}
	au.RawQuery = q.Encode()
	back, err := a.cfg.UserAgent.Authorize(ctx, au.String())
	if err != nil {
		return nil, fmt.Errorf("oauth: authorization: %w", err)
	}
	if back.Get("state") != state {
		return nil, errors.New("oauth: authorization response: state does not match the request's")
	}
	// RFC 9207: a present iss must be the issuer exactly; one the server
	// advertises must be present.
	if iss, ok := back["iss"]; ok {
		if len(iss) != 1 || iss[0] != a.issuer {
			return nil, errors.New("oauth: authorization response: iss is not the authorization server's issuer")
		}
	} else if m.IssParameterSupported {
		return nil, errors.New("oauth: authorization response: no iss, which the authorization server advertises")
	}
	if e := back.Get("error"); e != "" {
		return nil, fmt.Errorf("oauth: authorization refused: %s %s", printable(e, 64), printable(back.Get("error_description"), 200))
	}
	code := back.Get("code")
	if code == "" {
		return nil, errors.New("oauth: authorization response: no code")
	}
	return a.tokenRequest(ctx, m, c, url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirect},
		"code_verifier": {verifier},
		"resource":      {a.resource},
	})
}

// bound refuses an issuer other than the configured one (a.mu held): the
// configured client, its secret or key, and a JWT bearer grant's
// assertion are for ClientIssuer alone, and the user who configured a
// client did not ask for registrations elsewhere.
func (a *Authorizer) bound() error {
	if a.cfg.ClientIssuer != "" && a.issuer != a.cfg.ClientIssuer && (a.cfg.ClientID != "" || a.cfg.Grant != AuthorizationCode) {
		return fmt.Errorf("%w: the server names %s; the credentials are for %s", ErrWrongIssuer, redact(a.issuer), redact(a.cfg.ClientIssuer))
	}
	return nil
}

// credentials are the client's at the current issuer: pre-registered
// (at the issuer they are for), else its metadata document's URL, else a
// dynamic registration (a.mu held).
func (a *Authorizer) credentials(ctx context.Context) (clientCredentials, error) {
	if err := a.bound(); err != nil {
		return clientCredentials{}, err
	}
	if c, ok := a.clients[a.issuer]; ok {
		return c, nil
	}
	var c clientCredentials
	switch {
	case a.cfg.ClientID != "" && (a.cfg.ClientIssuer == a.issuer || (a.cfg.ClientIssuer == "" && a.cfg.ClientSecret == "" && a.cfg.ClientKey == nil)):
		c = clientCredentials{ID: a.cfg.ClientID, Secret: a.cfg.ClientSecret, configured: true}
	case a.cfg.Grant != AuthorizationCode:
		return c, fmt.Errorf("oauth: no client credentials for the authorization server %s", redact(a.issuer))
	case a.cfg.ClientMetadataURL != "" && a.meta.ClientIDMetadataDocumentSupported:
		c = clientCredentials{ID: a.cfg.ClientMetadataURL, Method: "none"}
	case a.meta.RegistrationEndpoint != "":
		var err error
		if c, err = a.register(ctx); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("oauth: the authorization server %s offers no way to register this client; configure a client id", redact(a.issuer))
	}
	a.clients[a.issuer] = c
	return c, nil
}

// register registers the client dynamically (RFC 7591) as a native
// application with the UserAgent's redirect URI (a.mu held).
func (a *Authorizer) register(ctx context.Context) (clientCredentials, error) {
	method := "none"
	if s := a.meta.TokenEndpointAuthMethodsSupported; len(s) > 0 && !slices.Contains(s, "none") {
		method = "client_secret_basic"
		if !slices.Contains(s, method) && slices.Contains(s, "client_secret_post") {
			method = "client_secret_post"
		}
	}
	body, err := json.Marshal(map[string]any{
		"client_name":                a.cfg.ClientName,
		"redirect_uris":              []string{a.redirect},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           "native",
	})
	if err != nil {
		return clientCredentials{}, err
	}
	ctx = a.withPolicy(ctx, a.meta.RegistrationEndpoint, a.trustedIssuer(a.issuer))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.meta.RegistrationEndpoint, strings.NewReader(string(body)))
	if err != nil {
		return clientCredentials{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return clientCredentials{}, fmt.Errorf("oauth: registration: %w", stripURL(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return clientCredentials{}, fmt.Errorf("oauth: registration: %w", err)
	}
	var r struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Method       string `json:"token_endpoint_auth_method"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	if err := json.Unmarshal(data, &r); err != nil || resp.StatusCode/100 != 2 || r.ClientID == "" {
		return clientCredentials{}, fmt.Errorf("oauth: registration at %s refused: HTTP %d %s %s",
			redact(a.meta.RegistrationEndpoint), resp.StatusCode, printable(r.Error, 64), printable(r.Description, 200))
	}
	c := clientCredentials{ID: r.ClientID, Secret: r.ClientSecret, Method: r.Method}
	if c.Method == "" && c.Secret != "" && method == "none" {
		// Registered as public: the secret the server still issued is
		// not what it expects at the token endpoint.
		c.Method = "none"
	}
	return c, nil
}
