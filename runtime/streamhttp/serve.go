package streamhttp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/jsonschema"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/internal/sessionactor"
	"github.com/mcprt/mcprt/supervisor"
)

// Header names (canonical forms; Go compares them case-insensitively).
const (
	hSessionID       = "Mcp-Session-Id"
	hProtocolVersion = "Mcp-Protocol-Version"
	hMethod          = "Mcp-Method"
	hName            = "Mcp-Name"
)

// keepAliveEvery is how often a quiet SSE stream gets a comment line, so
// that proxies and clients do not time it out.
const keepAliveEvery = 25 * time.Second

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); !h.originAllowed(origin) {
		h.refuseOrigin(w, origin)
		return
	}
	if h.opts.Authorize != nil {
		if err := h.opts.Authorize(r); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, nil, jsonrpc.CodeInvalidRequest, "Unauthorized: "+err.Error())
			return
		}
	}
	h.mu.Lock()
	closing := h.closing
	h.mu.Unlock()
	if closing {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, nil, jsonrpc.CodeServerBusy, "Server is shutting down")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest, "Method not allowed")
	}
}

// originAllowed is the DNS-rebinding rule: a browser's request from a page
// of another origin than the server's own loopback one, or one listed in
// AllowedOrigins, is refused.
func (h *Handler) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	if slices.Contains(h.opts.AllowedOrigins, origin) || slices.Contains(h.opts.AllowedOrigins, "*") {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// refuseOrigin answers 403, naming the origin and how to allow it, and
// says so at debug level (at most once per originLog's interval, with the
// count of refusals since).
func (h *Handler) refuseOrigin(w http.ResponseWriter, origin string) {
	h.refused.Add(1)
	if len(origin) > 200 {
		origin = origin[:200] + "…"
	}
	hint := h.opts.AllowOriginHint
	if hint == "" {
		hint = "the server as allowed origins"
	}
	if ok, held := h.originLog.allow(); ok {
		h.log.Debug("refused a request from a browser page of another origin (the DNS-rebinding rule)",
			"origin", origin, "allow_with", hint, "refused_since_last_line", held)
	}
	writeError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest,
		"Forbidden: origin "+strconv.Quote(origin)+" is not allowed (only loopback origins are, and those given to "+hint+")")
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, nil, jsonrpc.CodeInvalidRequest, "Unsupported Media Type: the body must be application/json")
		return
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		writeError(w, http.StatusNotAcceptable, nil, jsonrpc.CodeInvalidRequest, "Not Acceptable: the client must accept both application/json and text/event-stream")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
				"Request Entity Too Large: the body exceeds "+strconv.FormatInt(h.opts.MaxBodyBytes, 10)+" bytes")
			return
		}
		writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "Parse error: reading the body: "+err.Error())
		return
	}
	body = bytes.TrimSpace(body)
	if jsonrpc.IsBatch(body) {
		h.postBatch(w, r, body)
		return
	}
	var m jsonrpc.Message
	if id, jerr := jsonrpc.Decode(body, &m); jerr != nil {
		writeError(w, http.StatusBadRequest, id, jerr.Code, jerr.Message)
		return
	}
	pv := r.Header.Get(hProtocolVersion)
	mv := metaVersion(m.Params)
	if slices.Contains(mcp.ModernVersions, pv) || m.Method == "server/discover" || mv != nil {
		// 2026-07-28 has no sessions: a session id it carries is ignored.
		h.postModern(w, r, &m, pv, mv)
		return
	}
	if sid := r.Header.Get(hSessionID); sid != "" {
		if hs := h.session(w, r, sid); hs != nil {
			h.postLegacy(w, r, hs, &m)
		}
		return
	}
	switch {
	case m.Kind == jsonrpc.KindRequest && m.Method == "initialize":
		h.initialize(w, r, &m)
	default:
		writeError(w, http.StatusBadRequest, m.ID, jsonrpc.CodeInvalidRequest,
			"Bad Request: no Mcp-Session-Id: send initialize first, or use 2026-07-28 (MCP-Protocol-Version header and _meta on every request)")
	}
}

