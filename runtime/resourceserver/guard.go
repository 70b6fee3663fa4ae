package resourceserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime/resourceserver/internal/jose"
)

// Defaults for Options' zero values.
const (
	defaultLeeway       = 30 * time.Second
	defaultRefresh      = time.Hour
	defaultKeyRefetch   = 10 * time.Second
	defaultCacheSize    = 10000
	defaultFetchTimeout = 10 * time.Second
	// defaultMaxTokenBytes: access tokens are a few kilobytes at most.
	defaultMaxTokenBytes = 8 << 10
	// DefaultMaxTokenLifetime: access tokens last minutes or hours.
	DefaultMaxTokenLifetime = 24 * time.Hour
	// Introspection: an active answer is remembered this long at most
	// (a revoked token stops working within it), a refusal this long,
	// and each client address may have this many tokens a second
	// introspected, in bursts of this many.
	DefaultIntrospectionCache         = 2 * time.Minute
	defaultIntrospectionNegativeCache = 10 * time.Second
	DefaultIntrospectionRate          = 2
	defaultIntrospectionBurst         = 20
	defaultMetadataCache              = "public, max-age=300"
)

// Options configure a Guard.
type Options struct {
	// Issuer is the authorization server's issuer identifier (required):
	// its metadata is fetched from the well-known URLs of RFC 8414 and
	// OpenID Connect Discovery, and must name this same issuer. It must
	// be https, or http on a loopback host.
	Issuer string
	// Resource is this server's canonical URI (required), as clients
	// reach it, e.g. https://mcp.example.com/mcp: the audience every
	// token must carry (RFC 8707), and what the protected resource
	// metadata is named by. Same rule as Issuer for the scheme.
	Resource string
	// Scopes are required of every request's token; one without them
	// all gets 403 insufficient_scope. They are also the metadata's
	// scopes_supported and the scope of the 401 challenge.
	Scopes []string
	// Introspection, when set, lets opaque (non-JWT) tokens in: each is
	// asked about once at the issuer's introspection endpoint (RFC 7662),
	// with these client credentials, and remembered until it expires.
	Introspection *ClientCredentials
	// IntrospectionEndpoint, when set, is where tokens are introspected,
	// instead of the introspection_endpoint of the issuer's metadata:
	// for an authorization server that does not publish one (or serves
	// it elsewhere, as Ory Hydra on its admin port). It needs
	// Introspection, and is https, or http on loopback.
	IntrospectionEndpoint string
	// IntrospectionCache bounds how long an active introspection answer
	// is remembered (0: DefaultIntrospectionCache), however far its exp:
	// a token revoked at the authorization server is refused within it.
	// IntrospectionNegativeCache is how long a token it called inactive
	// (or refused) is refused without asking again (0:
	// 10s; negative: not remembered).
	IntrospectionCache, IntrospectionNegativeCache time.Duration
	// IntrospectionRate and IntrospectionBurst bound the introspections
	// Wrap makes for one client address (IPv6: its /64): a token bucket
	// of IntrospectionBurst (0: 20) refilled at
	// IntrospectionRate a second (0: DefaultIntrospectionRate; negative:
	// no limit). A request past it gets 429. Tokens already remembered
	// cost nothing, and one that was active when last asked about is
	// asked about again without counting (behind a proxy, every client
	// has the proxy's address).
	IntrospectionRate  float64
	IntrospectionBurst int
	// MaxTokenLifetime refuses a token whose exp is further than this
	// from its iat (or, without iat, from now) (0:
	// DefaultMaxTokenLifetime; negative: no bound). A token whose iat is
	// ahead of this clock by more than Leeway is refused too.
	MaxTokenLifetime time.Duration
	// MaxTokenBytes: a longer token is refused without further ado,
	// never sent to the authorization server (0: 8 KiB).
	MaxTokenBytes int
	// AcceptUntypedJWT accepts JWTs whose typ is "JWT" or absent besides
	// RFC 9068's "at+jwt", for authorization servers that do not type
	// their access tokens. The audience check still binds such a token to
	// this resource; off, only typed access tokens are accepted (an ID
	// token is never one).
	AcceptUntypedJWT bool
	// Leeway is the clock skew allowed on exp and nbf (0: 30s;
	// negative: none).
	Leeway time.Duration
	// Refresh is how often the issuer's metadata and key set are fetched
	// again (0: 1h). A token signed by a key the set does not
	// have fetches the set at once, at most every KeyRefetch (0:
	// 10s), so a key rotation needs no restart.
	Refresh, KeyRefetch time.Duration
	// CacheSize bounds the verified tokens remembered (0:
	// 10000).
	CacheSize int
	// HTTPClient fetches metadata and keys and introspects (nil: a client
	// with 10s). Redirects are not followed.
	HTTPClient *http.Client
	// DPoPRequired accepts only DPoP-bound tokens (RFC 9449), each with
	// its proof, and says so in the metadata
	// (dpop_bound_access_tokens_required). Off, a DPoP-bound token is
	// still accepted only with its proof, and an unbound one as a bearer
	// token.
	DPoPRequired bool
	// DPoPNonce has every DPoP proof carry a nonce this server gave out
	// (RFC 9449 section 9: the DPoP-Nonce header, with a use_dpop_nonce
	// error when a proof lacks it), so that a proof made in advance is
	// worthless. Nonces last DPoPNonceLifetime (0:
	// 5m) to twice that.
	DPoPNonce         bool
	DPoPNonceLifetime time.Duration
	// DPoPWindow is how old a DPoP proof may be (its iat) besides Leeway
	// (0: 1m); one from the future gets Leeway only.
	DPoPWindow time.Duration
	// DPoPReplayCache bounds the proofs remembered so that each is
	// accepted once (0: 100000); past it, proofs are
	// refused (503) until older ones are out of their window.
	DPoPReplayCache int
	// Logger receives what the guard has to say: a refresh that failed,
	// keys it skipped, tokens refused (at debug level, with the reason,
	// never the token). Nil: slog.Default().
	Logger *slog.Logger

	now func() time.Time // tests
	// PassToken leaves a bearer token the guard let through on the
	// request's context (SubjectToken), for a gateway that exchanges it
	// for a backend's token (RFC 8693): it is still removed from the
	// request's headers. Off, nothing behind the guard sees the token.
	PassToken bool
}

