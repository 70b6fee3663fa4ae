// Package oauth makes an MCP client an OAuth 2.1 client, as the MCP
// authorization specification (2025-06-18, 2025-11-25, 2026-07-28)
// describes: an Authorizer is an http.RoundTripper for the requests to
// one MCP server that, when the server answers 401 (or 403
// insufficient_scope), discovers the server's protected resource metadata
// (RFC 9728) and its authorization server's metadata (RFC 8414, OpenID
// discovery, and the 2025-03-26 fallbacks), registers the client
// (pre-registered credentials, a Client ID Metadata Document, or dynamic
// registration, RFC 7591, in that order), obtains a token with the
// configured grant (authorization code with PKCE S256, client
// credentials, or a JWT bearer assertion, RFC 7523), and sends the
// request again with it.
//
// Plug it into session/client with the HTTPClient option:
//
//	a, _ := oauth.New(endpoint, oauth.Config{...})
//	c, err := client.ConnectURL(ctx, endpoint, &client.Options{HTTPClient: a.Client()})
//
// The contract: what is sent where.
//   - An access token goes only to the resource it was issued for (same
//     origin, path within the resource's), on every hop of a redirect
//     too; the resource a server's metadata names must cover the server's
//     URL, or no authorization starts.
//   - Pre-registered client credentials (Config.ClientID with
//     ClientSecret or ClientKey) go to Config.ClientIssuer alone, the
//     authorization server that issued them, which New requires with a
//     secret or key. A server that names another issuer, or publishes no
//     metadata (so that the 2025-03-26 fallback would make its own origin
//     the authorization server), gets ErrWrongIssuer and nothing else: no
//     secret, no private_key_jwt assertion, no registration. The
//     assertion's audience is ClientIssuer. Only a client configured
//     without credentials registers, by its Client ID Metadata Document
//     or dynamically, at the issuer the server names.
//   - A refresh token goes only to the issuer that minted it: a kept
//     token whose server now names another issuer is an error (sign in again), and
//     its refresh token is not shown to the new one. A refresh token the
//     issuer refuses (invalid_grant) is forgotten, in the Store too.
//   - Every authorization and token request names the resource (RFC
//     8707) exactly as the server's metadata publishes it.
//   - Tokens, secrets and keys are never logged nor put in errors; Token's
//     String and LogValue hide them. A Store's files are the user's alone
//     (0600, in a folder tightened to 0700).
//
// What is fetched from where:
//   - Protected resource metadata: from the server's own origin (the
//     well-known URIs, or its 401's resource_metadata when it is on that
//     origin, or on one of Config.MetadataOrigins); another is
//     refused before any connection.
//   - Authorization servers, their metadata and endpoints: https, or
//     http on loopback only; the metadata must carry the
//     issuer it was looked up for, and an authorization response's iss
//     (RFC 9207) must equal it exactly.
//   - Whatever the server points at (its resource metadata elsewhere, its
//     authorization server, that server's token and registration
//     endpoints) is reached on a public address only: never a
//     link-local one (169.254.169.254), and a private or loopback one only
//     when the server itself is on one, or Config.AllowPrivate. The rule
//     is checked on the names' addresses before any connection, and again
//     by the dialer of the default HTTPClient on the address it connects
//     to. The configured ClientIssuer is the user's say-so, not the
//     server's, and is exempt.
//   - No redirect is followed on discovery or token requests.
//   - The authorization code grant starts only with an authorization
//     server whose metadata lists S256 in code_challenge_methods_supported
//     (MCP authorization 2025-11-25).
//   - The Loopback user agent takes only the redirect back whose state is
//     its request's; any other GET /callback is answered 400.
//
// And besides:
//   - A client that keeps being refused stops: at most three
//     authorizations in a row without a request that then succeeds.
//   - Client registrations are kept per issuer: a server that moves to
//     another authorization server gets a new registration there (when the
//     client has no configured credentials).
//
// DPoP (RFC 9449) is used when the resource asks for it (a DPoP
// challenge, or dpop_bound_access_tokens_required in its metadata) and
// the authorization server advertises ES256 for it, unless Config.NoDPoP:
// tokens are then bound to a key the Authorizer makes, and each request
// carries a fresh proof, with the servers' nonces when they give them.
package oauth
