package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
)

// errInsecureURL: an authorization server, one of its endpoints, or a
// resource metadata document is at a plain http URL that is not on
// loopback. Secrets, codes and tokens would travel in clear (OAuth 2.1
// §1.5; MCP authorization, "Communication Security").
var errInsecureURL = errors.New("oauth: not https (plain http is for loopback only)")

// errForbiddenTarget: a URL the MCP server chose (its resource metadata,
// its authorization server, that server's endpoints) is somewhere the
// client does not go on a server's say-so: another origin's resource
// metadata, a link-local address (cloud metadata services), or a private
// or loopback address when the MCP server itself is not on one.
var errForbiddenTarget = errors.New("oauth: refused to fetch from where the server points")

// secureURL parses an absolute URL that is https, or http on loopback
// (RFC 8252 §7.3's exception, and the tests').
func secureURL(s string) (*url.URL, error) {
	u, err := httpURL(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("%w: %s", errInsecureURL, redact(s))
	}
	return u, nil
}

// loopbackHost: localhost, or a loopback address literal. Names are not
// resolved: whether a name is on loopback is the resolver's to say, and
// the resolver is not trusted with the choice of sending a secret in
// clear.
func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}

// netClass is what an address is to the client's rule on where it
// fetches from.
type netClass int

const (
	public   netClass = iota
	internal          // loopback, private (RFC 1918, RFC 4193), shared (RFC 6598)
	never             // link-local (169.254/16: cloud metadata), multicast, unspecified
)

var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

func classify(ip netip.Addr) netClass {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid(), ip.IsUnspecified(), ip.IsLinkLocalUnicast(), ip.IsMulticast(),
		ip.Is4() && ip.As4()[0] == 0:
		return never
	case ip.IsLoopback(), ip.IsPrivate(), sharedSpace.Contains(ip):
		return internal
	}
	return public
}

func (c netClass) String() string {
	switch c {
	case internal:
		return "private or loopback"
	case never:
		return "link-local or reserved"
	}
	return "public"
}

// sameOrigin: same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

// hostPort is u's host with its port, the scheme's default made explicit.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "443"
	if strings.EqualFold(u.Scheme, "http") {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// lookupFunc resolves a host name (net.DefaultResolver.LookupNetIP; tests
// answer without DNS).
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

func defaultLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// classOf is the least trusted class of host's addresses.
func (a *Authorizer) classOf(ctx context.Context, host string) (netClass, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return classify(ip), nil
	}
	ips, err := a.lookup(ctx, host)
	if err != nil {
		return never, err
	}
	worst := public
	for _, ip := range ips {
		worst = max(worst, classify(ip))
	}
	return worst, nil
}

// serverInternal reports whether the MCP server itself is on a private
// or loopback address (a.mu held): then its authorization server may be
// too.
func (a *Authorizer) serverInternal(ctx context.Context) bool {
	if a.serverClass == nil {
		c, err := a.classOf(ctx, a.server.Hostname())
		if err != nil {
			return false // not cached: the next look may resolve
		}
		a.serverClass = &c
	}
	return *a.serverClass != public
}

// checkTarget is the rule for a URL the MCP server chose, before any
// connection to it (a.mu held): https (or loopback http), and, unless it
// is the server's own origin or the user's say-so (trusted), an address
// the client may reach on a server's say-so.
func (a *Authorizer) checkTarget(ctx context.Context, what string, u *url.URL, trusted bool) error {
	if _, err := secureURL(u.String()); err != nil {
		return fmt.Errorf("oauth: %s: %w", what, err)
	}
	if trusted || sameOrigin(u, a.server) {
		return nil
	}
	c, err := a.classOf(ctx, u.Hostname())
	if err != nil {
		return fmt.Errorf("oauth: %s %s: %w", what, redact(u.String()), err)
	}
	if c == never || (c == internal && !a.cfg.AllowPrivate && !a.serverInternal(ctx)) {
		return fmt.Errorf("%w: %s %s is on a %s address", errForbiddenTarget, what, redact(u.String()), c)
	}
	return nil
}

// addrPolicy travels in the context of the client's own requests to
// what the server named, so that the dialer checks the address it
// actually connects to: a name that resolved to a public address when
// checked may resolve to another when dialled.
type addrPolicy struct {
	internalOK bool
	hostPort   string // the request's host and port: a dial elsewhere is to a proxy
}

type policyKey struct{}

// controlDial refuses a connection that the request's policy forbids.
func controlDial(ctx context.Context, _, address string, _ syscall.RawConn) error {
	p, ok := ctx.Value(policyKey{}).(addrPolicy)
	if !ok {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", errForbiddenTarget, address)
	}
	if c := classify(ap.Addr()); c == never || (c == internal && !p.internalOK) {
		return fmt.Errorf("%w: a %s address", errForbiddenTarget, c)
	}
	return nil
}

// withPolicy is ctx for a request to u, a URL the server chose (a.mu
// held): the dialer holds it to the rule checkTarget applied.
func (a *Authorizer) withPolicy(ctx context.Context, u string, trusted bool) context.Context {
	pu, err := url.Parse(u)
	if err != nil || trusted || sameOrigin(pu, a.server) || slices.Contains(a.cfg.MetadataOrigins, origin(pu)) {
		return ctx
	}
	return context.WithValue(ctx, policyKey{}, addrPolicy{internalOK: a.cfg.AllowPrivate || a.serverInternal(ctx), hostPort: hostPort(pu)})
}

func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// noRedirects: discovery and token requests are not redirected. A
// redirect would take the client where the checks above did not look
// (169.254.169.254), and a 307 from a token endpoint would post the
// client's secret and refresh token again, to wherever it points.
func noRedirects(*http.Request, []*http.Request) error {
	return errors.New("redirect refused (discovery and token requests are not redirected)")
}

// NewHTTPClient is a client for authorization servers and metadata as an
// Authorizer makes one when Config.HTTPClient is nil: its dialer applies
// the address rule. Many Authorizers (a gateway's, one per user) share
// one, and its connections, by giving it as their Config.HTTPClient.
func NewHTTPClient() *http.Client { return defaultClient() }

// defaultClient is the client for authorization servers and metadata
// when the caller gives none: its dialer applies the address rule.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: controlDial}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if p, ok := ctx.Value(policyKey{}).(addrPolicy); ok && !strings.EqualFold(p.hostPort, addr) {
			// A proxy (HTTPS_PROXY): its address is the user's choice,
			// and it is the one that resolves the name checked before.
			ctx = context.WithValue(ctx, policyKey{}, nil)
		}
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: t, CheckRedirect: noRedirects}
}