// Guard makes an HTTP endpoint an OAuth 2.1 resource server, as the MCP
// authorization specification describes it. Build one with New, wrap the
// endpoint's handler with Wrap, mount MetadataHandler on MetadataPaths,
// and Close it when done.
type Guard struct {
	opts      Options
	log       *slog.Logger
	client    *http.Client
	now       func() time.Time
	leeway    time.Duration
	issuer    string
	issuerURL *url.URL
	resource  string
	canonical string
	creds     *ClientCredentials

	metadataURL string
	paths       []string
	metadataDoc []byte
	challenge   string // the 401 challenge without an error

	meta   atomic.Pointer[asMetadata]
	keys   atomic.Pointer[jose.KeySet]
	keyGen atomic.Uint64

	// DPoP (dpop.go): the proof's htu must be htuOrigin and the
	// request's path or htuPath, both normalized.
	htuOrigin, htuPath string
	dpopWindow         time.Duration
	jtis               *jtiCache
	nonces             *nonceSource // nil: no nonces asked for
	dpopChallenge      string       // `DPoP algs="…"`

	refusals refusals

	fetchMu      sync.Mutex
	lastRefetch  time.Time // the last fetch for an unknown kid
	cache        *tokenCache
	refused      *tokenCache  // introspection's refusals, briefly
	limiter      *addrLimiter // introspections per client address; nil: none
	ctx          context.Context
	cancel       context.CancelFunc
	refreshEnded chan struct{}
}

