// Package etcdv3 is a small client of etcd's v3 API through its JSON
// gateway (grpc-gateway: POST /v3/kv/range and the like, keys and values
// in base64, 64-bit integers as strings), over net/http alone: the main
// module takes no etcd client library (and with it gRPC and protobuf).
//
// It does what a task store needs and no more: range, put, delete, txn,
// leases (grant, keep-alive, revoke) and watch (a stream, resumed from the
// next revision after a break). A Client tries its endpoints in turn,
// starting from the last that answered; each attempt has its own timeout.
// https endpoints use the Config's TLS (client certificates included);
// with a user name it authenticates (/v3/auth/authenticate) and sends the
// token, fetching a new one when etcd says it is no longer valid.
package etcdv3

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config configures a Client.
type Config struct {
	// Endpoints are client URLs (http://host:2379, https://…), tried in
	// turn when one does not answer.
	Endpoints []string
	// Timeout bounds each attempt at a request on one endpoint (0: 2 s);
	// the context given bounds the request over all of them.
	Timeout time.Duration
	// TLS configures https endpoints (roots, client certificates); nil:
	// the system's roots.
	TLS *tls.Config
	// Username and Password, when Username is set, authenticate to etcd
	// (its auth enabled). The password is sent to etcd only, never logged
	// nor put in an error.
	Username, Password string
}

// Client talks to an etcd cluster. Safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
	// stream is http without a response timeout, for watches.
	stream *http.Client

	mu    sync.Mutex
	next  int    // the endpoint to try first
	token string // etcd's auth token, when authenticated
}

// New returns a client of the cluster at cfg.Endpoints.
func New(cfg Config) (*Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	for i, ep := range cfg.Endpoints {
		ep = strings.TrimRight(strings.TrimSpace(ep), "/")
		if !strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://") {
			return nil, fmt.Errorf("etcd: endpoint %q: want http://host:port or https://host:port", ep)
		}
		cfg.Endpoints[i] = ep
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	tr := &http.Transport{TLSClientConfig: cfg.TLS, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout}
	str := &http.Transport{TLSClientConfig: cfg.TLS, IdleConnTimeout: 90 * time.Second}
	return &Client{cfg: cfg, http: &http.Client{Transport: tr}, stream: &http.Client{Transport: str}}, nil
}

// Endpoints returns the endpoints, for messages.
func (c *Client) Endpoints() string { return strings.Join(c.cfg.Endpoints, ",") }

// Close releases idle connections.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
	c.stream.CloseIdleConnections()
}

// ErrUnreachable is what a request's error wraps when no endpoint
// answered it in time.
var ErrUnreachable = errors.New("etcd unreachable")

// Error is an error etcd answered with.
type Error struct {
	Code    int    // gRPC code
	Message string // etcd's message
}

func (e *Error) Error() string { return "etcd: " + e.Message }

// gRPC codes the client tells apart.
const (
	codeNotFound         = 5
	codeDeadlineExceeded = 4
	codeUnavailable      = 14
	codeUnauthenticated  = 16
	codeInvalidArgument  = 3
)

// retryable reports whether an error etcd answered with may pass on
// another member or a moment later (no leader, a timeout inside etcd).
func retryable(code int) bool { return code == codeUnavailable || code == codeDeadlineExceeded }

// IsLeaseNotFound reports whether err says a lease does not exist (it
// expired, or was revoked).
func IsLeaseNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == codeNotFound && strings.Contains(e.Message, "lease not found")
}

