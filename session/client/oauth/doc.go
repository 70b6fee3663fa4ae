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
// What it guarantees:
//   - A token goes only to the resource it was issued for (same origin,
//     path within the resource's), on every hop of a redirect too; the
//     resource a server's metadata names must cover the server's URL, or
//     no authorization starts.
//   - Every authorization and token request names the resource (RFC 8707)
//     exactly as the server's metadata publishes it.
//   - The authorization server's metadata must carry the issuer it was
//     looked up for, and an authorization response's iss (RFC 9207) must
//     equal it exactly: when the server advertises iss, it must be there.
//   - Client credentials are kept per issuer: a server that moves to
//     another authorization server gets a new registration there.
//   - A client that keeps being refused stops: at most three
//     authorizations in a row without a request that then succeeds.
//   - Tokens, secrets and keys are never logged nor put in errors; Token's
//     String and LogValue hide them.
//
// DPoP (RFC 9449) is used when the resource asks for it (a DPoP
// challenge, or dpop_bound_access_tokens_required in its metadata) and
// the authorization server advertises ES256 for it, unless Config.NoDPoP:
// tokens are then bound to a key the Authorizer makes, and each request
// carries a fresh proof, with the servers' nonces when they give them.
package oauth