// New checks o, fetches the issuer's metadata and key set (an error if it
// cannot: a server that cannot verify a token should say so at start,
// not at its first request), and starts refreshing them every o.Refresh
// until Close.
func New(ctx context.Context, o Options) (*Guard, error) {
	iss, res, err := o.check()
	if err != nil {
		return nil, err
	}
	if o.Leeway == 0 {
		o.Leeway = defaultLeeway
	} else if o.Leeway < 0 {
		o.Leeway = 0
	}
	if o.Refresh <= 0 {
		o.Refresh = defaultRefresh
	}
	if o.KeyRefetch <= 0 {
		o.KeyRefetch = defaultKeyRefetch
	}
	if o.CacheSize <= 0 {
		o.CacheSize = defaultCacheSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.IntrospectionCache <= 0 {
		o.IntrospectionCache = DefaultIntrospectionCache
	}
	if o.IntrospectionNegativeCache == 0 {
		o.IntrospectionNegativeCache = defaultIntrospectionNegativeCache
	}
	if o.IntrospectionRate == 0 {
		o.IntrospectionRate = DefaultIntrospectionRate
	}
	if o.IntrospectionBurst <= 0 {
		o.IntrospectionBurst = defaultIntrospectionBurst
	}
	if o.MaxTokenLifetime == 0 {
		o.MaxTokenLifetime = DefaultMaxTokenLifetime
	}
	if o.MaxTokenBytes <= 0 {
		o.MaxTokenBytes = defaultMaxTokenBytes
	}
	if o.DPoPWindow <= 0 {
		o.DPoPWindow = defaultDPoPWindow
	}
	if o.DPoPReplayCache <= 0 {
		o.DPoPReplayCache = defaultDPoPReplayCache
	}
	if o.DPoPNonceLifetime <= 0 {
		o.DPoPNonceLifetime = defaultDPoPNonceLifetime
	}
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: defaultFetchTimeout}
	}
	c := *client
	c.CheckRedirect = noRedirects
	g := &Guard{
		opts: o, log: o.Logger, client: &c, now: o.now, leeway: o.Leeway,
		issuer: o.Issuer, issuerURL: iss, resource: o.Resource, canonical: canonicalResource(o.Resource),
		creds: o.Introspection,
		cache: newTokenCache(o.CacheSize),
		// Refusals are kept briefly and need less room.
		refused: newTokenCache(max(o.CacheSize/10, 100)),
	}
	if o.IntrospectionRate > 0 {
		g.limiter = newAddrLimiter(o.IntrospectionRate, o.IntrospectionBurst)
	}
	if g.now == nil {
		g.now = time.Now
	}
	g.metadataURL, g.paths = metadataURLs(res)
	g.metadataDoc, err = json.Marshal(protectedResourceMetadata{
		Resource:                      o.Resource,
		AuthorizationServers:          []string{o.Issuer},
		ScopesSupported:               o.Scopes,
		BearerMethodsSupported:        []string{"header"},
		DPoPSigningAlgValuesSupported: dpopAlgorithms(),
		DPoPBoundAccessTokensRequired: o.DPoPRequired,
	})
	if err != nil {
		return nil, err
	}
	g.htuOrigin, _ = normalizeOrigin(res)
	g.htuPath, _ = normalizePath(res.EscapedPath())
	g.dpopWindow = o.DPoPWindow
	// A proof's iat is acceptable over DPoPWindow and Leeway on either
	// side: its jti is remembered at least that long.
	g.jtis = newJTICache(o.DPoPReplayCache, o.DPoPWindow+2*o.Leeway)
	if o.DPoPNonce {
		g.nonces = newNonceSource(o.DPoPNonceLifetime)
	}
	g.dpopChallenge = `DPoP algs="` + strings.Join(dpopAlgorithms(), " ") + `"`
	scheme := "Bearer"
	if o.DPoPRequired {
		scheme = "DPoP"
	}
	g.challenge = scheme + ` resource_metadata="` + g.metadataURL + `"`
	if len(o.Scopes) > 0 {
		g.challenge += `, scope="` + strings.Join(o.Scopes, " ") + `"`
	}
	if o.DPoPRequired {
		g.challenge += `, algs="` + strings.Join(dpopAlgorithms(), " ") + `"`
	}
	if err := g.refresh(ctx, true); err != nil {
		return nil, err
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.refreshEnded = make(chan struct{})
	go g.refreshLoop()
	return g, nil
}

// Validate reports what New would refuse in o without fetching anything:
// an issuer, resource or introspection endpoint that is not an https (or
// loopback http) URL, a scope that is not a scope token, half of the
// introspection credentials, an introspection endpoint without them.
func (o Options) Validate() error {
	_, _, err := o.check()
	return err
}

func (o *Options) check() (iss, res *url.URL, err error) {
	if iss, err = checkURL("issuer", o.Issuer, false); err != nil {
		return nil, nil, err
	}
	if res, err = checkURL("resource", o.Resource, true); err != nil {
		return nil, nil, err
	}
	for _, s := range o.Scopes {
		if !validScope(s) {
			return nil, nil, fmt.Errorf("scope %q: not a scope token", s)
		}
	}
	if o.Introspection != nil && (o.Introspection.ClientID == "" || o.Introspection.ClientSecret == "") {
		return nil, nil, errors.New("introspection: client_id and client_secret are both needed")
	}
	if o.IntrospectionEndpoint != "" {
		if o.Introspection == nil {
			return nil, nil, errors.New("an introspection endpoint needs the introspection client's credentials")
		}
		if _, err := checkURL("introspection endpoint", o.IntrospectionEndpoint, true); err != nil {
			return nil, nil, err
		}
	}
	return iss, res, nil
}

