package sessionactor

import (
	"context"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/stdio/wire"
)

// The seam between a session and its transport: messages in, messages out.
//
// In: a transport sends the session's Inbox decoded messages (*In), each
// holding one unit of Config.Backlog. A transport whose reader must not
// parse JSON (stdio: one goroutine reads, and a line is decoded on the
// session's goroutine instead) sends each message undecoded (*Raw), with
// the same unit; it tells the session of a message it discarded for its
// size (*Oversized) and of the end of its input (Closed). The session
// imports no transport: each transport translates what it reads into these.
//
// Out: what belongs to no request in particular (list_changed, logs,
// captured stdout) goes to the session's sink, Config.Writer (the stdio
// writer actor) or Config.Deliver. A request that came with a Replier gets
// its response, and everything sent on its behalf before it, there instead;
// one without gets them on the sink, as every request on stdio does.
//
// Three transports use it: stdio (a reader goroutine sending Raw, a writer
// actor, no Replier), Streamable HTTP (one Replier per POST: the response
// goes back on that POST), and tests (Pipe, in memory).

// In is one decoded message for the session.
type In struct {
	// Msg is the message, as jsonrpc.Decode made it.
	Msg jsonrpc.Message
	// Batch, when set, is a JSON-RPC batch (a JSON array, 2025-03-26 only)
	// in place of Msg, raw: the session decodes and answers each part.
	Batch []byte
	// Key names the request inside the session: in-flight ids, cancellation
	// (Cancel), listen streams. "": the request's own id, as on stdio. A
	// transport that feeds one session from several clients (the stateless
	// 2026-07-28 session of Streamable HTTP) gives each request a key of
	// its own, so that two clients' id 1 do not collide; the response and
	// everything sent for the request still carry the client's id.
	Key string
	// Reply, when set, takes the request's response and what is sent on
	// its behalf (see Replier); nil: the session's sink.
	Reply Replier
	// Values carries per-request values (the authenticated caller, say)
	// to the request's handler: its context's Value looks here. Only
	// Value is used, never Done, Err or Deadline, so a transport may pass
	// its request's context as it is, even one that ends before the call.
	Values context.Context
	// Modern says that the transport knows the request to be of 2026-07-28
	// (its headers say so), whatever its _meta holds: one without the
	// _meta members that revision requires is malformed (-32602, Outcome
	// Status 400), not a request of no revision.
	Modern bool
	// Refuse, when set, is an error the transport found in the request
	// that only it can see (a 2026-07-28 header that disagrees with the
	// body): the session answers it, with Outcome Status 400, in place of
	// serving the request, once the request is well formed (a malformed
	// one gets its -32602 first, as the specification orders them).
	Refuse *jsonrpc.Error
}

// Replier takes what the session sends for one request (or one batch). It
// is called on whichever goroutine sends (the session's, a handler's, a
// timer's), in the order each sends; it must not block, and it calls each
// message's Done once it has taken the message, as Config.Deliver does.
type Replier interface {
	// Notify takes a message sent on the request's behalf: progress, a
	// log record, a request to the client, a listen stream's
	// notifications. It may also come after Respond (a listen stream's
	// notifications/cancelled, a request to the client that gave up).
	Notify(m wire.Out)
	// Respond takes the request's one response, or the batch's array of
	// responses, with what the transport needs to know of it (Outcome),
	// so that it never reads the bytes back. A request the client
	// cancelled gets none.
	Respond(m wire.Out, o Outcome)
}

// Outcome is what a transport learns of a response beside its bytes: the
// session has decoded and validated the request once, and says here what
// it found.
type Outcome struct {
	// Code is the JSON-RPC error code of an error response (for a batch,
	// its first part's that is one), 0 for a result.
	Code int
	// Status is the HTTP status the specification gives the response:
	// 200, but 503 for CodeServerBusy and, in 2026-07-28, 404 for a method
	// not found and 400 for a malformed request (a _meta member the
	// revision requires missing or mistyped), for In.Refuse, an
	// unsupported version or a missing client capability.
	Status int
	// Scope is the error's data.scope when it has one (handlers.Access's
	// CodeInsufficientScope): the scopes the client should ask for.
	Scope string
	// Version is the protocol version an initialize negotiated ("" for
	// any other response, and for a failed initialize).
	Version string
}

// Raw is one message (or a JSON-RPC batch) as a stream transport read it,
// not yet decoded: the session decodes it on its own goroutine, then takes
// the path an In without a Replier takes (the response goes to the sink).
// It holds one unit of Config.Backlog. It is not an In because a line is
// the hot path of stdio: this is one small allocation per line, an In ten
// times its size.
type Raw struct {
	// Data is the message; the session owns it from the send on.
	Data []byte
}

// Oversized reports a message the transport discarded because it was over
// its size cap (a stdio line over its limit). The session answers it with
// Invalid Request, under the id found in Head, the message's first bytes,
// if one is there, so the client can match the error to its request. It
// holds one unit of Config.Backlog, as the message would have.
type Oversized struct {
	Size int // bytes discarded
	Max  int // the cap
	Head []byte
}

// Closed tells the session that its transport's input has ended: Err is
// nil when the client closed it (stdin EOF), else why reading failed. The
// session drains, as on Drain.
type Closed struct{ Err error }

// Cancel asks the session to settle the request (or end the listen stream)
// keyed key with no response, as notifications/cancelled does by id: for
// transports whose cancellation is not a message (a 2026-07-28 client
// closing its HTTP stream). It holds no unit of Config.Backlog.
type Cancel struct{ Key string }