// postLegacy serves a message for a legacy session.
func (h *Handler) postLegacy(w http.ResponseWriter, r *http.Request, hs *hsession, m *jsonrpc.Message) {
	hs.touch()
	// The header must name a revision served here (400 otherwise, as the
	// transport says); one other than the session's own is not an error.
	if pv := r.Header.Get(hProtocolVersion); pv != "" && !slices.Contains(mcp.LegacyVersions, pv) && !slices.Contains(mcp.ModernVersions, pv) {
		writeError(w, http.StatusBadRequest, m.ID, jsonrpc.CodeInvalidRequest,
			"Bad Request: unsupported MCP-Protocol-Version "+strconv.Quote(pv))
		return
	}
	switch m.Kind {
	case jsonrpc.KindNotification:
		if m.Method == "notifications/cancelled" {
			// A legacy request is keyed by the client's id: the session
			// cancels it, and its stream, if still open, ends here.
			hs.feed(&sessionactor.In{Msg: *m})
			if id, ok := jsonrpc.Member(m.Params, "requestId"); ok {
				hs.cancelled(string(id))
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		hs.heard()
		hs.feed(&sessionactor.In{Msg: *m})
		w.WriteHeader(http.StatusAccepted)
	case jsonrpc.KindRequest:
		h.exchange(w, r, hs, m, false, nil, nil)
	default: // a response to one of the server's requests
		hs.heard()
		hs.feed(&sessionactor.In{Msg: *m})
		w.WriteHeader(http.StatusAccepted)
	}
}

// postBatch serves a JSON-RPC batch, which only 2025-03-26 has: the session
// takes it whole, and its responses come back as one array (after the
// requests' notifications, as an SSE stream).
func (h *Handler) postBatch(w http.ResponseWriter, r *http.Request, body []byte) {
	var hs *hsession
	if sid := r.Header.Get(hSessionID); sid != "" {
		if hs = h.session(w, r, sid); hs == nil {
			return
		}
	}
	if v := hs.versionOrEmpty(); v != mcp.Version20250326 {
		writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are only accepted in a session of protocol version 2025-03-26")
		return
	}
	hs.touch()
	var parts []json.RawMessage
	if json.Unmarshal(body, &parts) != nil || len(parts) == 0 {
		writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a batch is a non-empty array of messages")
		return
	}
	x := newExchange(hs, "", nil)
	seen := map[string]bool{} // the client's ids
	for _, p := range parts {
		var m jsonrpc.Message
		if _, jerr := jsonrpc.Decode(p, &m); jerr != nil || m.Kind != jsonrpc.KindRequest {
			continue // the session answers what is wrong with it
		}
		if seen[string(m.ID)] {
			writeError(w, http.StatusBadRequest, m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: id "+string(m.ID)+" is already in use by a request in flight")
			return
		}
		seen[string(m.ID)] = true
		if x.key == "" {
			x.key, x.id = string(m.ID), m.ID
		}
		x.keys = append(x.keys, string(m.ID))
	}
	if x.key == "" {
		// Notifications and responses only: the session answers with
		// nothing, unless a part is invalid, and that has no id to go by.
		hs.feed(&sessionactor.In{Batch: body, Values: hs.values(r)})
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.run(w, r, hs, x, &sessionactor.In{Batch: body, Reply: x, Values: hs.values(r)}, false, nil)
}

// initialize starts a legacy session; its id goes out with the result.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	if !h.reserve() {
		h.full.Add(1)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, m.ID, jsonrpc.CodeServerBusy,
			"Server busy: all "+strconv.Itoa(h.opts.MaxSessions)+" sessions are in use; retry later")
		return
	}
	hs, err := h.startSession(h.newSessionID(), h.principal(r), supervisor.Temporary)
	if err != nil {
		h.log.Error("cannot start a session", "err", err)
		writeError(w, http.StatusServiceUnavailable, m.ID, jsonrpc.CodeInternalError, "Internal error: cannot start a session")
		return
	}
	h.exchange(w, r, hs, m, false, nil, func(o sessionactor.Outcome, hdr http.Header) {
		if v := o.Version; v != "" {
			hs.version.Store(&v)
			hdr.Set(hSessionID, hs.id)
			return
		}
		// A failed initialize leaves no session behind.
		h.forget(hs)
		hs.in.Send(sessionactor.Drain{})
	})
	if hs.version.Load() == nil {
		// The client left before the result: nobody knows the session's id.
		h.forget(hs)
		hs.in.Send(sessionactor.Drain{})
	}
}

// postModern serves a 2026-07-28 message on the stateless session, once its
// headers agree with its body.
func (h *Handler) postModern(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, pv string, mv []byte) {
	switch m.Kind {
	case jsonrpc.KindNotification:
		// 2026-07-28 defines none over HTTP (closing a stream cancels).
		w.WriteHeader(http.StatusAccepted)
		return
	case jsonrpc.KindResponse:
		writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: 2026-07-28 clients send no responses; answer input requests with inputResponses")
		return
	}
	// A body without the _meta members the revision requires is
	// malformed before any header can disagree with it: -32602, and 400,
	// which the session finds and answers; a mismatch goes with the
	// request (sessionactor.In.Refuse) for the session to answer once the
	// body passes. One whose version (a string) the header contradicts is
	// a mismatch first, answered here.
	var refuse *jsonrpc.Error
	if msg := h.headerMismatch(r, m, pv, mv); msg != "" {
		refuse = &jsonrpc.Error{Code: jsonrpc.CodeHeaderMismatch, Message: "Header mismatch: " + msg}
		if bodyVersion, isString := jsonrpc.Unquote(mv); isString && bodyVersion != pv {
			writeError(w, http.StatusBadRequest, m.ID, refuse.Code, refuse.Message)
			return
		}
	}
	h.exchange(w, r, h.stateless, m, true, refuse, nil)
}

// headerMismatch checks the request metadata headers 2026-07-28 requires
// against the body (mv is its raw _meta protocol version), and says what
// is wrong ("" when nothing is).
func (h *Handler) headerMismatch(r *http.Request, m *jsonrpc.Message, pv string, mv []byte) string {
	bodyVersion := ""
	if mv != nil {
		bodyVersion, _ = jsonrpc.Unquote(mv)
	}
	switch {
	case pv == "":
		return "the MCP-Protocol-Version header is required"
	case mv == nil:
		// Most likely a hand-written request (curl) that has the headers
		// but not the body's half: say what the body needs, by its keys.
		return "MCP-Protocol-Version header " + strconv.Quote(pv) + " but no params._meta[\"" + mcp.MetaProtocolVersion +
			"\"]: a 2026-07-28 request carries, in params._meta, \"" + mcp.MetaProtocolVersion + "\", \"" +
			mcp.MetaClientCapabilities + "\" and \"" + mcp.MetaClientInfo + "\""
	case pv != bodyVersion:
		return "MCP-Protocol-Version header " + strconv.Quote(pv) + " does not match params._meta[\"" + mcp.MetaProtocolVersion + "\"] " + strconv.Quote(bodyVersion)
	}
	method := r.Header.Get(hMethod)
	switch {
	case method == "":
		return "the Mcp-Method header is required"
	case method != m.Method:
		return "Mcp-Method header " + strconv.Quote(method) + " does not match method " + strconv.Quote(m.Method)
	}
	field := ""
	switch m.Method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		// The tasks extension routes a task's requests by its id.
		field = "taskId"
	default:
		return ""
	}
	var want string
	if v, ok := jsonrpc.Member(m.Params, field); ok {
		want, _ = jsonrpc.Unquote(v)
	}
	raw, present := r.Header[hName]
	if !present || len(raw) != 1 {
		return "the Mcp-Name header is required for " + m.Method
	}
	got, ok := mcp.DecodeHeaderValue(raw[0])
	switch {
	case !ok:
		return "the Mcp-Name header is not valid"
	case got != want:
		return "Mcp-Name header " + strconv.Quote(got) + " does not match params." + field + " " + strconv.Quote(want)
	}
	if m.Method == "tools/call" {
		return h.paramMismatch(r, m, want)
	}
	return ""
}