// Close stops the refreshing and waits for it. The guard still verifies
// tokens afterwards, with the keys it has. Closing twice is harmless.
func (g *Guard) Close() {
	g.cancel()
	<-g.refreshEnded
}

func (g *Guard) refreshLoop() {
	defer close(g.refreshEnded)
	t := time.NewTicker(g.opts.Refresh)
	defer t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-t.C:
			if err := g.refresh(g.ctx, false); err != nil && g.ctx.Err() == nil {
				g.log.Warn("resourceserver: refreshing the authorization server's metadata failed; keeping the last", "issuer", g.issuer, "err", err)
			}
		}
	}
}

// refresh fetches the issuer's metadata, then its key set. At start both
// must work; later a failure keeps what was fetched last.
func (g *Guard) refresh(ctx context.Context, start bool) error {
	m, err := g.discover(ctx)
	if err != nil {
		return err
	}
	if g.opts.IntrospectionEndpoint != "" {
		m.IntrospectionEndpoint = g.opts.IntrospectionEndpoint
	}
	if m.JWKSURI == "" && (g.creds == nil || m.IntrospectionEndpoint == "") {
		return fmt.Errorf("%s has no jwks_uri (and no introspection endpoint to use instead)", g.issuer)
	}
	if start && g.creds != nil && m.IntrospectionEndpoint == "" {
		return fmt.Errorf("introspection credentials given, but %s has no introspection_endpoint", g.issuer)
	}
	g.meta.Store(m)
	if m.JWKSURI == "" {
		g.keys.Store(&jose.KeySet{})
		return nil
	}
	return g.fetchKeys(ctx)
}

// fetchKeys fetches the key set from the metadata's jwks_uri and puts it
// in place. If a key was removed, remembered tokens are forgotten: a key
// the issuer no longer publishes no longer vouches for anything.
func (g *Guard) fetchKeys(ctx context.Context) error {
	u := g.meta.Load().JWKSURI
	doc, status, err := g.get(ctx, u)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s: %d %s", u, status, http.StatusText(status))
	}
	ks, skipped, err := jose.ParseKeySet(doc)
	if err != nil {
		return fmt.Errorf("%s: %v", u, err)
	}
	if ks.Len() == 0 {
		return fmt.Errorf("%s: no usable signature key (%s)", u, strings.Join(skipped, "; "))
	}
	if len(skipped) > 0 {
		g.log.Debug("resourceserver: keys skipped", "jwks_uri", u, "skipped", strings.Join(skipped, "; "))
	}
	old := g.keys.Swap(ks)
	g.keyGen.Add(1)
	if old != nil {
		kept := ks.KIDs()
		for _, kid := range old.KIDs() {
			if !slices.Contains(kept, kid) {
				g.cache.purge()
				break
			}
		}
	}
	return nil
}

// refetchKeys fetches the key set again for a token whose kid it lacks,
// unless another request just did (seen is the generation the caller
// verified against) or the last such fetch was less than KeyRefetch ago
// (tokens with made-up kids must not make this server hammer the issuer).
// It reports whether there is a newer set to try.
func (g *Guard) refetchKeys(seen uint64) bool {
	if g.meta.Load().JWKSURI == "" {
		return false
	}
	g.fetchMu.Lock()
	defer g.fetchMu.Unlock()
	if g.keyGen.Load() != seen {
		return true
	}
	now := g.now()
	if !g.lastRefetch.IsZero() && now.Sub(g.lastRefetch) < g.opts.KeyRefetch {
		return false
	}
	g.lastRefetch = now
	ctx, cancel := context.WithTimeout(g.ctx, defaultFetchTimeout)
	defer cancel()
	if err := g.fetchKeys(ctx); err != nil {
		g.log.Warn("resourceserver: fetching the key set for an unknown kid failed", "issuer", g.issuer, "err", err)
		return false
	}
	return true
}