// call posts body to path on one endpoint after another, from the last
// that answered, until one answers; into receives the JSON answer.
func (c *Client) call(ctx context.Context, path string, body, into any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	// Each endpoint in turn, from the last that answered; again after a
	// pause while ctx has time left (a member down, a leader election:
	// another answers shortly). Without a deadline, one round.
	_, bounded := ctx.Deadline()
	var last error
	n := len(c.cfg.Endpoints)
	pause := 50 * time.Millisecond
	for {
		c.mu.Lock()
		start := c.next
		c.mu.Unlock()
		for i := range n {
			k := (start + i) % n
			err := c.callOne(ctx, c.cfg.Endpoints[k], path, raw, into, true)
			if err == nil {
				if k != start {
					c.mu.Lock()
					c.next = k
					c.mu.Unlock()
				}
				return nil
			}
			var e *Error
			if errors.As(err, &e) && !retryable(e.Code) {
				return err // etcd answered: another member would say the same
			}
			last = err
			if ctx.Err() != nil {
				break
			}
		}
		if !bounded || ctx.Err() != nil {
			break
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		pause = min(2*pause, 500*time.Millisecond)
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("%w (%s): %w", ErrUnreachable, c.Endpoints(), last)
}

// callOne is one attempt on one endpoint; reauth allows one new token.
func (c *Client) callOne(ctx context.Context, ep, path string, raw []byte, into any, reauth bool) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := c.request(ctx, ep, path, raw)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s%s: %w", ep, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("%s%s: %w", ep, path, err)
	}
	if e := decodeError(resp.StatusCode, b); e != nil {
		if e.Code == codeUnauthenticated && reauth && c.cfg.Username != "" {
			c.mu.Lock()
			c.token = ""
			c.mu.Unlock()
			return c.callOne(ctx, ep, path, raw, into, false)
		}
		return e
	}
	if into == nil {
		return nil
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s%s: undecodable answer: %w", ep, path, err)
	}
	return nil
}

// dropTokenIf forgets the auth token when e says etcd no longer takes it
// (the next request authenticates again), and returns e.
func (c *Client) dropTokenIf(e *Error) error {
	if e == nil {
		return nil
	}
	if e.Code == codeUnauthenticated {
		c.mu.Lock()
		c.token = ""
		c.mu.Unlock()
	}
	return e
}

// request makes a POST of raw to ep+path, authenticated when configured.
func (c *Client) request(ctx context.Context, ep, path string, raw []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.Username != "" {
		tok, err := c.authToken(ctx, ep)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", tok)
	}
	return req, nil
}

// authToken returns the token, authenticating on ep for a new one.
func (c *Client) authToken(ctx context.Context, ep string) (string, error) {
	c.mu.Lock()
	tok := c.token
	c.mu.Unlock()
	if tok != "" {
		return tok, nil
	}
	raw, _ := json.Marshal(map[string]string{"name": c.cfg.Username, "password": c.cfg.Password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep+"/v3/auth/authenticate", bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s/v3/auth/authenticate: %w", ep, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if e := decodeError(resp.StatusCode, b); e != nil {
		return "", fmt.Errorf("etcd: authenticating as %q: %w", c.cfg.Username, e)
	}
	var out struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Token == "" {
		return "", fmt.Errorf("etcd: authenticating as %q: no token in the answer", c.cfg.Username)
	}
	c.mu.Lock()
	c.token = out.Token
	c.mu.Unlock()
	return out.Token, nil
}

// decodeError returns etcd's error in b, or nil when b is no error.
func decodeError(status int, b []byte) *Error {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
	if json.Unmarshal(b, &e) == nil && (e.Error != "" || e.Message != "") {
		msg := e.Message
		if msg == "" {
			msg = e.Error
		}
		return &Error{Code: e.Code, Message: msg}
	}
	if status/100 != 2 {
		code := 0
		if status >= 500 {
			code = codeUnavailable
		}
		return &Error{Code: code, Message: fmt.Sprintf("HTTP %d: %.200s", status, b)}
	}
	return nil
}

// KV is a key and its value, as etcd keeps it.
type KV struct {
	Key, Value                           []byte
	CreateRevision, ModRevision, Version int64
	Lease                                int64
}

// wire forms: base64 bytes, int64 as strings.
type wireKV struct {
	Key            []byte `json:"key"`
	Value          []byte `json:"value"`
	CreateRevision int64  `json:"create_revision,string"`
	ModRevision    int64  `json:"mod_revision,string"`
	Version        int64  `json:"version,string"`
	Lease          int64  `json:"lease,string"`
}

func (w wireKV) kv() KV {
	return KV{Key: w.Key, Value: w.Value, CreateRevision: w.CreateRevision, ModRevision: w.ModRevision, Version: w.Version, Lease: w.Lease}
}

type header struct {
	Revision int64 `json:"revision,string"`
}

type rangeResp struct {
	Header header   `json:"header"`
	KVs    []wireKV `json:"kvs"`
	More   bool     `json:"more"`
}

func kvs(w []wireKV) []KV {
	out := make([]KV, len(w))
	for i := range w {
		out[i] = w[i].kv()
	}
	return out
}

// PrefixEnd is the range end that makes a range of every key starting
// with prefix.
func PrefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0} // every key
}

