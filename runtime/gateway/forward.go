package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// errTimeout is the cause of a forwarded request's context when the
// backend's Timeout passed.
var errTimeout = errors.New("backend timeout")

// toolMargin is how much longer the gateway's own deadline for a request
// it forwards is than the backend's Timeout, so that the backend's
// timeout is what the client hears about (it names the backend).
const toolMargin = 2 * time.Second

type callKey struct{}

// forwarding is one request on its way to a backend, in one allocation:
// the call the backend tracks, the context forward waits in before the
// request goes out, and the one the request runs in. Deriving contexts for each request (a deadline, a
// cancel, a value), each registered with the client's request's, was a
// dozen allocations and a timer per forwarded call.
type forwarding struct {
	c    call
	wait startWait
	ctx  callContext
	// abandon, closed by c.cancel, takes the backend's side of the call
	// back (client.WithDone): the client must answer a question first.
	abandon chan struct{}
	once    sync.Once
	raw     json.RawMessage // the result
}

func (f *forwarding) cancel() { f.once.Do(func() { close(f.abandon) }) }

// callContext is the context a forwarded request runs in: its base's (the
// client's request, or the start wait when the backend had to be waited
// for), with the call as Value(callKey{}) for askHandler.
type callContext struct {
	context.Context
	c *call
}

func (x *callContext) Value(k any) any {
	if _, ok := k.(callKey); ok {
		return x.c
	}
	return x.Context.Value(k)
}

// startWait is the context forward waits in before the request goes out
// (refreshRoots asking the client for its roots, acquire waiting for the
// backend to start): the client's request, bounded by the backend's
// Timeout. Its timer is only made once something waits (asks for Done,
// Err or Deadline): a backend that is up takes the request at once, and
// the client's timeout queue bounds the request then (client.WithTimeout),
// without a timer of its own.
type startWait struct {
	parent context.Context
	d      time.Duration
	mu     sync.Mutex
	ctx    context.Context // made by the first wait
	cancel context.CancelFunc
	over   bool
}

func (w *startWait) get() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil {
		if w.over {
			return w.parent
		}
		w.ctx, w.cancel = context.WithTimeoutCause(w.parent, w.d, errTimeout)
	}
	return w.ctx
}

func (w *startWait) Deadline() (time.Time, bool) { return w.get().Deadline() }
func (w *startWait) Done() <-chan struct{}       { return w.get().Done() }
func (w *startWait) Err() error                  { return w.get().Err() }
func (w *startWait) Value(k any) any             { return w.parent.Value(k) }

// waited returns the bounded context if acquire waited in it, nil if not.
func (w *startWait) waited() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.over = true
	return w.ctx
}

func (w *startWait) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.over = true
	if w.cancel != nil {
		w.cancel()
	}
}

// progress is what the backend's progress on a request forwarded for req
// does: it goes on to the client, when the client asked for progress, and
// it starts the request's deadline in the gateway's server again, as the
// backend's client does its Timeout (up to MaxTimeout, Options.MaxTimeout),
// so that a long call that reports progress is not cut. nil when the
// backend's progress would do neither.
func (b *backend) progress(req *handlers.Request) func(client.Progress) {
	if !b.extends(req) && req.ProgressToken == nil {
		return nil
	}
	return func(p client.Progress) { b.relayProgress(req, p) }
}

// extends says whether the backend's progress on a request forwarded for
// req moves req's deadline.
func (b *backend) extends(req *handlers.Request) bool {
	return b.cfg.MaxTimeout > b.cfg.Timeout && req.Peer != nil
}

func (b *backend) relayProgress(req *handlers.Request, p client.Progress) {
	if b.extends(req) {
		req.Peer.SetTimeout(b.cfg.Timeout + toolMargin)
	}
	req.Progress(p.Progress, p.Total, p.Message)
}

// Progress implements client.ProgressAnswerer: the backend's progress on
// a started call, relayed (see backend.progress).
func (f *started) Progress(p client.Progress) { f.b.relayProgress(f.c.req, p) }

// noTimeout leaves a request to its context's deadline.
var noTimeout = client.WithTimeout(-1)

