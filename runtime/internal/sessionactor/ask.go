package sessionactor

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// asks is the table of server-to-client requests (legacy era) waiting for
// their responses. Handlers wait on their own goroutines; the session
// delivers responses from its own. Ids are strings in a space of their own
// ("mcprt-N"), so they cannot collide with the client's.
type asks struct {
	mu      sync.Mutex
	next    int
	waiting map[string]chan askReply
	// roots caches the client's last roots/list result until it sends
	// notifications/roots/list_changed: roots change rarely, and handlers
	// that consult them on every call should not cost a round trip each.
	roots json.RawMessage
}

func (a *asks) cachedRoots() json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.roots
}

func (a *asks) setRoots(r json.RawMessage) {
	a.mu.Lock()
	a.roots = r
	a.mu.Unlock()
}

// forgetRoots runs on notifications/roots/list_changed.
func (a *asks) forgetRoots() { a.setRoots(nil) }

type askReply struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

// answer is the reply as a result and an error (a nil error when the
// client answered with a result, not a nil *jsonrpc.Error in an error).
func (r askReply) answer() (json.RawMessage, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.result, nil
}

func (a *asks) open() (key string, ch chan askReply) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	key = `"mcprt-` + strconv.Itoa(a.next) + `"`
	ch = make(chan askReply, 1)
	if a.waiting == nil {
		a.waiting = map[string]chan askReply{}
	}
	a.waiting[key] = ch
	return key, ch
}

func (a *asks) close(key string) {
	a.mu.Lock()
	delete(a.waiting, key)
	a.mu.Unlock()
}

// deliver hands a response to the request waiting for it. Responses with an
// unknown id are ignored, as JSON-RPC requires.
func (a *asks) deliver(m *jsonrpc.Message) {
	a.mu.Lock()
	ch := a.waiting[string(m.ID)]
	delete(a.waiting, string(m.ID))
	a.mu.Unlock()
	if ch == nil {
		return
	}
	r := askReply{result: m.Result}
	if m.Error != nil {
		r.err = &jsonrpc.Error{}
		if json.Unmarshal(m.Error, r.err) != nil {
			r.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "malformed error from the client"}
		}
	}
	ch <- r
}

// Ask implements handlers.Peer: a request to the client tied to this call,
// sent only while the call is pending; cancelled (notifications/cancelled)
// when ctx ends first.
func (cl *call) Ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if method == "roots/list" {
		if r := cl.env.asks.cachedRoots(); r != nil {
			return r, nil
		}
		r, err := cl.ask(ctx, method, params)
		if err == nil {
			cl.env.asks.setRoots(r)
		}
		return r, err
	}
	return cl.ask(ctx, method, params)
}

func (cl *call) ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	key, ch := cl.env.asks.open()
	defer cl.env.asks.close(key)
	b := []byte(`{"jsonrpc":"2.0","id":` + key + `,"method":`)
	b = jsonrpc.AppendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, raw...)
	}
	b = append(b, '}')
	cl.mu.Lock()
	if cl.state.Load() != statePending {
		cl.mu.Unlock()
		return nil, context.Canceled
	}
	cl.ticket.notify(b)
	cl.mu.Unlock()
	return awaitAnswer(ctx, key, ch, cl.ticket.notify)
}

// awaitAnswer waits for the client's answer to the request key; when ctx
// ends first the client is told, with notifications/cancelled through
// send, that the question no longer stands.
func awaitAnswer(ctx context.Context, key string, ch <-chan askReply, send func([]byte)) (json.RawMessage, error) {
	select {
	case r := <-ch:
		return r.answer()
	case <-ctx.Done():
		select {
		case r := <-ch:
			// Answered as it ended: the answer wins (a task re-asking on
			// another stream must not lose the one it got).
			return r.answer()
		default:
		}
		if n, err := encodeNotification("notifications/cancelled", map[string]any{
			"requestId": json.RawMessage(key), "reason": ctx.Err().Error(),
		}); err == nil {
			send(n)
		}
		return nil, ctx.Err()
	}
}

// requestState is what an input_required result asks the client to echo
// back: the answers gathered so far, bound to the request that asked, to
// who asked it (the caller's principal: a state minted for one subject is
// refused to another, as an unknown one) and to an expiry, and signed,
// because the client (or anyone between) may alter it.
type requestState struct {
	Method  string                     `json:"m"`
	Digest  string                     `json:"d"`           // of the params that matter
	Caller  string                     `json:"p,omitempty"` // handlers.Caller.Principal, "" for nobody
	Expires int64                      `json:"x"`           // unix seconds
	Answers map[string]json.RawMessage `json:"a,omitempty"`
}

// stateTTL bounds how long a client may take to answer an input_required.
const stateTTL = 10 * time.Minute

var errBadState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: requestState is not one this server issued for this request, or it expired"}