// Range returns the keys in [key, end) (end nil: key alone) and the
// store's revision.
func (c *Client) Range(ctx context.Context, key, end []byte) ([]KV, int64, error) {
	var out []KV
	var rev int64
	from := key
	for {
		var r rangeResp
		req := map[string]any{"key": from, "limit": "1000"}
		if end != nil {
			req["range_end"] = end
		}
		if rev != 0 {
			req["revision"] = strconv.FormatInt(rev, 10)
		}
		if err := c.call(ctx, "/v3/kv/range", req, &r); err != nil {
			return nil, 0, err
		}
		if rev == 0 {
			rev = r.Header.Revision
		}
		out = append(out, kvs(r.KVs)...)
		if !r.More || len(r.KVs) == 0 || end == nil {
			return out, rev, nil
		}
		// The next page, at the same revision: a consistent whole.
		from = append(bytes.Clone(r.KVs[len(r.KVs)-1].Key), 0)
	}
}

// Put sets key to value (lease 0: none) and returns the new revision.
func (c *Client) Put(ctx context.Context, key, value []byte, lease int64) (int64, error) {
	var r struct {
		Header header `json:"header"`
	}
	err := c.call(ctx, "/v3/kv/put", putReq(key, value, lease), &r)
	return r.Header.Revision, err
}

func putReq(key, value []byte, lease int64) map[string]any {
	req := map[string]any{"key": key, "value": value}
	if lease != 0 {
		req["lease"] = strconv.FormatInt(lease, 10)
	}
	return req
}

// Delete removes the keys in [key, end) (end nil: key alone).
func (c *Client) Delete(ctx context.Context, key, end []byte) (int64, error) {
	var r struct {
		Header header `json:"header"`
	}
	req := map[string]any{"key": key}
	if end != nil {
		req["range_end"] = end
	}
	err := c.call(ctx, "/v3/kv/deleterange", req, &r)
	return r.Header.Revision, err
}

// Cmp is one comparison of a txn: Target of Key, compared by Result
// ("EQUAL", "GREATER", "LESS", "NOT_EQUAL") with Num (VERSION,
// CREATE_REVISION, MOD_REVISION, LEASE) or Value (VALUE).
type Cmp struct {
	Key    []byte
	Target string
	Result string
	Num    int64
	Value  []byte
}

// VersionIs compares key's version (0: the key does not exist).
func VersionIs(key []byte, v int64) Cmp {
	return Cmp{Key: key, Target: "VERSION", Result: "EQUAL", Num: v}
}

// ModRevisionIs compares key's last modification's revision.
func ModRevisionIs(key []byte, rev int64) Cmp {
	return Cmp{Key: key, Target: "MOD_REVISION", Result: "EQUAL", Num: rev}
}

// LeaseIs compares the lease key is attached to (0: none, or no key).
func LeaseIs(key []byte, lease int64) Cmp {
	return Cmp{Key: key, Target: "LEASE", Result: "EQUAL", Num: lease}
}

func (c Cmp) wire() map[string]any {
	m := map[string]any{"key": c.Key, "target": targetName(c.Target), "result": c.Result}
	n := strconv.FormatInt(c.Num, 10)
	switch c.Target {
	case "VERSION":
		m["version"] = n
	case "CREATE_REVISION":
		m["create_revision"] = n
	case "MOD_REVISION":
		m["mod_revision"] = n
	case "LEASE":
		m["lease"] = n
	case "VALUE":
		m["value"] = c.Value
	}
	return m
}

