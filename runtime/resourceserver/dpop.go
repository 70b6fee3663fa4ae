package resourceserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/runtime/resourceserver/internal/jose"
)

// Defaults of the DPoP options.
const (
	defaultDPoPWindow        = time.Minute
	defaultDPoPReplayCache   = 100000
	defaultDPoPNonceLifetime = 5 * time.Minute
	// maxProofBytes bounds a DPoP header: a proof is a header with a
	// public key (an RSA 4096 one is under 1 KiB) and a few claims.
	maxProofBytes = 8 << 10
	maxJTIBytes   = 256
)

// dpopAlgorithms are the proof algorithms this side verifies (the
// metadata's dpop_signing_alg_values_supported): asymmetric ones only,
// as RFC 9449 section 4.3 has a resource server refuse none and MACs.
// ES256 first: the one RFC 9449 clients are most likely to use.
func dpopAlgorithms() []string {
	return []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA", "Ed25519"}
}

var b64 = base64.RawURLEncoding

// proofError is why a DPoP proof (RFC 9449) was refused: a fixed phrase,
// never a value from the proof, for the invalid_dpop_proof error.
type proofError struct{ Reason string }

func (e *proofError) Error() string { return "invalid DPoP proof: " + e.Reason }

func badProof(reason string) error { return &proofError{Reason: reason} }

// errNonce: the proof lacks the server's current nonce (use_dpop_nonce).
var errNonce = errors.New("DPoP proof without the server's nonce")

// errReplayFull: the replay cache is full of proofs that are still
// acceptable; a new one cannot be remembered, so it is not accepted.
var errReplayFull = errors.New("too many DPoP proofs at once")

// proofClaims are the members of a proof's claims set (RFC 9449 section
// 4.2) that are checked.
type proofClaims struct {
	JTI   *string  `json:"jti"`
	HTM   *string  `json:"htm"`
	HTU   *string  `json:"htu"`
	IAT   *float64 `json:"iat"`
	ATH   *string  `json:"ath"`
	Nonce *string  `json:"nonce"`
}

// checkProof verifies the request's DPoP proof for token, bound to the key
// whose thumbprint is jkt, as RFC 9449 section 4.3 lists the checks. The
// jti is remembered only once every other check passed, so that proofs
// which do not verify cannot fill the replay cache. It returns the
// nonce the proof carried ("" without one).
func (g *Guard) checkProof(r *http.Request, token, jkt string, now time.Time) (string, error) {
	// 4.3 (1): one DPoP header, no more.
	vals := r.Header.Values("DPoP")
	switch {
	case len(vals) == 0:
		return "", badProof("no DPoP proof")
	case len(vals) > 1:
		return "", badProof("more than one DPoP header")
	case len(vals[0]) > maxProofBytes:
		return "", badProof("proof too long")
	}
	p, err := g.verifyProof(vals[0])
	if err != nil {
		return "", err
	}
	key, cs := p.key, &p.claims
	// (8) htm and (9) htu: the proof is for this request.
	if *cs.HTM != r.Method {
		return "", badProof("htm is not the request's method")
	}
	if !g.htuMatches(*cs.HTU, r) {
		return "", badProof("htu is not this resource")
	}
	// (10) the server's nonce, when it gives them.
	nonce := ""
	if cs.Nonce != nil {
		nonce = *cs.Nonce
	}
	if g.nonces != nil && !g.nonces.valid(nonce, now) {
		return "", errNonce
	}
	// (11) iat within the window: not older than DPoPWindow, not ahead
	// of this clock by more than Leeway.
	iat, ok := numericDate(*cs.IAT)
	if !ok || iat.Before(now.Add(-g.dpopWindow-g.leeway)) {
		return "", badProof("iat too old")
	}
	if iat.After(now.Add(g.leeway)) {
		return "", badProof("iat in the future")
	}
	// (12) ath is the hash of the token presented with it, and the
	// token's cnf.jkt the proof's key.
	if cs.ATH == nil {
		return "", badProof("no ath")
	}
	sum := sha256.Sum256([]byte(token))
	var want [43]byte
	b64.Encode(want[:], sum[:])
	if subtle.ConstantTimeCompare([]byte(*cs.ATH), want[:]) != 1 {
		return "", badProof("ath is not the token's hash")
	}
	if subtle.ConstantTimeCompare([]byte(key.Thumbprint()), []byte(jkt)) != 1 {
		return "", badProof("the token is bound to another key")
	}
	// (5) jti: a proof is used once.
	h := sha256.New()
	h.Write([]byte(key.Thumbprint()))
	h.Write([]byte{0})
	h.Write([]byte(*cs.JTI))
	var k tokenKey
	h.Sum(k[:0])
	if err := g.jtis.add(k, now); err != nil {
		return "", err
	}
	return nonce, nil
}