// newStateKey returns the per-session HMAC key: states do not survive a
// restart, and need not.
func newStateKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

// paramsDigest identifies a request by its params minus what changes from
// one round to the next.
func paramsDigest(method string, params json.RawMessage) string {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(params, &p)
	delete(p, "_meta")
	delete(p, "inputResponses")
	delete(p, "requestState")
	b, _ := json.Marshal(p) // map keys sorted: a canonical form
	sum := sha256.Sum256(append([]byte(method+"\n"), b...))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (e *env) sign(st *requestState) string {
	body, _ := json.Marshal(st)
	m := hmac.New(sha256.New, e.stateKey)
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (e *env) verify(s string) (*requestState, bool) {
	body64, sig64, ok := strings.Cut(s, ".")
	if !ok {
		return nil, false
	}
	body, err1 := base64.RawURLEncoding.DecodeString(body64)
	sig, err2 := base64.RawURLEncoding.DecodeString(sig64)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	m := hmac.New(sha256.New, e.stateKey)
	m.Write(body)
	if !hmac.Equal(sig, m.Sum(nil)) {
		return nil, false
	}
	var st requestState
	if json.Unmarshal(body, &st) != nil {
		return nil, false
	}
	return &st, true
}

// inputRound reads a 2026-07-28 retry: the client's inputResponses and the
// requestState of the previous round, checked, also against who sends it
// (caller). The answers of all rounds are returned together.
func (s *mcpSession) inputRound(m *jsonrpc.Message, rp *requestParams, caller *handlers.Caller) (map[string]json.RawMessage, *jsonrpc.Error) {
	rawState, rawResp := rp.requestState, rp.inputResponses
	hasState, hasResp := rawState != nil, rawResp != nil
	if !hasState && !hasResp {
		return nil, nil
	}
	answers := map[string]json.RawMessage{}
	if hasState {
		var str string
		if json.Unmarshal(rawState, &str) != nil {
			return nil, errBadState
		}
		st, ok := s.env.verify(str)
		if !ok || st.Method != m.Method || st.Digest != paramsDigest(m.Method, m.Params) ||
			st.Caller != caller.Principal() || time.Now().Unix() > st.Expires {
			return nil, errBadState
		}
		for k, v := range st.Answers {
			answers[k] = v
		}
	}
	if hasResp {
		// An InputResponses object of results, each an object; null is
		// no object (json.Unmarshal would take it as an empty map).
		var resp map[string]json.RawMessage
		if rawResp[0] != '{' || json.Unmarshal(rawResp, &resp) != nil {
			return nil, errInvalidParams("inputResponses must be an object")
		}
		for k, v := range resp {
			if len(v) == 0 || v[0] != '{' {
				return nil, errInvalidParams("inputResponses[" + strconv.Quote(k) + "] must be an object, the result of the request of that key")
			}
			answers[k] = v
		}
	}
	return answers, nil
}

// inputRequired builds the input_required result for a handler that asked
// for input it did not have.
func (cl *call) inputRequired(req *handlers.Request) ([]byte, bool) {
	pending := req.PendingInputs()
	if len(pending) == 0 {
		return nil, false
	}
	st := &requestState{
		Method:  cl.method,
		Digest:  paramsDigest(cl.method, req.Params),
		Caller:  req.Caller.Principal(),
		Expires: time.Now().Add(stateTTL).Unix(),
		Answers: req.InputResponses,
	}
	raw, err := json.Marshal(map[string]any{
		"resultType":    "input_required",
		"inputRequests": pending,
		"requestState":  cl.env.sign(st),
	})
	if err != nil {
		return nil, false
	}
	return raw, true
}

func isInputRequired(err error) bool { return errors.Is(err, mcp.ErrInputRequired) }

// Detach implements handlers' detacher: a Peer for work that outlives the
// call (a task), which sends on the session's own stream rather than the
// call's (which ends with its response). Its messages are dropped once the
// session is gone.
func (cl *call) Detach() handlers.Peer { return &detached{env: cl.env} }

// detached is the session's side of work that outlived its request.
type detached struct{ env *env }

func (d *detached) Notify(method string, params any) bool {
	b, err := encodeNotification(method, params)
	if err != nil {
		d.env.logger.Error("notification params do not marshal", "method", method, "err", err)
		return false
	}
	d.env.out(b, nil)
	return true
}

func (d *detached) SetTimeout(time.Duration) {}

func (d *detached) Ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	key, ch := d.env.asks.open()
	defer d.env.asks.close(key)
	b := []byte(`{"jsonrpc":"2.0","id":` + key + `,"method":`)
	b = jsonrpc.AppendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, raw...)
	}
	d.env.out(append(b, '}'), nil)
	return awaitAnswer(ctx, key, ch, func(n []byte) { d.env.out(n, nil) })
}