// forward sends one request to the backend, within its Timeout (waiting
// for it to start included), and decodes the result into result. Its
// errors: an *unavailable (the backend could not take it, went away
// during it, or did not answer in time), the backend's own *jsonrpc.Error,
// mcp.ErrInputRequired (the client must answer a question first), or
// ctx's error when the client's request ended.
func (b *backend) forward(parent context.Context, req *handlers.Request, method string, params any, result *json.RawMessage) error {
	err := b.forwardOnce(parent, req, method, params, result)
	if b.cfg.Auth == AuthUser && method == "tools/call" && err != nil {
		// A caller not signed in whose client can wait is asked to sign
		// in within the call, which then goes on (signins.elicitURL).
		if waited, werr := b.g.signins.elicitURL(parent, req, b, err); waited {
			if werr != nil {
				return werr
			}
			return b.forwardOnce(parent, req, method, params, result)
		}
	}
	return err
}

func (b *backend) forwardOnce(parent context.Context, req *handlers.Request, method string, params any, result *json.RawMessage) error {
	if method != "tools/call" && req.Peer != nil {
		// The backend's Timeout, not the runtime's RequestTimeout, as for
		// its tools (whose Tool.Timeout says so): a backend a reload added
		// may have a longer one than the runtime was started with.
		req.Peer.SetTimeout(b.cfg.Timeout + toolMargin)
	}
	f := &forwarding{wait: startWait{parent: parent, d: b.cfg.Timeout}}
	defer f.wait.stop()
	b.g.refreshRoots(&f.wait, req)
	cl, err := b.acquire(&f.wait)
	release := noRelease
	if err == nil && b.perCaller() {
		// The request goes as its caller, on the caller's connection.
		cl, release, err = b.callerClient(&f.wait, req)
	}
	if err != nil {
		if parent.Err() != nil {
			return parent.Err()
		}
		return err
	}
	base, timeout := parent, client.WithTimeout(b.cfg.Timeout)
	waited := f.wait.waited()
	if waited != nil {
		// It had to be started: what is left of the Timeout bounds it.
		base, timeout = waited, noTimeout
	}
	f.abandon = make(chan struct{})
	f.c.req, f.c.ctx, f.c.cancel = req, parent, f.cancel
	f.ctx = callContext{base, &f.c}
	defer b.track(&f.c)()
	opts := append(make([]client.CallOption, 0, 3), timeout, client.WithDone(f.abandon))
	if ext, ok := extensionsOption(req); ok {
		opts = append(opts, ext)
	}
	if fn := b.progress(req); fn != nil {
		opts = append(opts, client.WithProgress(fn))
	}
	err = cl.Call(&f.ctx, method, params, &f.raw, opts...)
	release(err)
	if err != nil && b.cfg.Auth == AuthUser && parent.Err() == nil {
		if serr := b.signInAgain(parent, req); serr != nil {
			return serr
		}
	}
	if err == nil && !f.c.needInput.Load() {
		*result = f.raw
		return nil
	}
	if err == nil {
		// The backend asked the client a question that, in 2026-07-28,
		// comes back as input_required, and answered its own request
		// with the refusal before the abandon reached it: the answer
		// is moot, the client retries with the input.
		return mcp.ErrInputRequired
	}
	return b.forwardError(method, err, parent, waited, cl, &f.c)
}

// forwardError says what forward's client error err means (see forward).
// It is a function of its own so that what errors.As needs is allocated
// only when there is an error.
func (b *backend) forwardError(method string, err error, parent, waited context.Context, cl *client.Client, c *call) error {
	var re *client.RPCError
	var ee *client.ExitError
	switch {
	case c.needInput.Load() || errors.Is(err, mcp.ErrInputRequired):
		return mcp.ErrInputRequired
	case errors.As(err, &re):
		return re.Err
	case parent.Err() != nil:
		return parent.Err()
	case waited != nil && errors.Is(context.Cause(waited), errTimeout),
		waited == nil && errors.Is(err, context.DeadlineExceeded): // the client's timeout
		return &unavailable{backend: b.name, why: b.timedOut(method), stderr: b.tail()}
	case errors.As(err, &ee):
		return &unavailable{backend: b.name, why: fmt.Sprintf("went away during %s: %v", method, ee)}
	case errors.Is(err, client.ErrClosed):
		return &unavailable{backend: b.name, why: fmt.Sprintf("was stopped during %s", method)}
	case errors.Is(err, client.ErrSessionEnded):
		return &unavailable{backend: b.name, why: fmt.Sprintf("went away during %s: %v; reconnecting", method, err)}
	case b.cfg.URL != "" && connectionGone(err):
		b.connectionLost(cl, fmt.Errorf("%s: %w", method, err))
		return &unavailable{backend: b.name, why: fmt.Sprintf("failed %s: %v; reconnecting", method, err)}
	}
	return &unavailable{backend: b.name, why: fmt.Sprintf("failed %s: %v", method, err), stderr: b.tail()}
}