type proof struct {
	key    *jose.Key
	claims proofClaims
}

// verifyProof parses a proof, checks its type, algorithm and signature
// with the key it carries, and that it has the claims every proof must
// have (RFC 9449 section 4.3 steps 2 to 7).
func (g *Guard) verifyProof(s string) (*proof, error) {
	t, err := jose.Parse(s)
	if err != nil {
		return nil, badProof("malformed")
	}
	if !strings.EqualFold(t.Header.Typ, "dpop+jwt") {
		return nil, badProof("typ is not dpop+jwt")
	}
	key, err := jose.ProofKey(t)
	switch {
	case err == nil:
	case errors.Is(err, jose.ErrAlgorithm):
		return nil, badProof("signature algorithm not accepted")
	case errors.Is(err, jose.ErrMalformed):
		return nil, badProof("no usable public jwk")
	case errors.Is(err, jose.ErrCritical):
		return nil, badProof("critical header not understood")
	default:
		return nil, badProof("bad signature")
	}
	p := &proof{key: key}
	if err := json.Unmarshal(t.Payload, &p.claims); err != nil {
		return nil, badProof("malformed claims")
	}
	cs := &p.claims
	switch {
	case cs.JTI == nil || *cs.JTI == "" || len(*cs.JTI) > maxJTIBytes:
		return nil, badProof("no jti")
	case cs.HTM == nil:
		return nil, badProof("no htm")
	case cs.HTU == nil:
		return nil, badProof("no htu")
	case cs.IAT == nil:
		return nil, badProof("no iat")
	}
	return p, nil
}

// htuMatches: the proof's htu, without query and fragment, is the URI of
// this request at this resource's origin (RFC 9449 section 4.3 step 9,
// compared after RFC 3986 syntax- and scheme-based normalization, as the
// RFC has servers do). The origin is Options.Resource's, never the
// request's Host header: a proof made for another server must not pass
// here by a request that names that server. The path is the request's,
// or the resource's own (a proxy in front may have rewritten it).
func (g *Guard) htuMatches(htu string, r *http.Request) bool {
	origin, path, ok := normalizeURI(htu)
	if !ok || origin != g.htuOrigin {
		return false
	}
	if path == g.htuPath {
		return true
	}
	rp, ok := normalizePath(r.URL.EscapedPath())
	return ok && path == rp
}

// normalizeURI is an absolute http(s) URI's origin (scheme, host, port)
// and path in normal form (RFC 3986 section 6.2.2 and 6.2.3): scheme and
// host in lower case, no default port, percent-encoding normalized, dot
// segments removed, an empty path "/"; query and fragment dropped.
func normalizeURI(raw string) (origin, path string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" || u.User != nil {
		return "", "", false
	}
	if origin, ok = normalizeOrigin(u); !ok {
		return "", "", false
	}
	if path, ok = normalizePath(u.EscapedPath()); !ok {
		return "", "", false
	}
	return origin, path, true
}

