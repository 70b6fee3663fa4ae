// A real OAuth 2.1 authorization server for mcprt's tests: oidc-provider
// (pinned by package-lock.json), configured for the client_credentials
// grant with resource indicators (RFC 8707), issuing JWT access tokens
// (RFC 9068) for the resource a client names, or opaque ones that the
// resource server introspects (RFC 7662).
//
//   node as.mjs CONFIG.json
//
// CONFIG: {
//   "keysFile": "jwks.json",   // its signing keys, a private JWK Set
//   "ttl": 300,                // access token lifetime, seconds
//   "scope": "mcp:tools mcp:admin",   // the scopes a resource offers
//   "clients": [{"client_id": "…", "client_secret": "…",
//                "alg": "ES256",          // how its JWTs are signed
//                "format": "jwt",         // or "opaque"
//                "scope": "mcp:tools",    // the scopes it may ask for
//                "redirect_uris": ["…"],  // also the code grant (a gateway
//                                          // signing its users in)
//                "application_type": "native"}], // loopback ports vary
//   "authorizationCode": true, // also serve users (below)
//   "publicClients": [{"client_id": "…",   // pre-registered native
//                      "redirect_uris": ["http://127.0.0.1/callback"]}]
// }
//
// With authorizationCode, it also serves the authorization code grant
// as a user's MCP client meets it: PKCE (S256 only, required of public
// clients), open dynamic client registration (RFC 7591; a native
// client's loopback redirect URI matches whatever port it comes back
// on, RFC 8252 §7.3), resource indicators on the authorization and
// token requests, and refresh tokens (oidc-provider's rule, OpenID
// Connect Core §11: to a client registered for them that asked for
// offline_access with prompt=consent). Users sign in through
// oidc-provider's development interactions, HTML forms a test drives as
// a browser would: any login name, any password, then the consent form.
// Development-only, as is this whole server. publicClients are
// pre-registered native clients (no secret) for the code grant.
//
// With "tokenExchange": {"clients": ["gw"], "ttl": 2, "refuse": ["sub"],
// "resources": ["http://…/mcp"]}, it also serves RFC 8693 token exchange
// (registerGrantType) to those confidential clients, as a gateway acting
// for each user meets it: the subject_token, an access token of this
// server's own (a JWT it signed, not expired), is exchanged for a JWT
// access token for the resource asked for (one of "resources", when
// given, else invalid_target), with the subject's sub, the exchanging
// client as client_id and in act.sub, and "ttl" seconds of life (default
// the server's). A subject in "refuse" is invalid_grant, in words. Each
// exchange prints "exchanged SUB for RESOURCE" on stdout (never a token).
//
// It listens on 127.0.0.1 (a free port) and prints one line,
// "issuer http://127.0.0.1:PORT", when it serves. SIGHUP reads keysFile
// again and serves with the new keys at the same address: a key
// rotation, without a restart of the port (tokens issued before are
// forgotten, as the in-memory adapter goes with the old instance).
//
// Without CONFIG (a local try, as the README says: npm ci, then node
// as.mjs), it serves users and one client, "demo" with secret
// "demo-secret", with a fresh P-256 signing key in a temporary file.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Provider from 'oidc-provider';
// oidc-provider's own dependency, for the token exchange grant's JWTs.
import { SignJWT, createLocalJWKSet, importJWK, jwtVerify } from 'jose';

const tokenExchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

const config = process.argv[2] ? JSON.parse(readFileSync(process.argv[2], 'utf8')) : tryConfig();

function tryConfig() {
  const keysFile = join(mkdtempSync(join(tmpdir(), 'mcprt-as-')), 'jwks.json');
  // An RSA key too: clients registered without naming an algorithm get
  // RS256 ID tokens, which oidc-provider refuses to register without one.
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const keys = [
    { ...ec.export({ format: 'jwk' }), kid: 'try-es256', alg: 'ES256', use: 'sig' },
    { ...rsa.export({ format: 'jwk' }), kid: 'try-rs256', alg: 'RS256', use: 'sig' },
  ];
  writeFileSync(keysFile, JSON.stringify({ keys }), { mode: 0o600 });
  return {
    keysFile, ttl: 3600, scope: 'mcp:tools', authorizationCode: true,
    clients: [{ client_id: 'demo', client_secret: 'demo-secret', alg: 'ES256', format: 'jwt', scope: 'mcp:tools' }],
  };
}

