package handlers

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// Request is one client request as a handler sees it.
type Request struct {
	Method string
	// Params is the raw params object ({} when the client sent none).
	Params json.RawMessage
	// Version is the protocol revision the request is served in: the one
	// negotiated by initialize, or the request's own _meta version.
	Version string
	// Modern is true for 2026-07-28 (stateless, per-request _meta) requests.
	Modern bool
	// ClientCapabilities are the client's declared capabilities: from
	// initialize (legacy) or from this request's _meta (2026-07-28).
	ClientCapabilities json.RawMessage
	// ProgressToken is the request's _meta.progressToken, nil when the
	// client did not ask for progress.
	ProgressToken json.RawMessage
	// LogLevel is the lowest level of notifications/message the client
	// accepts for this request ("" when it asked for none): the
	// logging/setLevel level in the legacy era, the request's _meta logLevel
	// in 2026-07-28.
	LogLevel string
	// Peer sends notifications tied to this request; the session sets it.
	// Nil in requests built by hand (tests), where notifications are dropped.
	Peer Peer
	// InputResponses are the client's answers to earlier input_required
	// rounds of this request (2026-07-28), by key; Ask returns them.
	InputResponses map[string]json.RawMessage
	// Caller is who the request comes from, as its transport vouched for
	// it: over Streamable HTTP behind runtime/resourceserver, the holder of
	// the verified access token. Nil over stdio, and wherever nobody
	// vouched (HTTP without OAuth). The session sets it.
	Caller *Caller
	// LocalLog, when set, also receives every record of Logger(), whatever
	// the client asked for: the server's own log (stderr, in mcprt serve).
	// The session sets it.
	LocalLog *slog.Logger

	mu           sync.Mutex
	lastProgress float64
	progressed   bool
	asked        int
	probe        bool // see Tool.AskBeforeTask
	// more holds what few requests need, so that the others do not pay
	// for it in size.
	more *requestMore
}

// SetResultMeta sets the _meta of the result of a resources/read, whose
// ResourceHandler returns contents rather than a result: a JSON object,
// sent as it is. (A tool's or a prompt's handler sets mcp.CallToolResult.Meta
// or GetPromptResult.Meta instead.)
func (r *Request) SetResultMeta(meta json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.extra().resultMeta = meta
}

// requestMore is the part of a Request few requests use.
type requestMore struct {
	inputRequests map[string]InputRequest // asked this round (2026-07-28)
	resultMeta    json.RawMessage         // SetResultMeta
}

// extra returns r.more, made on first use. The caller holds r.mu.
func (r *Request) extra() *requestMore {
	if r.more == nil {
		r.more = &requestMore{}
	}
	return r.more
}

// resultMeta is what SetResultMeta set.
func (r *Request) resultMeta() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.more == nil {
		return nil
	}
	return r.more.resultMeta
}

// Peer is the session's side of one request.
type Peer interface {
	// Notify sends a notification tied to the request. It reports false, and
	// sends nothing, once the request has been answered or cancelled: no
	// message for a request ever follows its response.
	Notify(method string, params any) bool
	// SetTimeout replaces the request's deadline with d from now.
	SetTimeout(d time.Duration)
	// Ask sends the client a request tied to this one and waits for its
	// response (legacy revisions only; see Request.Ask).
	Ask(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// Progress reports progress on the request, if the client asked for it (a
// progressToken) and the request is still open. progress must increase from
// one call to the next; a value that does not is dropped, as the
// specification requires. total <= 0 means unknown.
func (r *Request) Progress(progress, total float64, message string) bool {
	if r.ProgressToken == nil || r.Peer == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.progressed && progress <= r.lastProgress {
		return false
	}
	p := struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total,omitempty"`
		Message  string          `json:"message,omitempty"`
	}{r.ProgressToken, progress, total, message}
	if r.Version == mcp.Version20241105 {
		p.Message = "" // message arrived in 2025-03-26
	}
	if !r.Peer.Notify("notifications/progress", p) {
		return false
	}
	r.progressed, r.lastProgress = true, progress
	return true
}

// Log sends a notifications/message for this request if the client asked
// for messages at this level. data is any JSON value.
func (r *Request) Log(level, logger string, data any) bool {
	if r.Peer == nil || !mcp.LevelAdmits(r.LogLevel, level) {
		return false
	}
	return r.Peer.Notify("notifications/message", struct {
		Level  string `json:"level"`
		Logger string `json:"logger,omitempty"`
		Data   any    `json:"data"`
	}{level, logger, data})
}

// Logger returns a slog.Logger whose records become notifications/message
// for this request (same rules as Log), so handler code can log the way it
// always does.
func (r *Request) Logger() *slog.Logger {
	return slog.New(&requestLogHandler{req: r})
}

// SlogLevel maps an MCP log level to slog's scale.
func SlogLevel(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	case "notice":
		return slog.LevelInfo + 2
	case "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	case "critical":
		return slog.LevelError + 2
	case "alert":
		return slog.LevelError + 4
	case "emergency":
		return slog.LevelError + 6
	}
	return slog.LevelInfo
}

// MCPLevel maps a slog level to the nearest MCP log level at or below it.
func MCPLevel(l slog.Level) string {
	level := "debug"
	for _, name := range mcp.LogLevels {
		if SlogLevel(name) <= l {
			level = name
		}
	}
	return level
}

type requestLogHandler struct {
	req   *Request
	attrs []slog.Attr
	group string
}

func (h *requestLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if h.req.LocalLog != nil && h.req.LocalLog.Enabled(ctx, l) {
		return true
	}
	return h.req.Peer != nil && mcp.LevelAdmits(h.req.LogLevel, MCPLevel(l))
}

func (h *requestLogHandler) Handle(ctx context.Context, rec slog.Record) error {
	if l := h.req.LocalLog; l != nil && l.Enabled(ctx, rec.Level) {
		lh := l.Handler().WithAttrs(append([]slog.Attr{slog.String("method", h.req.Method)}, h.attrs...))
		if h.group != "" {
			lh = lh.WithGroup(h.group)
		}
		_ = lh.Handle(ctx, rec)
	}
	data := map[string]any{"message": rec.Message}
	add := func(a slog.Attr) bool {
		key := a.Key
		if h.group != "" {
			key = h.group + "." + key
		}
		data[key] = a.Value.Resolve().Any()
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	rec.Attrs(add)
	h.req.Log(MCPLevel(rec.Level), "", data)
	return nil
}

func (h *requestLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &requestLogHandler{req: h.req, attrs: append(slices.Clone(h.attrs), as...), group: h.group}
}

func (h *requestLogHandler) WithGroup(name string) slog.Handler {
	g := name
	if h.group != "" {
		g = h.group + "." + name
	}
	return &requestLogHandler{req: h.req, attrs: h.attrs, group: g}
}