// connectionGone says whether a remote backend's failed request means the
// connection is lost (refused, broken, a 5xx from the server or a proxy)
// rather than that one request was refused (another 4xx).
func connectionGone(err error) bool {
	var he *client.HTTPError
	if errors.As(err, &he) {
		return he.Status >= 500 || he.Status == 404
	}
	return true
}

// rpcError turns a forwarding error into what a method other than
// tools/call answers: the backend's own error as it sent it, and the
// gateway's as -32603 with its text (which handlers would otherwise hide).
func (b *backend) rpcError(err error) error {
	var je *jsonrpc.Error
	var u *unavailable
	switch {
	case errors.As(err, &je), errors.Is(err, mcp.ErrInputRequired):
		return err
	case errors.As(err, &u):
		data := map[string]any{"backend": b.name}
		if u.state != "" {
			data["state"] = string(u.state)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: u.Error(), Data: data}
	}
	return err
}

func (b *backend) toolHandler(name string) handlers.ToolHandler {
	nameLit := jsonrpc.AppendString(nil, name)
	call := func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		if inTask(ctx) && !b.perCaller() {
			// As each caller, the call is a plain one on the caller's
			// connection, which the gateway's task awaits.
			return b.taskCall(ctx, req, name, args)
		}
		var raw json.RawMessage
		if err := b.forward(ctx, req, "tools/call", toolParams(nameLit, args, passMeta(req.Params)), &raw); err != nil {
			return toolError(err)
		}
		return b.toolAnswer(raw)
	}
	return func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		on := b.g.opts.OnCall
		if on == nil {
			return call(ctx, req, args)
		}
		at := time.Now()
		res, err := call(ctx, req, args)
		on(callRecord(b.name, name, at, res, err))
		return res, err
	}
}

// callRecord is what Options.OnCall is told of a call started at at.
func callRecord(backend, tool string, at time.Time, res *mcp.CallToolResult, err error) CallRecord {
	return CallRecord{Backend: backend, Tool: tool, Took: time.Since(at), IsError: err == nil && res != nil && res.IsError, Err: err}
}

// toolParams makes a tools/call's params around the client's arguments,
// which go on as they came (the session checked them), and the _meta
// passMeta kept, if any: no map, no second encoding. Bytes of the
// client's that are not UTF-8 become U+FFFD, as an encoding of them
// would make them: the backend gets JSON text.
func toolParams(nameLit []byte, args, meta json.RawMessage) json.RawMessage {
	return appendToolParams(make([]byte, 0, len(nameLit)+len(args)+len(meta)+32), nameLit, args, meta)
}

// appendToolParams appends toolParams' params to params.
func appendToolParams(params, nameLit []byte, args, meta json.RawMessage) json.RawMessage {
	params = append(append(params, `{"name":`...), nameLit...)
	params = append(append(params, `,"arguments":`...), args...)
	if meta != nil {
		params = append(append(params, `,"_meta":`...), meta...)
	}
	params = append(params, '}')
	if !utf8.Valid(params) {
		params = bytes.ToValidUTF8(params, []byte("\uFFFD"))
	}
	return params
}