// paramMismatch checks the Mcp-Param headers of a call of the tool named
// tool against the arguments its x-mcp-header annotations point at.
func (h *Handler) paramMismatch(r *http.Request, m *jsonrpc.Message, tool string) string {
	params := h.srv.ToolHeaderParams(tool)
	if len(params) == 0 {
		return ""
	}
	args, _ := jsonrpc.Member(m.Params, "arguments")
	for _, p := range params {
		header := "Mcp-Param-" + p.Name
		v, ok := args, len(args) > 0
		for _, key := range p.Path {
			if !ok {
				break
			}
			v, ok = jsonrpc.Member(v, key)
		}
		want, has := "", false
		if ok {
			want, has = jsonschema.HeaderText(v)
		}
		vals := r.Header.Values(header)
		switch {
		case len(vals) == 0 && has:
			return "the " + header + " header is required: arguments." + strings.Join(p.Path, ".") + " is given"
		case len(vals) == 0:
			continue
		case len(vals) > 1:
			return "the " + header + " header is given more than once"
		}
		got, valid := mcp.DecodeHeaderValue(vals[0])
		switch {
		case !valid:
			return "the " + header + " header is not valid"
		case !has:
			return "the " + header + " header is given but arguments." + strings.Join(p.Path, ".") + " is not"
		case got != want && !sameNumber(got, want):
			return header + " header " + strconv.Quote(got) + " does not match arguments." + strings.Join(p.Path, ".") + " " + strconv.Quote(want)
		}
	}
	return ""
}

