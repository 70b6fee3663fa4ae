// Package resourceserver makes an HTTP endpoint an OAuth 2.1 resource
// server, as the MCP authorization specification (2025-06-18, 2025-11-25,
// 2026-07-28) has a protected MCP server be: a Guard wraps any
// http.Handler (the streamhttp endpoint, say) and lets a request through
// only with a bearer access token that its authorization server issued
// for this resource.
//
//	g, err := resourceserver.New(ctx, resourceserver.Options{
//		Issuer:   "https://auth.example.com",
//		Resource: "https://mcp.example.com/mcp",
//		Scopes:   []string{"mcp:tools"},
//	})
//	mux.Handle("/mcp", g.Wrap(endpoint))
//	for _, p := range g.MetadataPaths() {
//		mux.Handle(p, g.MetadataHandler())
//	}
//	defer g.Close()
//
// What it does:
//
//   - Protected resource metadata (RFC 9728) at the well-known path for the
//     resource's path and at the root form, naming the issuer, the scopes,
//     the header as the bearer method and the DPoP proof algorithms.
//   - A request without a token: 401 with WWW-Authenticate: Bearer (DPoP
//     with Options.DPoPRequired)
//     resource_metadata="…", scope="…". A token that does not verify: 401
//     error="invalid_token" with a fixed-phrase error_description. A valid
//     token without Options.Scopes: 403 error="insufficient_scope".
//   - The issuer's metadata (RFC 8414, then OpenID Connect Discovery, in
//     the order the MCP specification gives) fetched at New and every
//     Options.Refresh; the issuer must be https, or http on loopback, and
//     carry no user info (refused without repeating it: it may be a
//     password).
//   - JWT access tokens (RFC 9068): typ at+jwt; signed RS256/384/512,
//     PS256/384/512, ES256/384/512 or EdDSA with a key of the issuer's
//     JWK Set of that type (never none, never HMAC: symmetric keys are
//     dropped); iss the issuer; aud (a string or an array) naming
//     Options.Resource; exp required and nbf honoured, with
//     Options.Leeway; an iat ahead of this clock by more than Leeway, or
//     a lifetime (exp - iat, or what is left without iat; introspected
//     tokens too) over Options.MaxTokenLifetime (24 h), refused. A kid the set lacks fetches the set once more (at
//     most every Options.KeyRefetch), so a key rotation needs no restart;
//     a key the issuer stops publishing stops vouching for remembered
//     tokens at once.
//   - Opaque tokens, with Options.Introspection: RFC 7662 introspection
//     at the issuer's introspection_endpoint, or at
//     Options.IntrospectionEndpoint for an issuer that publishes none
//     (client_secret_basic; https, or http on loopback), active
//     and for this audience; remembered until their exp but at most
//     Options.IntrospectionCache (2 minutes: a revoked token stops
//     working within it). A refused one is refused again without asking
//     for Options.IntrospectionNegativeCache (10 s); each client address
//     (an IPv6 /64) gets Options.IntrospectionRate introspections a
//     second in bursts of IntrospectionBurst (2 and 20), then 429, with
//     the addresses tracked bounded; a token found active before does not
//     count. A token over Options.MaxTokenBytes
//     (8 KiB) is refused without asking anyone.
//   - A token that names neither a subject (sub) nor a client (client_id,
//     or azp) is refused: state is bound to Caller.Principal, and such
//     tokens would all be one principal.
//   - Sender-constrained tokens are accepted only with their proof of
//     possession, never as bearer tokens (RFC 9449 section 7.2). A
//     DPoP-bound token (a JWT's cnf.jkt; an introspection answer of
//     token_type DPoP, which must carry cnf.jkt) comes under the DPoP
//     scheme with one DPoP header, a proof JWT (RFC 9449 section 4.3):
//     typ dpop+jwt; signed, with an asymmetric algorithm only (never
//     none nor a MAC), by the public key of its header's jwk (one with
//     private members is refused); jti, htm, htu and iat present; htm
//     the request's method; htu, without query and fragment and after
//     RFC 3986 normalization, this resource's origin (Options.Resource's,
//     never the Host header) with the request's path or the resource's;
//     iat at most Options.DPoPWindow old and Leeway ahead; ath the
//     token's SHA-256; the jwk's RFC 7638 thumbprint the token's cnf.jkt;
//     a jti never seen before (remembered for the window, bounded by
//     Options.DPoPReplayCache: past it proofs get 503, none is
//     forgotten early); and with Options.DPoPNonce, a nonce this server
//     gave (DPoP-Nonce; a use_dpop_nonce error otherwise). A refused
//     proof is 401 with a DPoP challenge naming error="invalid_dpop_proof"
//     and the algs. A token bound to a TLS client certificate
//     (cnf.x5t#S256, RFC 8705) is accepted only over a connection whose
//     client certificate has that SHA-256 thumbprint, so not behind a
//     proxy that terminates TLS. A token bound by another cnf method is
//     refused. With Options.DPoPRequired, only DPoP-bound tokens are
//     accepted and the metadata says dpop_bound_access_tokens_required;
//     it always names dpop_signing_alg_values_supported.
//   - Every verified token is remembered by its SHA-256 (never the token)
//     in a bounded cache until it expires, so an authorized request costs
//     a hash and a map look-up.
//   - What it fetches, and from where: the issuer's metadata from the
//     issuer's own well-known URLs, the key set at the jwks_uri that
//     metadata names, introspection at its introspection_endpoint (or
//     Options.IntrospectionEndpoint), each https or loopback http, no
//     redirect followed, no document over 1 MiB. Nothing a token or a
//     proof names is fetched: jku, x5u and x5c are ignored, and a proof's
//     key is the jwk it carries.
//   - The token is never logged and never in an error message; the
//     request reaches the wrapped handler without its Authorization (and
//     DPoP) header, and with the handlers.Caller (subject, client id, audience, scopes, claims)
//     on its context: handlers.CallerFrom(r.Context()), the one handlers reads:
//     behind streamhttp, a handler finds it as Request.Caller, and
//     handlers.Access (which tools, prompts and resources each caller
//     sees and uses) decides on it; ScopeChallenge is the 403 step-up
//     challenge streamhttp sends for what Access refuses for a scope.
package resourceserver