function build(issuer) {
  const jwks = JSON.parse(readFileSync(config.keysFile, 'utf8'));
  const byId = new Map(config.clients.map((c) => [c.client_id, c]));
  const code = Boolean(config.authorizationCode);
  const provider = new Provider(issuer, {
    jwks,
    clients: config.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      grant_types: ['client_credentials', ...(exchanges(c.client_id) ? [tokenExchange] : []),
        ...(c.redirect_uris ? ['authorization_code', 'refresh_token'] : [])],
      response_types: c.redirect_uris ? ['code'] : [],
      redirect_uris: c.redirect_uris || [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: c.scope,
      // "native": its loopback redirect URIs match any port (RFC 8252).
      ...(c.application_type ? { application_type: c.application_type } : {}),
    })).concat((code && config.publicClients || []).map((c) => ({
      client_id: c.client_id,
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: c.redirect_uris,
      token_endpoint_auth_method: 'none',
    }))),
    scopes: [...(code ? ['openid', 'offline_access'] : []), ...config.scope.split(' ')],
    features: {
      devInteractions: { enabled: code },
      registration: { enabled: code },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A token is for the resource the client names, and only then a
        // JWT (tests forge the audience-less one).
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo(ctx, resource, client) {
          // A registered client (not in the config) gets RS256 JWTs.
          const c = byId.get(client.clientId) || {};
          return {
            scope: config.scope,
            audience: resource,
            accessTokenTTL: config.ttl,
            accessTokenFormat: c.format || 'jwt',
            jwt: { sign: { alg: c.alg || 'RS256' } },
          };
        },
      },
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    },
  });
  if (config.tokenExchange) {
    provider.registerGrantType(tokenExchange, exchangeGrant(issuer, jwks),
      ['subject_token', 'subject_token_type', 'requested_token_type', 'resource', 'scope', 'audience']);
  }
  provider.on('server_error', (ctx, err) => console.error('as: server_error', err));
  // A refresh says so on stdout (never a token), for tests that count them.
  provider.on('grant.success', (ctx) => {
    if (ctx.oidc.params.grant_type === 'refresh_token') console.log(`refreshed for ${ctx.oidc.client.clientId}`);
  });
  return provider;
}

function exchanges(clientId) {
  return Boolean(config.tokenExchange && (config.tokenExchange.clients || []).includes(clientId));
}

// exchangeGrant is the token exchange grant's handler: oidc-provider has
// authenticated the client (and checked it may use the grant) by then.
function exchangeGrant(issuer, jwks) {
  const x = config.tokenExchange;
  const pub = { keys: jwks.keys.map(({ d, p, q, dp, dq, qi, ...k }) => k) };
  const keySet = createLocalJWKSet(pub);
  const signing = jwks.keys.find((k) => k.alg === 'ES256');
  return async function (ctx) {
    const p = ctx.oidc.params;
    const fail = (error, description) => {
      ctx.status = 400;
      ctx.body = { error, error_description: description };
    };
    if (p.subject_token_type !== accessTokenType) {
      return fail('invalid_request', 'subject_token_type must be an access token');
    }
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(p.subject_token || '', keySet, { issuer }));
    } catch (err) {
      return fail('invalid_grant', `the subject token is not valid (${err.code || 'unreadable'})`);
    }
    const client = ctx.oidc.client.clientId;
    if ((x.refuse || []).includes(claims.sub)) {
      return fail('invalid_grant', `${claims.sub} may not be represented by ${client}`);
    }
    const resource = p.resource;
    if (!resource || (x.resources && !x.resources.includes(resource))) {
      return fail('invalid_target', `no tokens are issued for ${resource || 'an unnamed resource'}`);
    }
    const ttl = x.ttl || config.ttl;
    const scope = p.scope || claims.scope || '';
    const key = await importJWK(signing, 'ES256');
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ sub: claims.sub, client_id: client, scope, act: { sub: client } })
      .setProtectedHeader({ alg: 'ES256', kid: signing.kid, typ: 'at+jwt' })
      .setIssuer(issuer).setAudience(resource).setIssuedAt(now).setExpirationTime(now + ttl)
      .setJti(randomUUID()).sign(key);
    console.log(`exchanged ${claims.sub} for ${resource}`);
    ctx.body = { access_token: token, issued_token_type: accessTokenType, token_type: 'Bearer', expires_in: ttl, scope };
  };
}

let handler = null;
const server = createServer((req, res) => handler(req, res));
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  handler = build(issuer).callback();
  process.on('SIGHUP', () => {
    try {
      handler = build(issuer).callback();
      console.log('rotated');
    } catch (err) {
      console.error('as: rotation failed', err);
    }
  });
  console.log(`issuer ${issuer}`);
});
