package sessionactor

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/trace"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// A call's outcome is settled once. pending → claimed (by whoever answers:
// the handler, the deadline, the drain) → delivered (its bytes are queued at
// the writer); or pending → cancelled (no response at all).
const (
	statePending int32 = iota
	stateClaimed
	stateDelivered
	stateCancelled
)

// env is what a call needs to answer from any goroutine. It is immutable
// after the session starts.
type env struct {
	engine     *actor.Engine
	writer     *supervisor.Inbox
	deliver    func(wire.Out)    // in place of writer, when set (Config.Deliver)
	inbox      *supervisor.Inbox // the session's own
	backlog    *wire.Backlog
	slots      slots
	load       *session.Overload // in flight and queued across sessions (nil: not counted)
	waits      waits
	logger     *slog.Logger
	serverInfo []byte // the Implementation, marshalled once
	cacheTTL   int64  // ms
	stateKey   []byte // signs 2026-07-28 requestState
	tracer     *trace.Tracer
	asks       asks // legacy server-to-client requests in flight
	// written is backlog.Done as a func value, made once: a method value
	// made per response would be an allocation per request.
	written func()
}

func (e *env) out(b []byte, done func()) {
	e.emit(&wire.Out{Data: b, Done: done})
}

// emit sends one outgoing message to the writer, or hands it to deliver.
func (e *env) emit(m *wire.Out) {
	if e.deliver != nil {
		e.deliver(*m)
		return
	}
	e.writer.Send(m)
}

// post sends the session a message, from any goroutine.
func (e *env) post(msg any) { e.inbox.Send(msg) }

// slots bound the requests being worked on. The session takes one when it
// hands a request to a handler (only the session takes them, so a load and
// an add cannot overshoot) and the request gives it back when its answer is
// queued or it is cancelled, on whatever goroutine that happens. Requests
// past the bound wait in the session (parked), and past MaxQueued are
// refused: the reader never waits for a slot (see wire.Backlog).
type slots struct {
	busy atomic.Int32
	max  int32
	// parked: requests wait for a slot, so a freed one must wake the
	// session; woken: a slotFreed is already on its way.
	parked atomic.Bool
	woken  atomic.Bool
}

// slotFreed tells the session that a slot was given back while requests
// were parked.
type slotFreed struct{}

// take is for the session goroutine only.
func (e *env) takeSlot() bool {
	if e.slots.busy.Load() >= e.slots.max {
		return false
	}
	e.slots.busy.Add(1)
	e.countInFlight(1)
	return true
}

// countInFlight adds d to the requests in flight across sessions
// (Config.Overload): an atomic add, no allocation.
func (e *env) countInFlight(d int64) {
	if e.load != nil {
		e.load.InFlight.Add(d)
	}
}

// countQueued adds d to the requests parked across sessions.
func (e *env) countQueued(d int64) {
	if e.load != nil {
		e.load.Queued.Add(d)
	}
}

func (e *env) releaseSlot() {
	e.slots.busy.Add(-1)
	e.countInFlight(-1)
	if e.slots.parked.Load() && e.slots.woken.CompareAndSwap(false, true) {
		e.inbox.Send(slotFreed{})
	}
}

// waits bound the requests of methods that wait for long
// (handlers.Method.Waits) apart from the slots: such a request takes a
// place here while there is one, and a slot otherwise. Nothing waits for
// a place: the session takes them (one goroutine, so a load and an add
// cannot overshoot) and they are given back from anywhere.
type waits struct {
	busy atomic.Int32
	max  int32
}

// takeWait is for the session goroutine only.
func (e *env) takeWait() bool {
	if e.waits.busy.Load() >= e.waits.max {
		return false
	}
	e.waits.busy.Add(1)
	e.countInFlight(1)
	return true
}

func (e *env) releaseWait() {
	e.waits.busy.Add(-1)
	e.countInFlight(-1)
}

// hold is what a line's answer has to give back.
type hold uint8