// bearerCaller verifies a bearer token: a JWT access token (RFC 9068)
// against the issuer's keys, anything else by introspection when
// Options.Introspection is set. A refused token is a *tokenError; an
// issuer that could not be asked is errUnavailable. Results are
// remembered by the token's hash until the token expires. A token bound
// to a key (DPoP, or a TLS client certificate) is refused: it is only
// good with its proof, which Wrap checks and this cannot.
func (g *Guard) bearerCaller(ctx context.Context, token string) (*handlers.Caller, error) {
	e, err := g.authenticate(ctx, token, "", g.now())
	if err != nil {
		return nil, err
	}
	if e.bind != (binding{}) {
		return nil, invalid("bound to a key: it needs its proof")
	}
	return e.caller, nil
}

// authenticate verifies a token, whatever it is bound to, or finds it
// verified in the cache. addr is the client's address, for the
// introspection limit ("": none).
func (g *Guard) authenticate(ctx context.Context, token, addr string, now time.Time) (cached, error) {
	if token == "" {
		return cached{}, invalid("empty")
	}
	if len(token) > g.opts.MaxTokenBytes {
		return cached{}, invalid("too long")
	}
	key := hashToken(token)
	if e, ok := g.cache.get(key, now); ok {
		return e, nil
	}
	if !token68(token) {
		return cached{}, invalid("malformed")
	}
	var e cached
	var err error
	if strings.Count(token, ".") == 2 {
		e, err = g.verifyJWT(token, now)
	} else if g.creds != nil {
		if r, ok := g.refused.get(key, now); ok {
			return cached{}, invalid(r.refused)
		}
		// A token that was active when last asked about is asked about
		// again without counting: the limit is for made-up ones, and
		// behind a proxy every client has its address.
		if addr != "" && g.limiter != nil && !g.cache.had(key) && !g.limiter.allow(addr, now) {
			return cached{}, errRateLimited
		}
		e, err = g.introspect(ctx, token, now)
		var te *tokenError
		if errors.As(err, &te) && g.opts.IntrospectionNegativeCache > 0 {
			g.refused.put(key, cached{until: now.Add(g.opts.IntrospectionNegativeCache), refused: te.Reason}, now)
		}
	} else {
		err = invalid("not a JWT (opaque tokens need introspection)")
	}
	if err != nil {
		return cached{}, err
	}
	g.cache.put(key, e, now)
	return e, nil
}

func (g *Guard) verifyJWT(token string, now time.Time) (cached, error) {
	t, err := jose.Parse(token)
	if err != nil {
		return cached{}, invalid("malformed JWT")
	}
	if !g.typeAccepted(t.Header.Typ) {
		return cached{}, invalid("not a JWT access token (typ)")
	}
	gen := g.keyGen.Load()
	err = g.keys.Load().Verify(t)
	if errors.Is(err, jose.ErrUnknownKey) && g.refetchKeys(gen) {
		err = g.keys.Load().Verify(t)
	}
	switch {
	case err == nil:
	case errors.Is(err, jose.ErrAlgorithm):
		return cached{}, invalid("signature algorithm not accepted")
	case errors.Is(err, jose.ErrUnknownKey):
		return cached{}, invalid("signed by an unknown key")
	case errors.Is(err, jose.ErrCritical):
		return cached{}, invalid("critical header not understood")
	default:
		return cached{}, invalid("bad signature")
	}
	var cs claimSet
	if err := json.Unmarshal(t.Payload, &cs); err != nil {
		return cached{}, invalid("malformed claims")
	}
	if cs.Active != nil || cs.TokenType != "" {
		// Not members of a JWT access token; the names only matter to
		// introspection, and a JWT must not pass for a response.
		cs.Active, cs.TokenType = nil, ""
	}
	bind, err := bindingOf(&cs)
	if err != nil {
		return cached{}, err
	}
	c, until, err := g.check(&cs, t.Payload, now, true)
	if err != nil {
		return cached{}, err
	}
	return cached{caller: c, until: until, bind: bind}, nil
}

// typeAccepted: RFC 9068 section 4 has resource servers check typ, so
// that no other JWT the issuer signs (an ID token) passes for an access
// token.
func (g *Guard) typeAccepted(typ string) bool {
	switch strings.ToLower(typ) {
	case "at+jwt", "application/at+jwt":
		return true
	case "", "jwt":
		return g.opts.AcceptUntypedJWT
	}
	return false
}