// sameNumber compares two integers written differently (42 and 42.0).
func sameNumber(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// exchange runs one request: it feeds it, with itself as the request's
// sessionactor.Replier, and sends back what the session sends for it, as one
// JSON body when the response comes first, otherwise as an SSE stream that
// the response ends. modern and refuse go to the session (In.Modern,
// In.Refuse); onFinal may set headers from the response's Outcome before
// it goes. A legacy request is keyed inside by its own id (its session has
// one client); a 2026-07-28 one, on the session every client shares, by a
// key of its own.
func (h *Handler) exchange(w http.ResponseWriter, r *http.Request, hs *hsession, m *jsonrpc.Message, modern bool, refuse *jsonrpc.Error, onFinal func(sessionactor.Outcome, http.Header)) {
	in := &sessionactor.In{Msg: *m, Values: hs.values(r), Modern: modern, Refuse: refuse}
	key := string(m.ID)
	if hs.id == "" {
		key = strconv.FormatInt(h.nextID.Add(1), 10)
		in.Key = key
	}
	x := newExchange(hs, key, m.ID)
	in.Reply = x
	h.run(w, r, hs, x, in, modern, onFinal)
}

// run feeds a request (or batch) and writes back what the session sends
// for it.
func (h *Handler) run(w http.ResponseWriter, r *http.Request, hs *hsession, x *exchange, in *sessionactor.In, modern bool, onFinal func(sessionactor.Outcome, http.Header)) {
	if err := hs.register(x); err != nil {
		status := http.StatusNotFound
		if _, dup := err.(*dupError); dup {
			status = http.StatusBadRequest
		}
		writeError(w, status, x.id, jsonrpc.CodeInvalidRequest, err.Error())
		return
	}
	hs.feed(in)
	key := x.key

	ctx := r.Context()
	var tick <-chan time.Time
	sse := false
	for {
		msgs, final, aborted, err := x.next(ctx, tick)
		if err != nil {
			if modern {
				// Closing the stream is the cancellation in 2026-07-28.
				hs.abandon(x)
				hs.in.Send(sessionactor.Cancel{Key: key})
			} else {
				// In the legacy era it is not: the client may still
				// cancel by its own id, which must keep meaning this
				// request until it is answered.
				hs.orphan(x)
			}
			return
		}
		if aborted && !final {
			x.mu.Lock()
			cancelled := x.cancelled
			x.mu.Unlock()
			if cancelled {
				// The client cancelled it: a stream that ends without a
				// response, as the request gets none.
				if !sse {
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
				}
				return
			}
			if !sse {
				writeError(w, http.StatusNotFound, x.id, jsonrpc.CodeInternalError, "The session ended before answering; send initialize again")
			}
			return
		}
		if !sse && final && len(msgs) == 1 {
			resp := msgs[0]
			o := x.response()
			if onFinal != nil {
				onFinal(o, w.Header())
			}
			w.Header().Set("Content-Type", "application/json")
			status := o.Status
			if o.Code == jsonrpc.CodeInsufficientScope && h.opts.ScopeChallenge != nil {
				h.opts.ScopeChallenge(w.Header(), o.Scope)
				status = http.StatusForbidden
			}
			w.WriteHeader(status)
			_, _ = w.Write(resp)
			return
		}
		if !sse {
			sse = true
			hdr := w.Header()
			startSSE(hdr)
			if onFinal != nil && final {
				onFinal(x.response(), hdr)
			}
			w.WriteHeader(http.StatusOK)
			t := time.NewTicker(keepAliveEvery)
			defer t.Stop()
			tick = t.C
		}
		if len(msgs) == 0 {
			_, _ = io.WriteString(w, ": keep-alive\n\n")
		}
		for _, b := range msgs {
			writeEvent(w, b)
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if final {
			return
		}
	}
}

// get opens a legacy session's stream for messages that belong to no
// request. 2026-07-28 has none (405).
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(hSessionID)
	if sid == "" {
		w.Header().Set("Allow", "POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest, "Method Not Allowed: GET needs an Mcp-Session-Id (2026-07-28 has no GET stream)")
		return
	}
	if !accepts(r, "text/event-stream") {
		writeError(w, http.StatusNotAcceptable, nil, jsonrpc.CodeInvalidRequest, "Not Acceptable: GET opens a text/event-stream")
		return
	}
	hs := h.session(w, r, sid)
	if hs == nil {
		return
	}
	x := newExchange(hs, "", nil)
	if !hs.openGet(x) {
		writeError(w, http.StatusNotFound, nil, jsonrpc.CodeInvalidRequest, "Not Found: the session has ended")
		return
	}
	defer hs.closeGet(x)
	startSSE(w.Header())
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	if f != nil {
		f.Flush()
	}
	t := time.NewTicker(keepAliveEvery)
	defer t.Stop()
	for {
		msgs, _, aborted, err := x.next(r.Context(), t.C)
		if err != nil || aborted {
			return
		}
		if len(msgs) == 0 {
			_, _ = io.WriteString(w, ": keep-alive\n\n")
		}
		for _, b := range msgs {
			writeEvent(w, b)
		}
		if f != nil {
			f.Flush()
		}
	}
}

// session finds a legacy session by id, or answers 404: also when r is
// from another principal than the session's, and when the id was not
// minted by a replica holding the key (forged or altered), without a
// lookup.
func (h *Handler) session(w http.ResponseWriter, r *http.Request, sid string) *hsession {
	var hs *hsession
	if h.ids.valid(sid) {
		h.mu.Lock()
		hs = h.sessions[sid]
		h.mu.Unlock()
	}
	if hs != nil && hs.owner != h.principal(r) {
		hs = nil
	}
	if hs == nil {
		writeError(w, http.StatusNotFound, nil, jsonrpc.CodeInvalidRequest, "Not Found: no session "+strconv.Quote(sid)+" (it ended or never existed); send initialize again")
	}
	return hs
}

// principal is Options.Principal of r ("" without one).
func (h *Handler) principal(r *http.Request) string {
	if h.opts.Principal == nil {
		return ""
	}
	return h.opts.Principal(r)
}

// startSSE sets the headers of an SSE response: no caching, and no
// buffering in a proxy (nginx reads X-Accel-Buffering).
func startSSE(hdr http.Header) {
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
}

// delete ends a legacy session.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(hSessionID)
	if sid == "" {
		writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Bad Request: DELETE needs an Mcp-Session-Id")
		return
	}
	hs := h.session(w, r, sid)
	if hs == nil {
		return
	}
	h.forget(hs)
	hs.in.Send(sessionactor.Drain{})
	// Its client is done with it: the tasks it made that still run are
	// cancelled before the answer (their results would go to no one);
	// those that ended stay, for whoever holds their ids. An idle
	// session's end, or an eviction, cancels nothing: its client may
	// come back, initialize again, and ask for them.
	h.srv.EndSession(hs.id)
	w.WriteHeader(http.StatusNoContent)
}

// metaVersion is _meta["io.modelcontextprotocol/protocolVersion"], raw.
func metaVersion(params []byte) []byte {
	meta, ok := jsonrpc.Member(params, "_meta")
	if !ok {
		return nil
	}
	v, ok := jsonrpc.Member(meta, mcp.MetaProtocolVersion)
	if !ok {
		return nil
	}
	return v
}

func writeEvent(w io.Writer, b []byte) {
	buf := make([]byte, 0, len(b)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, b...)
	buf = append(buf, "\n\n"...)
	_, _ = w.Write(buf)
}

func writeError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: code, Message: msg}))
}