const (
	// holdLine: the reader's unit of backlog for the line, given back when
	// the line's answer is written, or at once when none is due. Lines the
	// session answers itself keep it.
	holdLine hold = iota
	// holdSlot: a slot; the line's unit was given back when the request
	// went to a handler. The answer takes a unit of backlog of its own
	// until it is written.
	holdSlot
	// holdNothing: a request parked for a slot. Its answer, if it gets one
	// before it runs (a deadline, a drain), takes a unit as holdSlot does.
	holdNothing
	// holdWait: a place among the waiting requests (waits) rather than a
	// slot; otherwise as holdSlot.
	holdWait
)

// ticket is how one input message is answered: alone or as one part of a
// batch (the batch's message holds the unit for all of its parts).
type ticket struct {
	env   *env
	batch *batch
	hold  hold
	// in is the transport's message (a batch's parts share the batch's):
	// its Reply, Key and Values. Nil for a stdio line. A pointer, not the
	// three, because a ticket lives in every call.
	in *In
}

// to is what takes the response and what is sent for the request
// (In.Reply); nil: the session's sink.
func (t ticket) to() Replier {
	if t.in == nil {
		return nil
	}
	return t.in.Reply
}

// caller is who the transport vouched the request comes from (In.Values,
// handlers.WithCaller), nil for a stdio line or a transport that vouched
// for no one.
func (t ticket) caller() *handlers.Caller {
	if t.in == nil || t.in.Values == nil {
		return nil
	}
	return handlers.CallerFrom(t.in.Values)
}

// keyOf is the key of the request with the given id: In.Key, or the id
// (always, for a batch's parts).
func (t ticket) keyOf(id []byte) string {
	if t.in != nil && t.in.Key != "" && t.batch == nil {
		return t.in.Key
	}
	return string(id)
}

// answer sends the line's (or batch part's) one response, a result.
func (t ticket) answer(b []byte) { t.answerIn(wire.Out{Data: b}, nil, Outcome{}) }

// answerAs is answer with what the transport is to learn of it (an
// initialize's negotiated version).
func (t ticket) answerAs(b []byte, o Outcome) { t.answerIn(wire.Out{Data: b}, nil, o) }

// answerError sends the line's (or batch part's) one response, an error.
func (t ticket) answerError(id []byte, e *jsonrpc.Error) {
	t.answerIn(wire.Out{Data: jsonrpc.AppendError(nil, id, e)}, nil, outcomeOf(e))
}

// refuse is answerError for a request that is malformed as a whole, or
// that its transport refused (In.Refuse): a 400 over HTTP, whatever the
// code.
func (t ticket) refuse(id []byte, e *jsonrpc.Error) {
	o := outcomeOf(e)
	o.Status = statusBadRequest
	t.answerIn(wire.Out{Data: jsonrpc.AppendError(nil, id, e)}, nil, o)
}

// modern reports whether the transport said the request is of 2026-07-28
// (In.Modern).
func (t ticket) modern() bool { return t.in != nil && t.in.Modern && t.batch == nil }

// outcomeOf is the Outcome of an error response.
func outcomeOf(e *jsonrpc.Error) Outcome {
	o := Outcome{Code: e.Code}
	switch d := e.Data.(type) {
	case map[string]string:
		o.Scope = d["scope"]
	case map[string]any:
		o.Scope, _ = d["scope"].(string)
	}
	return o
}

// HTTP statuses an Outcome names, as numbers: the session has no use for
// net/http otherwise.
const (
	statusOK                 = 200
	statusBadRequest         = 400
	statusNotFound           = 404
	statusServiceUnavailable = 503
)

// statusOf is the HTTP status of a response whose JSON-RPC error code is
// code (0: a result): errors that the specification (2026-07-28) or a
// bound gives a status get it.
func statusOf(code int, modern bool) int {
	switch {
	case code == 0:
		return statusOK
	case code == jsonrpc.CodeServerBusy:
		return statusServiceUnavailable
	case !modern:
		return statusOK
	case code == jsonrpc.CodeMethodNotFound:
		return statusNotFound
	case code == jsonrpc.CodeHeaderMismatch, code == jsonrpc.CodeMissingClientCapability, code == jsonrpc.CodeUnsupportedProtocolVersion:
		return statusBadRequest
	}
	return statusOK
}