func normalizeOrigin(u *url.URL) (string, bool) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// normalizePath normalizes an escaped path: %XX in upper case, decoded
// where it encodes an unreserved character, and "." and ".." segments
// removed (RFC 3986 section 5.2.4); "" is "/".
func normalizePath(p string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
			return "", false
		}
		v := unhex(p[i+1])<<4 | unhex(p[i+2])
		if unreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteByte(upper(p[i+1]))
			b.WriteByte(upper(p[i+2]))
		}
		i += 2
	}
	return removeDotSegments(b.String()), true
}

func removeDotSegments(p string) string {
	if p == "" {
		return "/"
	}
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// jtiCache remembers the proofs seen (by a hash of their key and jti) for
// as long as they could be accepted, so that each is accepted once (RFC
// 9449 section 11.1). Two generations, each lasting period (the span
// over which one proof's iat is acceptable): an entry lives at least one
// period and at most two, and nothing is scanned. Each generation holds
// at most max/2: when the current one is full, proofs are refused (with
// 503) rather than forgotten early, which would let one be replayed.
type jtiCache struct {
	mu        sync.Mutex
	cur, prev map[tokenKey]struct{}
	since     time.Time
	period    time.Duration
	max       int
}

func newJTICache(size int, period time.Duration) *jtiCache {
	return &jtiCache{cur: map[tokenKey]struct{}{}, prev: map[tokenKey]struct{}{}, period: period, max: max(size/2, 1)}
}

func (c *jtiCache) add(k tokenKey, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := now.Sub(c.since); d >= c.period {
		if d >= 2*c.period {
			clear(c.prev)
		} else {
			c.prev = c.cur
		}
		c.cur = make(map[tokenKey]struct{}, len(c.prev))
		c.since = now
	}
	if _, ok := c.cur[k]; ok {
		return badProof("proof replayed (jti seen before)")
	}
	if _, ok := c.prev[k]; ok {
		return badProof("proof replayed (jti seen before)")
	}
	if len(c.cur) >= c.max {
		return errReplayFull
	}
	c.cur[k] = struct{}{}
	return nil
}

// nonceSource makes and checks the DPoP nonces of RFC 9449 section 9
// without state: a nonce is a time step and its HMAC under a key of this
// process, valid in its step and the next (so from lifetime to twice
// that). A replica behind the same load balancer does not know another's
// nonces: its client is asked for one again (use_dpop_nonce), once.
type nonceSource struct {
	key  [32]byte
	step int64 // seconds
	cur  atomic.Pointer[nonceAt]
}

type nonceAt struct {
	step  int64
	nonce string
}

func newNonceSource(lifetime time.Duration) *nonceSource {
	n := &nonceSource{step: max(int64(lifetime/time.Second), 1)}
	if _, err := rand.Read(n.key[:]); err != nil {
		panic("resourceserver: crypto/rand: " + err.Error())
	}
	return n
}

func (n *nonceSource) make(step int64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step))
	m := hmac.New(sha256.New, n.key[:])
	m.Write(msg[:])
	return b64.EncodeToString(append(msg[:], m.Sum(nil)[:16]...))
}

// current is the nonce to hand out now.
func (n *nonceSource) current(now time.Time) string {
	step := now.Unix() / n.step
	if c := n.cur.Load(); c != nil && c.step == step {
		return c.nonce
	}
	c := &nonceAt{step: step, nonce: n.make(step)}
	n.cur.Store(c)
	return c.nonce
}

// valid: s is a nonce of this step or the one before.
func (n *nonceSource) valid(s string, now time.Time) bool {
	raw, err := b64.DecodeString(s)
	if err != nil || len(raw) != 24 {
		return false
	}
	step := int64(binary.BigEndian.Uint64(raw[:8]))
	cur := now.Unix() / n.step
	if step != cur && step != cur-1 {
		return false
	}
	return hmac.Equal([]byte(n.make(step)), []byte(s))
}