// Op is one request of a txn: OpPut, OpDelete or OpGet.
type Op struct{ wire map[string]any }

// OpPut puts key (as Put).
func OpPut(key, value []byte, lease int64) Op {
	return Op{map[string]any{"request_put": putReq(key, value, lease)}}
}

// OpDelete deletes [key, end) (end nil: key alone).
func OpDelete(key, end []byte) Op {
	req := map[string]any{"key": key}
	if end != nil {
		req["range_end"] = end
	}
	return Op{map[string]any{"request_delete_range": req}}
}

// OpGet reads key (as Range, without paging).
func OpGet(key []byte) Op { return Op{map[string]any{"request_range": map[string]any{"key": key}}} }

// OpRange reads the keys in [key, end), all of them.
func OpRange(key, end []byte) Op {
	return Op{map[string]any{"request_range": map[string]any{"key": key, "range_end": end}}}
}

// TxnResult is what a txn did: whether its comparisons held (then was
// applied, else els), the revision after it, and the keys each OpGet of
// the applied branch read, in order.
type TxnResult struct {
	Succeeded bool
	Revision  int64
	Gets      [][]KV
}

// Txn applies then if every comparison holds, else els: all of a branch
// or nothing, atomically.
func (c *Client) Txn(ctx context.Context, cmps []Cmp, then, els []Op) (TxnResult, error) {
	wc := make([]map[string]any, len(cmps))
	for i, cmp := range cmps {
		wc[i] = cmp.wire()
	}
	ops := func(os []Op) []map[string]any {
		out := make([]map[string]any, len(os))
		for i, o := range os {
			out[i] = o.wire
		}
		return out
	}
	var r struct {
		Header    header `json:"header"`
		Succeeded bool   `json:"succeeded"`
		Responses []struct {
			Range *rangeResp `json:"response_range"`
		} `json:"responses"`
	}
	req := map[string]any{"compare": wc, "success": ops(then), "failure": ops(els)}
	if err := c.call(ctx, "/v3/kv/txn", req, &r); err != nil {
		return TxnResult{}, err
	}
	res := TxnResult{Succeeded: r.Succeeded, Revision: r.Header.Revision}
	for _, resp := range r.Responses {
		if resp.Range != nil {
			res.Gets = append(res.Gets, kvs(resp.Range.KVs))
		}
	}
	return res, nil
}

// targetName is the wire name of a comparison's target.
func targetName(t string) string {
	switch t {
	case "CREATE_REVISION":
		return "CREATE"
	case "MOD_REVISION":
		return "MOD"
	}
	return t
}

// Grant makes a lease of ttl (whole seconds, at least 1) and returns its
// id.
func (c *Client) Grant(ctx context.Context, ttl time.Duration) (int64, error) {
	secs := max(int64((ttl+time.Second-1)/time.Second), 1)
	var r struct {
		ID  int64 `json:"ID,string"`
		TTL int64 `json:"TTL,string"`
	}
	if err := c.call(ctx, "/v3/lease/grant", map[string]any{"TTL": strconv.FormatInt(secs, 10)}, &r); err != nil {
		return 0, err
	}
	if r.ID == 0 {
		return 0, errors.New("etcd: lease grant answered no lease")
	}
	return r.ID, nil
}

// ErrLeaseGone is KeepAlive's error for a lease that no longer exists.
var ErrLeaseGone = errors.New("etcd: the lease has expired or was revoked")

// KeepAlive renews lease once and returns its ttl from now.
func (c *Client) KeepAlive(ctx context.Context, lease int64) (time.Duration, error) {
	var r struct {
		Result struct {
			TTL int64 `json:"TTL,string"`
		} `json:"result"`
	}
	if err := c.call(ctx, "/v3/lease/keepalive", map[string]any{"ID": strconv.FormatInt(lease, 10)}, &r); err != nil {
		return 0, err
	}
	if r.Result.TTL <= 0 {
		return 0, ErrLeaseGone
	}
	return time.Duration(r.Result.TTL) * time.Second, nil
}