// notify sends a message on the request's behalf: to its Replier, or to
// the session's sink.
func (t ticket) notify(b []byte) {
	if to := t.to(); to != nil {
		to.Notify(wire.Out{Data: b})
		return
	}
	t.env.emit(&wire.Out{Data: b})
}

// answerIn is answer for a response m, which may carry its text apart
// (never in a batch: see call.encode), with a place for the writer's
// message that outlives the send, so that the message is not boxed anew:
// the writer takes a pointer to it. A call answers once, so its own slot
// is never reused.
func (t ticket) answerIn(m wire.Out, slot *wire.Out, o Outcome) {
	switch {
	case t.batch != nil:
		t.batch.add(m.Data, o.Code)
		return
	case t.in != nil && t.in.Reply != nil:
		t.release()
		m.Done = t.env.written
		if o.Status == 0 {
			o.Status = statusOf(o.Code, t.in.Modern)
		}
		t.in.Reply.Respond(m, o)
		return
	case slot == nil:
		slot = &wire.Out{}
	}
	*slot = m
	t.release()
	slot.Done = t.env.written
	t.env.emit(slot)
}

// release gives back what the ticket holds as its answer goes out, which
// takes a unit of backlog until it is written.
func (t ticket) release() {
	switch t.hold {
	case holdSlot:
		t.env.releaseSlot()
		t.env.backlog.Add(1)
	case holdWait:
		t.env.releaseWait()
		t.env.backlog.Add(1)
	case holdNothing:
		t.env.backlog.Add(1)
	}
}

// none records that no response is due (a notification, a cancelled request).
func (t ticket) none() {
	switch {
	case t.batch != nil:
		t.batch.add(nil, 0)
	case t.hold == holdLine:
		t.env.backlog.Done()
	case t.hold == holdSlot:
		t.env.releaseSlot()
	case t.hold == holdWait:
		t.env.releaseWait()
	}
}

// batch collects the responses of a JSON-RPC batch (2025-03-26) and writes
// them as one array once every part is settled.
type batch struct {
	env   *env
	to    Replier // the batch's (In.Reply); nil: the session's sink
	mu    sync.Mutex
	parts [][]byte
	code  int // the first error part's code
	left  int
}

func (b *batch) add(p []byte, code int) {
	b.mu.Lock()
	if p != nil {
		b.parts = append(b.parts, p)
		if b.code == 0 {
			b.code = code
		}
	}
	b.left--
	last := b.left == 0
	b.mu.Unlock()
	if !last {
		return
	}
	if len(b.parts) == 0 {
		b.env.backlog.Done()
		return
	}
	out := []byte{'['}
	for i, p := range b.parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	out = append(out, ']')
	if b.to != nil {
		b.to.Respond(wire.Out{Data: out, Done: b.env.written}, Outcome{Code: b.code, Status: statusOf(b.code, false)})
		return
	}
	b.env.out(out, b.env.written)
}

// call is one request handed to a handler actor.
type call struct {
	key    string
	id     json.RawMessage
	env    *env
	ticket ticket
	modern bool
	// large: its request (or the batch it came in) is largeRequest or
	// more; the worker then wakes the session when the call is done.
	large  bool
	cache  cacheScope
	method string

	state  atomic.Int32
	cx     callCtx             // the handler's context
	run    handlers.MethodFunc // the method's Run, which a worker calls
	req    handlers.Request
	worker *worker    // set once a worker runs it; session goroutine only
	dl     int        // its entry in dlq, plus one (0: none); session goroutine only
	dlq    *deadlines // the deadline queue it is in; session goroutine only
	// startTimeout is a timeout set while Start runs (see scheduler.startCall), in
	// nanoseconds.
	startTimeout atomic.Int64
	inStart      atomic.Bool
	// start is the method's Start, until it has been tried; deferred says
	// that a Start took the call, so its Reply tells the session the call
	// is over (no worker will). Both belong to the session goroutine until
	// Start takes the call.
	start    handlers.StartFunc
	deferred bool

	// mu orders what is sent for the call: a notification sent under it
	// while the call is pending reaches the writer before the response,
	// and none is sent after. It also guards timer.
	mu    sync.Mutex
	timer *time.Timer
	out   wire.Out // the response, as the writer takes it
}