// passMeta returns what the backend is to get of the _meta of the
// client's request params: every member but progressToken (the gateway
// asks the backend for progress itself, with a token of its own) and
// those under a prefix the protocol reserves (io.modelcontextprotocol/,
// dev.mcp/: the protocol version, capabilities and log level of the
// client's hop, which the gateway's own hop to the backend has of its
// own). A trace context (traceparent), or an application's keys, go on
// as the client sent them. nil when nothing is left.
func passMeta(params []byte) json.RawMessage {
	if !bytes.Contains(params, []byte(`"_meta"`)) && !bytes.Contains(params, []byte(`\u`)) {
		return nil // no _meta, not even one spelt with escapes
	}
	var meta []byte
	jsonrpc.Members(params, func(k string, v []byte) bool {
		if k == "_meta" {
			meta = v
		}
		return true
	})
	if len(meta) == 0 || meta[0] != '{' {
		return nil
	}
	type member struct {
		k string
		v []byte
	}
	var kept []member
	jsonrpc.Members(meta, func(k string, v []byte) bool {
		if k == "progressToken" || reservedMetaKey(k) {
			return true
		}
		// A key given twice is the last one, as JSON readers mostly
		// take it; the backend gets it once.
		kept = slices.DeleteFunc(kept, func(m member) bool { return m.k == k })
		kept = append(kept, member{k, v})
		return true
	})
	if kept == nil {
		return nil
	}
	out := append(make([]byte, 0, len(meta)), '{')
	for i, m := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(jsonrpc.AppendString(out, m.k), ':'), m.v...)
	}
	return append(out, '}')
}

// reservedMetaKey reports whether a _meta key's prefix is one the
// protocol reserves: one whose second label is modelcontextprotocol or
// mcp.
func reservedMetaKey(k string) bool {
	slash := strings.IndexByte(k, '/')
	if slash < 0 {
		return false
	}
	labels := strings.Split(k[:slash], ".")
	return len(labels) >= 2 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

// toolAnswer reads a backend's tool result.
func (b *backend) toolAnswer(raw json.RawMessage) (*mcp.CallToolResult, error) {
	if res, ok := textResult(raw); ok {
		return res, nil
	}
	res, err := toolResult(raw)
	if err != nil {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(
			fmt.Sprintf("backend %q answered tools/call with a malformed result: %v", b.name, err))}, IsError: true}, nil
	}
	return res, nil
}

// toolStarter forwards a tool call without a handler actor: the request
// goes to the backend from the session's goroutine (client.Go), and the
// backend's answer is relayed from the goroutine that reads it. A call is
// started so only when nothing has to be waited for first: the backend is
// up, and a legacy client's roots need not be asked. Anything else is left
// to toolHandler (forward), which waits where it must, as are a remote
// backend's calls and those a 2026-07-28 backend answers with
// input_required (they are forwarded again by toolHandler, whose client
// asks the questions: the backend sees the request twice).
func (b *backend) toolStarter(name string) handlers.ToolStarter {
	nameLit := jsonrpc.AppendString(nil, name)
	return func(ctx context.Context, req *handlers.Request, args json.RawMessage, reply handlers.ToolReply) bool {
		if b.cfg.URL != "" || b.g.rootsDue(req) || b.g.opts.Tracer != nil {
			// Traced calls go through forward, whose client call makes
			// the mcp.client span a child of the call's own (Options.Tracer).
			return false
		}
		f := &started{b: b, reply: reply}
		if b.g.opts.OnCall != nil {
			f.record = &callStart{tool: name, at: time.Now()}
		}
		abandon := f.abandon // one func value for both uses
		f.c.req, f.c.ctx, f.c.cancel = req, ctx, abandon
		cl := b.takeUp(&f.c)
		if cl == nil {
			return false
		}
		f.cl = cl
		// The client's Timeout is the backend's; f, a ProgressAnswerer,
		// asks for progress.
		f.mu.Lock()
		defer f.mu.Unlock()
		var opts []client.CallOption // none, mostly: no allocation
		if ext, ok := extensionsOption(req); ok {
			opts = []client.CallOption{ext}
		}
		// The params are copied into the request's line before Go returns,
		// so their buffer is lent, not given: one allocation less a call.
		pb := paramsPool.Get().(*[]byte)
		params := appendToolParams((*pb)[:0], nameLit, args, passMeta(req.Params))
		id, err := cl.Go("tools/call", params, f, opts...)
		if cap(params) <= maxPooledParams {
			*pb = params[:0]
			paramsPool.Put(pb)
		}
		if err != nil {
			b.remove(&f.c)
			return false // toolHandler says why
		}
		f.id = id
		if af, ok := ctx.(afterFuncer); ok {
			// The session's context registers the func itself: no
			// context made for it, as context.AfterFunc would.
			f.stop = af.AfterFunc(abandon)
		} else {
			f.stop = context.AfterFunc(ctx, abandon)
		}
		return true
	}
}

