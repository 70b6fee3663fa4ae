package client

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/trace"
)

// tracedCall is call under an mcp.client span (Options.Tracer): the span
// is a child of ctx's span context, its own context goes in the request's
// _meta, and it ends with the request's outcome.
func (c *Client) tracedCall(ctx context.Context, tr *trace.Tracer, method string, params, result any, opts []CallOption) error {
	parent, _ := trace.FromContext(ctx)
	sp := tr.Start(parent, false, method, trace.KindClient, time.Now())
	var raw []byte
	if p, err := paramsOf(method, params); err == nil {
		raw = p
	}
	trace.Describe(sp, method, nil, raw, false)
	transport := "pipe"
	if c.h != nil {
		transport = "tcp"
	}
	sp.Attrs = append(sp.Attrs, trace.String(trace.AttrProtocolVersion, c.version), trace.String(trace.AttrTransport, transport))

	members := make([]member, 1, 3)
	members[0] = member{trace.MetaTraceparent, jsonrpc.AppendString(nil, sp.Context.Traceparent())}
	if st := sp.Context.State; st != "" {
		members = append(members, member{trace.MetaTracestate, jsonrpc.AppendString(nil, st)})
	}
	if bg := sp.Context.Baggage; bg != "" {
		members = append(members, member{trace.MetaBaggage, jsonrpc.AppendString(nil, bg)})
	}
	opts = append(opts[:len(opts):len(opts)], func(o *callOptions) { o.trace = members })

	// The result is read for isError; a caller that gave none (nil) or a
	// typed one is asked through a raw copy only for tools/call.
	err := c.untracedCall(ctx, method, params, result, opts...)
	switch {
	case err != nil:
		var re *RPCError
		if errors.As(err, &re) {
			trace.Outcome(sp, re.Err.Code, false)
		} else if errors.Is(err, context.Canceled) {
			sp.SetError("cancelled")
		} else {
			sp.SetError("_OTHER")
		}
	case method == "tools/call":
		trace.Outcome(sp, 0, toolIsError(result))
	}
	tr.End(sp, time.Now())
	return err
}

// toolIsError reads isError from a tools/call result as Call decoded it.
func toolIsError(result any) bool {
	switch r := result.(type) {
	case *mcp.CallToolResult:
		return r.IsError
	case *json.RawMessage:
		v, ok := jsonrpc.Member(*r, "isError")
		return ok && string(v) == "true"
	}
	return false
}