// cancel cancels the handler's context. Safe from any goroutine, and more
// than once.
func (cl *call) cancel() { cl.cx.cancel() }

// settle moves a pending call to state `to` and, when it gets there first,
// sends m (none when cancelled). Runs on any goroutine.
func (cl *call) settle(to int32, m wire.Out, o Outcome) bool {
	return cl.settleTool(to, m, o, false)
}

// settleTool is settle for a tool's result, which may have isError (for
// the call's span: the span lives in cx, and the call's size stays in its
// allocation class).
func (cl *call) settleTool(to int32, m wire.Out, o Outcome, isError bool) bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if !cl.state.CompareAndSwap(statePending, to) {
		return false // answered, timed out, cancelled or drained first
	}
	if cl.timer != nil {
		cl.timer.Stop()
	}
	if cl.cx.span != nil {
		cl.endSpan(to, m, o, isError)
	}
	if to == stateCancelled {
		cl.ticket.none()
		return true
	}
	cl.ticket.answerIn(m, &cl.out, o)
	cl.state.Store(stateDelivered)
	return true
}

// endSpan ends the call's span as it is answered (or cancelled by the
// client: error.type cancelled, no status code).
func (cl *call) endSpan(to int32, m wire.Out, o Outcome, isError bool) {
	sp := cl.cx.span
	sp.Params, sp.Response = cl.req.Params, m.Data
	if to == stateCancelled {
		sp.SetError("cancelled")
	} else {
		trace.Outcome(sp, o.Code, isError)
	}
	cl.env.tracer.End(sp, time.Now())
}

// Reply implements handlers.Deferred: the handler's answer. It runs on the
// worker's goroutine, or on whichever one a Start's request answers from.
func (cl *call) Reply(result any, err error) {
	if cl.state.Load() == statePending { // else spare the encoding of an answer nobody wants
		isError := false
		if cl.cx.span != nil && err == nil {
			r, ok := result.(*mcp.CallToolResult)
			isError = ok && r.IsError
		}
		out, o := cl.encode(result, err)
		cl.settleTool(stateClaimed, out, o, isError)
	}
	// The handler has returned: whatever it left running on its context
	// stops now, not when the session next hears from the worker.
	cl.cancel()
	if cl.deferred {
		// Posted, not sent: the session forgets the call with its next
		// message rather than wake for it (see scheduler.endBatch).
		cl.env.inbox.Post(deferredDone{cl})
	}
}

// Fallback implements handlers.Deferred: the call goes to a worker after
// all.
func (cl *call) Fallback() { cl.env.post(fallback{cl}) }

// Messages about calls a Start took (see scheduler.startCall).
type (
	deferredDone struct{ cl *call } // answered
	fallback     struct{ cl *call } // handed back, for a worker
)

// fail answers the call with a protocol error if nothing else has. It
// reports whether it did.
func (cl *call) fail(e *jsonrpc.Error) bool {
	if !cl.settle(stateClaimed, wire.Out{Data: jsonrpc.AppendError(nil, cl.id, e)}, outcomeOf(e)) {
		return false
	}
	cl.cancel()
	return true
}

// startTimer arms (or re-arms) the call's deadline, d from now.
func (cl *call) startTimer(d time.Duration) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.state.Load() != statePending {
		return
	}
	if cl.timer != nil {
		cl.timer.Stop()
	}
	cl.timer = time.AfterFunc(d, func() { cl.expire(d) })
}

// expire runs on the timer's goroutine when the deadline passes.
func (cl *call) expire(d time.Duration) {
	if cl.fail(timedOut(d)) {
		cl.env.post(settled{})
	}
}