// withMeta adds to params what passMeta keeps of the client's _meta.
func withMeta(params map[string]any, req *handlers.Request) map[string]any {
	if meta := passMeta(req.Params); meta != nil {
		params["_meta"] = meta
	}
	return params
}

// completeParams is completion/complete's params with the client's _meta.
type completeParams struct {
	client.CompleteParams
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// paramsPool holds the buffers toolStarter builds a call's params in;
// those of calls with arguments over maxPooledParams are left to the
// collector, so that one large call does not keep its buffer for good.
var paramsPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

const maxPooledParams = 16 << 10

// afterFuncer is a context that runs a func once it is done, as the
// session's request contexts do (the interface context.AfterFunc looks for).
type afterFuncer interface {
	AfterFunc(func()) (stop func() bool)
}

// started is a tool call toolStarter forwarded.
type started struct {
	c     call
	b     *backend
	cl    *client.Client
	reply handlers.ToolReply
	// mu holds the answer back until toolStarter has the request's id and
	// has registered abandon with the request's context.
	mu   sync.Mutex
	id   int64
	stop func() bool
	// res is the relayed result: part of this allocation rather than one
	// more per call.
	res mcp.CallToolResult
	// record is set only for Options.OnCall: a pointer, so that a call
	// without it stays in a smaller size class.
	record *callStart
}

// callStart is what a CallRecord needs from a call's start.
type callStart struct {
	tool string
	at   time.Time
}

// done answers the call, and tells Options.OnCall.
func (f *started) done(res *mcp.CallToolResult, err error) {
	if r := f.record; r != nil {
		f.b.g.opts.OnCall(callRecord(f.b.name, r.tool, r.at, res, err))
	}
	f.reply.Done(res, err)
}

// abandon takes the backend's side of the call back: the client's request
// ended (cancelled, past its deadline, the session draining), or the
// backend asked a question the client answers by retrying the request.
func (f *started) abandon() {
	f.mu.Lock()
	id := f.id
	f.mu.Unlock()
	f.cl.Abandon(id, "the client's request ended")
}

// ParamsChecked tells the client's Go that the params toolStarter gives
// it need no second check: appendToolParams builds them of the tool's
// name, encoded, the arguments and _meta members the session read from
// the client's checked request, and makes them valid UTF-8.
func (f *started) ParamsChecked() bool { return true }

// Answer implements client.Answerer: the backend's answer, relayed.
func (f *started) Answer(raw json.RawMessage, err error) {
	f.mu.Lock()
	stop := f.stop
	f.stop = nil
	f.mu.Unlock()
	stop()
	b := f.b
	b.remove(&f.c)
	needInput := f.c.needInput.Load()
	if err == nil && !needInput {
		if relayed, isError, ok := relayText(raw); ok {
			// As it came: text blocks read the same in every revision.
			f.res = *mcp.EncodedResult(relayed)
			f.res.IsError = isError // for OnCall; the encoded bytes say it too
			f.done(&f.res, nil)
			return
		}
	}
	switch {
	case err == nil && !needInput:
		f.done(b.toolAnswer(raw))
	case needInput:
		f.done(nil, mcp.ErrInputRequired)
	case errors.Is(err, mcp.ErrInputRequired):
		f.reply.Fallback() // toolHandler answers, and tells OnCall
	default:
		f.done(toolError(b.forwardError("tools/call", err, f.c.ctx, nil, f.cl, &f.c)))
	}
}

// toolResult decodes any tool result: its content blocks (see content),
// structured content and isError.
func toolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var r struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
		Meta              json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{IsError: r.IsError, Content: make([]mcp.Content, 0, len(r.Content)), Meta: resultMeta(r.Meta)}
	for _, c := range r.Content {
		res.Content = append(res.Content, content(c))
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		res.StructuredContent = r.StructuredContent
	}
	return res, nil
}