// Revoke ends lease, deleting the keys attached to it.
func (c *Client) Revoke(ctx context.Context, lease int64) error {
	err := c.call(ctx, "/v3/lease/revoke", map[string]any{"ID": strconv.FormatInt(lease, 10)}, nil)
	if IsLeaseNotFound(err) {
		return nil
	}
	return err
}

// Event is one change a watch reports.
type Event struct {
	Delete bool // the key was deleted (or its lease ran out); else put
	KV     KV   // for a delete, the key and the revision alone
}

// ErrCompacted is Watch's error when the revision to resume from was
// compacted away: the caller reads the state afresh (Range) and watches
// from the revision after it.
var ErrCompacted = errors.New("etcd: watch: the revision to resume from was compacted")

// Watch reports every change of the keys in [key, end) from revision
// from on, to each (in order, a batch of one revision or more at a time),
// until ctx ends (nil) or the history it needs was compacted
// (ErrCompacted). A broken stream (a member down) is resumed on the next
// endpoint from the revision after the last one reported; ready, when
// set, is called after each (re)start is accepted.
func (c *Client) Watch(ctx context.Context, key, end []byte, from int64, each func([]Event), ready func()) error {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		next, err := c.watchOnce(ctx, key, end, from, each, ready)
		if errors.Is(err, ErrCompacted) {
			return err
		}
		if next > from {
			from, backoff = next, 50*time.Millisecond
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
		c.mu.Lock()
		c.next = (c.next + 1) % len(c.cfg.Endpoints)
		c.mu.Unlock()
	}
	return nil
}

// watchOnce runs one watch stream on the current endpoint; it returns
// the revision to resume from.
func (c *Client) watchOnce(ctx context.Context, key, end []byte, from int64, each func([]Event), ready func()) (int64, error) {
	c.mu.Lock()
	ep := c.cfg.Endpoints[c.next]
	c.mu.Unlock()
	create := map[string]any{"key": key, "start_revision": strconv.FormatInt(from, 10)}
	if end != nil {
		create["range_end"] = end
	}
	raw, _ := json.Marshal(map[string]any{"create_request": create})
	// etcd's gateway keeps the stream open after the request's body
	// ends. A member killed ends it (the connection closes): the caller
	// resumes on the next endpoint.
	req, err := c.request(ctx, ep, "/v3/watch", raw)
	if err != nil {
		return from, err
	}
	resp, err := c.stream.Do(req)
	if err != nil {
		return from, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return from, c.dropTokenIf(decodeError(resp.StatusCode, b))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	for sc.Scan() {
		var msg struct {
			Result struct {
				Header          header `json:"header"`
				Created         bool   `json:"created"`
				Canceled        bool   `json:"canceled"`
				CompactRevision int64  `json:"compact_revision,string"`
				CancelReason    string `json:"cancel_reason"`
				Events          []struct {
					Type string `json:"type"`
					KV   wireKV `json:"kv"`
				} `json:"events"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			return from, fmt.Errorf("etcd: watch: undecodable message: %w", err)
		}
		if msg.Error != nil {
			return from, c.dropTokenIf(&Error{Code: msg.Error.Code, Message: msg.Error.Message})
		}
		r := msg.Result
		if r.CompactRevision != 0 {
			return from, ErrCompacted
		}
		if r.Canceled {
			return from, fmt.Errorf("etcd: watch cancelled: %s", r.CancelReason)
		}
		if r.Created && ready != nil {
			ready()
		}
		if len(r.Events) == 0 {
			continue
		}
		evs := make([]Event, len(r.Events))
		for i, e := range r.Events {
			evs[i] = Event{Delete: e.Type == "DELETE", KV: e.KV.kv()}
			from = max(from, e.KV.ModRevision+1)
		}
		each(evs)
	}
	if err := sc.Err(); err != nil {
		return from, err
	}
	return from, io.ErrUnexpectedEOF
}