// Notify implements handlers.Peer: a notification tied to the call, sent
// only while the call is pending.
func (cl *call) Notify(method string, params any) bool {
	if cl.state.Load() != statePending {
		return false
	}
	b, err := encodeNotification(method, params)
	if err != nil {
		cl.env.logger.Error("notification params do not marshal", "method", method, "err", err)
		return false
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.state.Load() != statePending {
		return false
	}
	cl.ticket.notify(b)
	return true
}

// SetTimeout implements handlers.Peer.
func (cl *call) SetTimeout(d time.Duration) {
	switch {
	case d <= 0:
	case cl.inStart.Load():
		cl.startTimeout.Store(int64(d)) // startCall queues it
	default:
		cl.startTimer(d)
	}
}

// settled tells the session that a call was answered off its goroutine.
type settled struct{}

// encode makes the call's response. A legacy tool result of one long
// text block that needs no escaping keeps that text apart (wire.Out.Text);
// anything else comes whole, from encodeWhole.
func (cl *call) encode(result any, err error) (wire.Out, Outcome) {
	if err != nil || cl.modern {
		b, o := cl.encodeWhole(result, err)
		return wire.Out{Data: b}, o
	}
	// Legacy results go straight into the response: no copy of the result.
	out := append(make([]byte, 0, 256), `{"jsonrpc":"2.0","id":`...)
	out = append(out, cl.id...)
	out = append(out, `,"result":`...)
	if p, ok := result.(partsAppender); ok && cl.ticket.batch == nil {
		if head, text, tail, ok := p.AppendJSONParts(out, textApart); ok {
			return wire.Out{Data: head, Text: text, Tail: append(tail, '}')}, Outcome{}
		}
	}
	at := len(out)
	out, merr := appendJSON(out, result)
	if merr != nil || len(out) == at || out[at] != '{' {
		return wire.Out{Data: cl.badResult(merr)}, Outcome{Code: jsonrpc.CodeInternalError}
	}
	return wire.Out{Data: append(out, '}')}, Outcome{}
}

// textApart is the size from which a tool's one text block is sent apart
// from the rest of the response (wire.Out.Text): the writer then sends
// the handler's string itself, and a megabyte echoed costs one buffer of
// that size fewer. Below it, a copy is cheaper than the extra writes.
const textApart = 64 << 10

// partsAppender is a result that can leave its text out of the bytes it
// appends (mcp.CallToolResult).
type partsAppender interface {
	AppendJSONParts(dst []byte, min int) (head []byte, text string, tail []byte, ok bool)
}

// encodeWhole makes an error response, or a 2026-07-28 result.
func (cl *call) encodeWhole(result any, err error) ([]byte, Outcome) {
	if err != nil && cl.modern && isInputRequired(err) {
		if raw, ok := cl.inputRequired(&cl.req); ok {
			return cl.env.modernResponse(cl.id, raw, noCache), Outcome{}
		}
	}
	if err != nil {
		var je *jsonrpc.Error
		var ce *handlers.CapabilityError
		switch {
		case errors.As(err, &je):
		case errors.As(err, &ce) && cl.modern:
			je = ce.RPCError()
		case errors.As(err, &ce):
			je = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: the client did not declare the " + strconv.Quote(ce.Capability) + " capability this request needs"}
		default:
			// Not meant for the client: log it, send a generic message.
			cl.env.logger.Error("handler error", "method", cl.method, "id", string(cl.id), "err", err)
			je = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
		}
		return jsonrpc.AppendError(nil, cl.id, je), outcomeOf(je)
	}
	sp := resultScratch.Get().(*[]byte)
	raw, merr := appendJSON((*sp)[:0], result)
	defer func() {
		if cap(raw) <= 64<<10 { // a large one is not kept
			*sp = raw[:0]
			resultScratch.Put(sp)
		}
	}()
	if merr != nil || len(raw) == 0 || raw[0] != '{' {
		return cl.badResult(merr), Outcome{Code: jsonrpc.CodeInternalError}
	}
	return cl.env.modernResponse(cl.id, raw, cl.cache), Outcome{}
}

// badResult answers for a handler whose result is not a JSON object.
func (cl *call) badResult(err error) []byte {
	cl.env.logger.Error("handler result is not a JSON object", "method", cl.method, "err", err)
	return jsonrpc.AppendError(nil, cl.id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"})
}

// appendJSON appends result as JSON, through its own encoder if it has one.
func appendJSON(dst []byte, result any) ([]byte, error) {
	if a, ok := result.(appender); ok {
		return a.AppendJSON(dst)
	}
	b, err := json.Marshal(result)
	return append(dst, b...), err
}

// appender is a result that encodes itself faster than encoding/json
// would, with the same bytes (mcp.CallToolResult).
type appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// cacheScope says whether a 2026-07-28 result is cacheable, and by whom.
type cacheScope uint8

const (
	noCache      cacheScope = iota
	cachePublic             // by anyone
	cachePrivate            // by its caller only: the result may depend on who asked
)

// cacheOf is the scope of a method's results (handlers.Method.Cacheable)
// for a request that has a caller or not: an authenticated caller's lists
// and reads may be its own (handlers.Access, or a handler that looks at
// Request.Caller), so no one else may be served them from a cache.
func cacheOf(cacheable, caller bool) cacheScope {
	switch {
	case !cacheable:
		return noCache
	case caller:
		return cachePrivate
	}
	return cachePublic
}

// json is the scope as a JSON string.
func (c cacheScope) json() string {
	if c == cachePrivate {
		return `"private"`
	}
	return `"public"`
}

// modernResponse is the response to request id of a 2026-07-28 result
// raw, a JSON object, in one buffer: with what 2026-07-28 requires of
// every result (resultType), of cacheable ones (ttlMs, cacheScope) and
// what it recommends (_meta serverInfo).
func (e *env) modernResponse(id json.RawMessage, raw []byte, cache cacheScope) []byte {
	out := make([]byte, 0, len(raw)+len(e.serverInfo)+len(id)+160)
	out = jsonrpc.AppendResult(out, id, nil)
	out = e.appendModernResult(out[:len(out)-1], raw, cache) // the result in place of AppendResult's closing brace
	return append(out, '}')
}

// appendModernResult appends raw with modernResponse's members to dst.
func (e *env) appendModernResult(dst, raw []byte, cache cacheScope) []byte {
	if bytes.Contains(raw, []byte(`"_meta"`)) || bytes.Contains(raw, []byte(`"resultType"`)) {
		return append(dst, e.modernResultMerge(raw, cache)...)
	}
	dst = append(dst, `{"resultType":"complete",`...)
	if cache != noCache {
		dst = append(dst, `"ttlMs":`...)
		dst = strconv.AppendInt(dst, e.cacheTTL, 10)
		dst = append(dst, `,"cacheScope":`...)
		dst = append(dst, cache.json()...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"_meta":{"`+metaServerInfo+`":`...)
	dst = append(dst, e.serverInfo...)
	dst = append(dst, '}')
	if body := bytes.TrimSpace(raw[1:]); len(body) > 1 { // not just "}"
		dst = append(dst, ',')
		dst = append(dst, body...)
	} else {
		dst = append(dst, '}')
	}
	return dst
}

// resultScratch recycles the buffers a result is encoded into before it is
// copied into its 2026-07-28 response.
var resultScratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// modernResultMerge is the slow path for results that set _meta or
// resultType themselves: their keys are kept, ours are added.
func (e *env) modernResultMerge(raw []byte, cache cacheScope) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return raw
	}
	if _, ok := obj["resultType"]; !ok {
		obj["resultType"] = json.RawMessage(`"complete"`)
	}
	if cache != noCache {
		if _, ok := obj["ttlMs"]; !ok {
			obj["ttlMs"] = json.RawMessage(strconv.FormatInt(e.cacheTTL, 10))
		}
		if _, ok := obj["cacheScope"]; !ok {
			obj["cacheScope"] = json.RawMessage(cache.json())
		}
	}
	var meta map[string]json.RawMessage
	if m, ok := obj["_meta"]; ok {
		_ = json.Unmarshal(m, &meta)
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	if _, ok := meta[metaServerInfo]; !ok {
		meta[metaServerInfo] = e.serverInfo
	}
	obj["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return out
}