// toolError is the answer to a tools/call that could not be forwarded:
// a result with isError when the backend was unavailable.
func toolError(err error) (*mcp.CallToolResult, error) {
	var u *unavailable
	if errors.As(err, &u) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(u.Error())}, IsError: true}, nil
	}
	return nil, err
}

// textResult reads the common tool result, text blocks only, without
// encoding/json: a scan of the raw result (checked when its line was read)
// and the texts unquoted. It gives what the full decode in toolHandler
// gives, and ok is false for every result it might not: structured
// content, a block with annotations or of another type, a member that is
// not of the expected type, keys that encoding/json would match ignoring
// case.
func textResult(raw []byte) (res *mcp.CallToolResult, ok bool) {
	var first string
	var more []mcp.Content
	n := 0
	r, ok := scanTextResult(raw, func(text []byte) bool {
		s, ok := jsonrpc.Unquote(text)
		if !ok {
			return false
		}
		switch n {
		case 0:
			first = s
		case 1:
			more = append(make([]mcp.Content, 0, 4), mcp.TextContent(first), mcp.TextContent(s))
		default:
			more = append(more, mcp.TextContent(s))
		}
		n++
		return true
	})
	if !ok {
		return nil, false
	}
	switch n {
	case 0:
		res = &mcp.CallToolResult{Content: []mcp.Content{}}
	case 1:
		res = mcp.TextResult(first) // the block in the result's allocation
	default:
		res = &mcp.CallToolResult{Content: more}
	}
	res.IsError = r.isError
	return res, true
}

// textScan is what scanTextResult found.
type textScan struct {
	isError bool
	blocks  []byte // the content array
	// theirs: the result also holds a 2026-07-28 backend's resultType
	// "complete" and _meta (with text nil only).
	theirs bool
}

// scanTextResult checks that raw is a result of text blocks only (see
// textResult) and gives each text's literal to text, which may refuse it.
// With text nil it checks that raw can be relayed without decoding
// (relayText): content and isError, each once, beside nothing but a
// 2026-07-28 resultType "complete" and _meta. (Its literals are valid
// UTF-8: the client that read raw saw to it.)
func scanTextResult(raw []byte, text func([]byte) bool) (r textScan, ok bool) {
	plain, strict := true, text == nil
	nContent, nIsError := 0, 0
	if !jsonrpc.Members(raw, func(k string, v []byte) bool {
		switch k {
		case "content":
			r.blocks = v
			nContent++
		case "isError":
			nIsError++
			switch string(v) {
			case "true":
				r.isError = true
			case "false":
				r.isError = false
			default:
				plain = false
			}
		case "structuredContent":
			plain = plain && !strict && string(v) == "null"
		case "_meta":
			// The backend's serverInfo is the gateway's to replace; any
			// other member is the result's, which the decode keeps.
			r.theirs = true
			plain = plain && len(v) > 0 && v[0] == '{' && resultMeta(v) == nil
		case "resultType":
			r.theirs = true
			plain = plain && (!strict || string(v) == `"complete"`)
		default:
			plain = plain && !strict && !strings.EqualFold(k, "content") && !strings.EqualFold(k, "isError") && !strings.EqualFold(k, "structuredContent") && !strings.EqualFold(k, "_meta")
		}
		return plain
	}) || !plain || r.blocks == nil || strict && (nContent > 1 || nIsError > 1) {
		return r, false
	}
	blocks := r.blocks
	if !jsonrpc.Elements(blocks, func(v []byte) bool {
		var typ, lit []byte
		if !jsonrpc.Members(v, func(k string, v []byte) bool {
			// A key given twice is read as either by one reader or
			// another (or refused): such a block is decoded instead.
			switch {
			case k == "type" && typ == nil:
				typ = v
			case k == "text" && lit == nil:
				lit = v
			default:
				plain = false
			}
			return plain
		}) || !plain || string(typ) != `"text"` || len(lit) == 0 || lit[0] != '"' {
			plain = false
			return false
		}
		if text != nil {
			plain = text(lit)
		}
		return plain
	}) || !plain {
		return r, false
	}
	return r, true
}

