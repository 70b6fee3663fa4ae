package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/runtime/resourceserver"
)

// oauthFlags make the HTTP endpoint an OAuth 2.1 resource server
// (runtime/resourceserver).
type oauthFlags struct {
	issuer, resource, scopes string
	introspectionFile        string
	introspectionEndpoint    string
	untypedJWT               bool
	dpopRequired, dpopNonce  bool
	introspectionCache       time.Duration
	maxLifetime              time.Duration
	introspectionRate        float64
	// passToken: the gateway exchanges callers' tokens (auth
	// "exchange"), so the guard leaves them on the request's context.
	passToken bool
}

func addOAuthFlags(fs *flag.FlagSet, of *oauthFlags) {
	fs.StringVar(&of.issuer, "http-oauth-issuer", "", "accept only access tokens of the authorization server whose issuer is `URL` (https, or http on loopback): JWTs verified with its published keys, others by introspection (-http-oauth-introspection-client); needs -http-oauth-resource. Protected resource metadata is served at /.well-known/oauth-protected-resource[/resource path], and a request without a valid token gets 401 naming it")
	fs.StringVar(&of.resource, "http-oauth-resource", "", "this server's canonical `URL` as clients reach it (e.g. https://mcp.example.com/mcp): the audience every token must carry")
	fs.StringVar(&of.scopes, "http-oauth-scopes", "", "comma- or space-separated `scopes` every token must carry (others get 403 insufficient_scope)")
	fs.StringVar(&of.introspectionFile, "http-oauth-introspection-client", "", "accept opaque tokens by asking the issuer's introspection endpoint (RFC 7662), as the client whose credentials are in `file`: {\"client_id\": \"…\", \"client_secret\": \"…\"}")
	fs.StringVar(&of.introspectionEndpoint, "http-oauth-introspection-endpoint", "", "introspect opaque tokens at `URL` (https, or http on loopback) instead of the introspection_endpoint of the issuer's metadata, for an authorization server that publishes none (or serves it elsewhere, as Ory Hydra on its admin port); needs -http-oauth-introspection-client")
	fs.DurationVar(&of.introspectionCache, "http-oauth-introspection-cache", resourceserver.DefaultIntrospectionCache, "remember an introspected token's answer this long at most, however far its expiry: a token revoked at the authorization server is refused within it")
	fs.Float64Var(&of.introspectionRate, "http-oauth-introspection-rate", resourceserver.DefaultIntrospectionRate, "new opaque tokens a second one client address (an IPv6 /64) may have introspected, in bursts of 20; past it, 429 (tokens found active before do not count: behind a proxy, raise it or go negative for no limit)")
	fs.DurationVar(&of.maxLifetime, "http-oauth-max-token-lifetime", resourceserver.DefaultMaxTokenLifetime, "refuse access tokens that last longer than this (exp - iat, or what is left without iat); -1s: no bound. Tokens issued in the future (iat beyond 30s of clock skew) are refused too")
	fs.BoolVar(&of.untypedJWT, "http-oauth-untyped-jwt", false, "also accept JWT access tokens typed JWT or untyped, not only at+jwt (RFC 9068), for authorization servers that do not type them")
	fs.BoolVar(&of.dpopRequired, "http-oauth-dpop-required", false, "accept only DPoP-bound access tokens (RFC 9449), each with its proof, and say so in the metadata (dpop_bound_access_tokens_required). Without it, bound tokens still need their proof (a DPoP-bound or certificate-bound token is never taken as a bearer token) and unbound ones are accepted")
	fs.BoolVar(&of.dpopNonce, "http-oauth-dpop-nonce", false, "have every DPoP proof carry a nonce this server gave out (DPoP-Nonce header, use_dpop_nonce error), so that no proof can be made in advance")
}

// errNoOAuth: the flags ask for no resource server.
var errNoOAuth = errors.New("no -http-oauth-issuer")

// guard builds the resource server the flags ask for, fetching the
// issuer's metadata and keys; errNoOAuth when they ask for none. usage
// says the error is the flags', not the issuer's.
func (of *oauthFlags) guard(ctx context.Context, tokenFile string, log *slog.Logger) (g *resourceserver.Guard, usage bool, err error) {
	o, usage, err := of.options(tokenFile, log)
	if err != nil {
		return nil, usage, err
	}
	g, err = resourceserver.New(ctx, o)
	if err != nil {
		return nil, false, fmt.Errorf("-http-oauth-issuer: %v", err)
	}
	return g, false, nil
}

// options are the resource server's the flags ask for; errNoOAuth when
// they ask for none. usage says the error is the flags'.
func (of *oauthFlags) options(tokenFile string, log *slog.Logger) (o resourceserver.Options, usage bool, err error) {
	if of.issuer == "" {
		if of.resource != "" || of.scopes != "" || of.introspectionFile != "" || of.untypedJWT || of.dpopRequired || of.dpopNonce || of.introspectionEndpoint != "" {
			return o, true, errors.New("the -http-oauth-* flags need -http-oauth-issuer")
		}
		return o, false, errNoOAuth
	}
	if of.resource == "" {
		return o, true, errors.New("-http-oauth-issuer needs -http-oauth-resource, this server's URL as clients reach it")
	}
	if tokenFile != "" {
		return o, true, errors.New("-http-token-file and -http-oauth-issuer are two ways to authorize: choose one")
	}
	o = resourceserver.Options{
		Issuer: of.issuer, Resource: of.resource, AcceptUntypedJWT: of.untypedJWT, Logger: log,
		DPoPRequired: of.dpopRequired, DPoPNonce: of.dpopNonce, IntrospectionCache: of.introspectionCache,
		MaxTokenLifetime: of.maxLifetime, IntrospectionRate: of.introspectionRate, PassToken: of.passToken,
		Scopes: strings.FieldsFunc(of.scopes, func(r rune) bool { return r == ',' || r == ' ' }),
	}
	if of.introspectionFile != "" {
		c, err := resourceserver.LoadClientCredentials(of.introspectionFile)
		if err != nil {
			return o, true, fmt.Errorf("-http-oauth-introspection-client: %v", err)
		}
		o.Introspection = c
	}
	if of.introspectionEndpoint != "" {
		if o.Introspection == nil {
			return o, true, errors.New("-http-oauth-introspection-endpoint needs -http-oauth-introspection-client, the credentials to introspect with")
		}
		o.IntrospectionEndpoint = of.introspectionEndpoint
	}
	if err := o.Validate(); err != nil {
		return o, true, err
	}
	return o, false, nil
}

// pathsClash reports a path of the MCP endpoint, -http-health or
// -http-metrics that the metadata would also be served on.
func pathsClash(g *resourceserver.Guard, paths ...string) string {
	for _, p := range paths {
		if p != "" && slices.Contains(g.MetadataPaths(), p) {
			return p
		}
	}
	return ""
}