// accepts reports whether the request's Accept header takes mediaType
// (a missing header, or */*, takes anything).
func accepts(r *http.Request, mediaType string) bool {
	vals := r.Header.Values("Accept")
	if len(vals) == 0 {
		return true
	}
	typ, _, _ := strings.Cut(mediaType, "/")
	for _, v := range vals {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			mt = strings.TrimSpace(mt)
			if mt == mediaType || mt == "*/*" || mt == typ+"/*" {
				return true
			}
		}
	}
	return false
}

// BearerToken returns an Options.Authorize that accepts only requests
// carrying "Authorization: Bearer <token>".
func BearerToken(token string) func(*http.Request) error {
	want := []byte("Bearer " + token)
	return func(r *http.Request) error {
		got := []byte(r.Header.Get("Authorization"))
		if len(got) != len(want) || subtle.ConstantTimeCompare(got, want) != 1 {
			return errors.New("a valid bearer token is required")
		}
		return nil
	}
}

// values are the values a request's handler sees: the HTTP request's
// (the caller), the connection's remote address, which the tasks it makes
// count against when there is no caller (handlers.WithRemote), and in a
// legacy session its id, which lists them and whose DELETE cancels them
// (handlers.WithSession).
func (hs *hsession) values(r *http.Request) context.Context {
	ctx := handlers.WithRemote(r.Context(), r.RemoteAddr)
	if hs.id == "" {
		return ctx
	}
	return handlers.WithSession(ctx, hs.id)
}