// relayText returns a text-only result as the client may get it without
// its texts being decoded and encoded again: raw itself, or, when raw also
// holds a 2026-07-28 backend's resultType and _meta (which are the
// backend's, not the gateway's), its content and isError copied out; and
// whether it is an isError result. ok is false for any other result.
func relayText(raw []byte) (relayed json.RawMessage, isError, ok bool) {
	if isError, ok := oneTextBlock(raw); ok {
		return raw, isError, true
	}
	r, ok := scanTextResult(raw, nil)
	switch {
	case !ok:
		return nil, false, false
	case !r.theirs:
		return raw, r.isError, true
	}
	out := make([]byte, 0, len(r.blocks)+32)
	out = append(append(out, `{"content":`...), r.blocks...)
	if r.isError {
		out = append(out, `,"isError":true`...)
	}
	return append(out, '}'), r.isError, true
}

// oneTextBlockHead is how a result of one text block begins as a compact
// encoder (mcprt's servers, encoding/json on a struct) writes it.
const oneTextBlockHead = `{"content":[{"type":"text","text":"`

// oneTextBlock reports whether raw is, byte for byte, a result of one text
// block, {"content":[{"type":"text","text":"…"}]}, with or without an
// isError member after it, and whether that says true: the result most
// tools give, which relayText then passes on with one pass over its text
// rather than scanTextResult's walk of every member. raw is a value the
// client already checked (valid JSON, valid UTF-8), so the text's literal
// needs only its end found.
func oneTextBlock(raw []byte) (isError, ok bool) {
	if len(raw) < len(oneTextBlockHead)+4 || string(raw[:len(oneTextBlockHead)]) != oneTextBlockHead {
		return false, false
	}
	// The literal ends at the first quote not escaped: one after an even
	// run of backslashes (a \uXXXX's hex digits are no quote).
	i := len(oneTextBlockHead)
	for {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return false, false
		}
		i += q
		n := 0
		for raw[i-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			break
		}
		i++
	}
	switch string(raw[i+1:]) {
	case `}]}`, `}],"isError":false}`:
		return false, true
	case `}],"isError":true}`:
		return true, true
	}
	return false, false
}

// resultMeta is what the client gets of the _meta of a backend's result:
// all of it, as the backend wrote it, but the backend's serverInfo (a
// 2026-07-28 result names its server there; the gateway's session puts
// its own). Nil when nothing is left, or raw is not an object.
func resultMeta(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	others, info := 0, false
	jsonrpc.Members(raw, func(k string, _ []byte) bool {
		if k == mcp.MetaServerInfo {
			info = true
		} else {
			others++
		}
		return true
	})
	switch {
	case others == 0:
		return nil
	case !info:
		return raw
	}
	out := []byte{'{'}
	jsonrpc.Members(raw, func(k string, v []byte) bool {
		if k != mcp.MetaServerInfo {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(jsonrpc.AppendString(out, k), ':')
			out = append(out, v...)
		}
		return true
	})
	return append(out, '}')
}

// content reads one content block; one of a type handlers does not know
// (or a malformed one) is passed on as text holding its JSON, so that
// nothing the backend said is lost.
func content(raw json.RawMessage) mcp.Content {
	var c mcp.Content
	if err := json.Unmarshal(raw, &c); err == nil {
		switch {
		case c.Type == "text", c.Type == "image", c.Type == "audio",
			c.Type == "resource_link" && c.Link != nil, c.Type == "resource" && c.Resource != nil:
			return c
		}
	}
	return mcp.TextContent(string(raw))
}

func (b *backend) promptHandler(name string) handlers.PromptHandler {
	return func(ctx context.Context, req *handlers.Request, args map[string]string) (*mcp.GetPromptResult, error) {
		var raw json.RawMessage
		if err := b.forward(ctx, req, "prompts/get", withMeta(map[string]any{"name": name, "arguments": args}, req), &raw); err != nil {
			return nil, b.rpcError(err)
		}
		var r struct {
			Description string `json:"description"`
			Messages    []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Meta json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q answered prompts/get with a malformed result: %v", b.name, err)}
		}
		res := &mcp.GetPromptResult{Description: r.Description, Messages: make([]mcp.PromptMessage, len(r.Messages)), Meta: resultMeta(r.Meta)}
		for i, m := range r.Messages {
			res.Messages[i] = mcp.PromptMessage{Role: m.Role, Content: content(m.Content)}
		}
		return res, nil
	}
}

func (b *backend) resourceHandler() handlers.ResourceHandler {
	return func(ctx context.Context, req *handlers.Request, uri string, _ map[string]string) ([]mcp.ResourceContents, error) {
		var raw json.RawMessage
		if err := b.forward(ctx, req, "resources/read", withMeta(map[string]any{"uri": uri}, req), &raw); err != nil {
			return nil, b.rpcError(err)
		}
		var r struct {
			Contents []mcp.ResourceContents `json:"contents"`
			Meta     json.RawMessage        `json:"_meta"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q answered resources/read with a malformed result: %v", b.name, err)}
		}
		req.SetResultMeta(resultMeta(r.Meta))
		return r.Contents, nil
	}
}

// completer forwards completion/complete for one prompt argument or
// template variable.
func (b *backend) completer(ref client.CompletionRef, arg string) handlers.CompletionHandler {
	return func(ctx context.Context, req *handlers.Request, value string, args map[string]string) (mcp.Completion, error) {
		p := client.CompleteParams{Ref: ref, Argument: client.CompleteArgument{Name: arg, Value: value}}
		if len(args) > 0 {
			p.Context = &client.CompleteContext{Arguments: args}
		}
		var raw json.RawMessage
		if err := b.forward(ctx, req, "completion/complete", completeParams{p, passMeta(req.Params)}, &raw); err != nil {
			return mcp.Completion{}, b.rpcError(err)
		}
		// The backend's answer is read into the type the gateway's own
		// answer is: one vocabulary, nothing to convert.
		var r struct {
			Completion mcp.Completion `json:"completion"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return mcp.Completion{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q answered completion/complete with a malformed result: %v", b.name, err)}
		}
		return r.Completion, nil
	}
}

// askHandler answers a backend's request for the client's input
// (sampling, elicitation) by asking the gateway's client, through the
// request that the backend is serving: the one whose context the question
// came in (2026-07-28 backends ask inside a request), or else the one
// callAsking finds (legacy backends ask on the side). In
// 2026-07-28 the client answers by retrying its request (input_required),
// so the backend's request is abandoned and the retry forwards it again,
// this time with the answer at hand.
func (b *backend) askHandler(method string) client.InputHandler {
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		c, _ := ctx.Value(callKey{}).(*call)
		ambiguous := false
		if c == nil {
			c, ambiguous = b.callAsking()
		}
		switch {
		case ambiguous:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: fmt.Sprintf("%s: the gateway cannot tell which of its clients to ask: several of their requests are in flight to %q, and this one names none", method, b.name)}
		case c == nil:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: fmt.Sprintf("%s: the gateway has no request of its client in flight to ask through", method)}
		}
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(c.ctx, cancel)()
		var p any
		if len(params) > 0 {
			p = params
		}
		raw, err := c.req.Ask(actx, method, p)
		var ce *handlers.CapabilityError
		var je *jsonrpc.Error
		switch {
		case errors.Is(err, mcp.ErrInputRequired):
			c.needInput.Store(true)
			c.cancel()
			return nil, err
		case errors.As(err, &ce):
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: fmt.Sprintf("%s: the client behind the gateway does not support %s", method, ce.Capability)}
		case errors.As(err, &je):
			return nil, je
		case err != nil:
			return nil, err
		}
		return raw, nil
	}
}

// timedOut says why a request to the backend ended at its timeout.
func (b *backend) timedOut(method string) string {
	if b.cfg.MaxTimeout > b.cfg.Timeout {
		return fmt.Sprintf("did not answer %s within %v without progress (within %v with it)", method, b.cfg.Timeout, b.cfg.MaxTimeout)
	}
	return fmt.Sprintf("did not answer %s within %v", method, b.cfg.Timeout)
}
