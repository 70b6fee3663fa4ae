package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/session/jsonrpc"
)

// errTimeout is the cause of a forwarded request's context when the
// backend's Timeout passed.
var errTimeout = errors.New("backend timeout")

// toolMargin is how much longer the gateway's own deadline for a tool
// call is than the backend's Timeout, so that the backend's timeout is
// what the client hears about (it names the backend).
const toolMargin = 2 * time.Second

type callKey struct{}

// forward sends one request to the backend, within its Timeout (waiting
// for it to start included), and decodes the result into result. Its
// errors: an *unavailable (the backend could not take it, went away
// during it, or did not answer in time), the backend's own *jsonrpc.Error,
// handlers.ErrInputRequired (the client must answer a question first), or
// ctx's error when the client's request ended.
func (b *backend) forward(parent context.Context, req *handlers.Request, method string, params any, result *json.RawMessage) error {
	ctx, cancel := context.WithTimeoutCause(parent, b.cfg.Timeout, errTimeout)
	defer cancel()
	b.g.refreshRoots(ctx, req)
	cl, err := b.acquire(ctx)
	if err != nil {
		if parent.Err() != nil {
			return parent.Err()
		}
		return err
	}
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	c := &call{req: req, ctx: parent, cancel: ccancel}
	defer b.track(c)()
	opts := []client.CallOption{client.WithTimeout(-1)} // ctx bounds it
	if req.ProgressToken != nil {
		opts = append(opts, client.WithProgress(func(p client.Progress) { req.Progress(p.Progress, p.Total, p.Message) }))
	}
	err = cl.Call(context.WithValue(cctx, callKey{}, c), method, params, result, opts...)
	var re *client.RPCError
	var ee *client.ExitError
	switch {
	case err == nil:
		return nil
	case c.needInput.Load() || errors.Is(err, handlers.ErrInputRequired):
		return handlers.ErrInputRequired
	case errors.As(err, &re):
		return re.Err
	case parent.Err() != nil:
		return parent.Err()
	case errors.Is(context.Cause(ctx), errTimeout):
		return &unavailable{backend: b.name, why: fmt.Sprintf("did not answer %s within %v", method, b.cfg.Timeout), stderr: b.tail()}
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
	case errors.As(err, &je), errors.Is(err, handlers.ErrInputRequired):
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
	return func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		var raw json.RawMessage
		err := b.forward(ctx, req, "tools/call", map[string]any{"name": name, "arguments": args}, &raw)
		var u *unavailable
		switch {
		case errors.As(err, &u):
			return &handlers.CallToolResult{Content: []handlers.Content{handlers.TextContent(u.Error())}, IsError: true}, nil
		case err != nil:
			return nil, err
		}
		var r struct {
			Content           []json.RawMessage `json:"content"`
			StructuredContent json.RawMessage   `json:"structuredContent"`
			IsError           bool              `json:"isError"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return &handlers.CallToolResult{Content: []handlers.Content{handlers.TextContent(
				fmt.Sprintf("backend %q answered tools/call with a malformed result: %v", b.name, err))}, IsError: true}, nil
		}
		res := &handlers.CallToolResult{IsError: r.IsError, Content: make([]handlers.Content, 0, len(r.Content))}
		for _, c := range r.Content {
			res.Content = append(res.Content, content(c))
		}
		if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
			res.StructuredContent = r.StructuredContent
		}
		return res, nil
	}
}

// content reads one content block; one of a type handlers does not know
// (or a malformed one) is passed on as text holding its JSON, so that
// nothing the backend said is lost.
func content(raw json.RawMessage) handlers.Content {
	var c handlers.Content
	if err := json.Unmarshal(raw, &c); err == nil {
		switch {
		case c.Type == "text", c.Type == "image", c.Type == "audio",
			c.Type == "resource_link" && c.Link != nil, c.Type == "resource" && c.Resource != nil:
			return c
		}
	}
	return handlers.TextContent(string(raw))
}

func (b *backend) promptHandler(name string) handlers.PromptHandler {
	return func(ctx context.Context, req *handlers.Request, args map[string]string) (*handlers.GetPromptResult, error) {
		var raw json.RawMessage
		if err := b.forward(ctx, req, "prompts/get", map[string]any{"name": name, "arguments": args}, &raw); err != nil {
			return nil, b.rpcError(err)
		}
		var r struct {
			Description string `json:"description"`
			Messages    []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q answered prompts/get with a malformed result: %v", b.name, err)}
		}
		res := &handlers.GetPromptResult{Description: r.Description, Messages: make([]handlers.PromptMessage, len(r.Messages))}
		for i, m := range r.Messages {
			res.Messages[i] = handlers.PromptMessage{Role: m.Role, Content: content(m.Content)}
		}
		return res, nil
	}
}

func (b *backend) resourceHandler() handlers.ResourceHandler {
	return func(ctx context.Context, req *handlers.Request, uri string, _ map[string]string) ([]handlers.ResourceContents, error) {
		var raw json.RawMessage
		if err := b.forward(ctx, req, "resources/read", map[string]string{"uri": uri}, &raw); err != nil {
			return nil, b.rpcError(err)
		}
		var r struct {
			Contents []handlers.ResourceContents `json:"contents"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q answered resources/read with a malformed result: %v", b.name, err)}
		}
		return r.Contents, nil
	}
}

// completer forwards completion/complete for one prompt argument or
// template variable.
func (b *backend) completer(ref client.CompletionRef, arg string) handlers.CompletionHandler {
	return func(ctx context.Context, req *handlers.Request, value string, args map[string]string) (handlers.Completion, error) {
		p := client.CompleteParams{Ref: ref, Argument: client.CompleteArgument{Name: arg, Value: value}}
		if len(args) > 0 {
			p.Context = &client.CompleteContext{Arguments: args}
		}
		var raw json.RawMessage
		if err := b.forward(ctx, req, "completion/complete", p, &raw); err != nil {
			return handlers.Completion{}, b.rpcError(err)
		}
		var r struct {
			Completion struct {
				Values  []string `json:"values"`
				Total   int      `json:"total"`
				HasMore bool     `json:"hasMore"`
			} `json:"completion"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return handlers.Completion{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q answered completion/complete with a malformed result: %v", b.name, err)}
		}
		return handlers.Completion{Values: r.Completion.Values, Total: r.Completion.Total, HasMore: r.Completion.HasMore}, nil
	}
}

// askHandler answers a backend's request for the client's input
// (sampling, elicitation) by asking the gateway's client, through the
// request that the backend is serving: the one whose context the question
// came in (2026-07-28 backends ask inside a request), or else the latest
// request in flight to it (legacy backends ask on the side). In
// 2026-07-28 the client answers by retrying its request (input_required),
// so the backend's request is abandoned and the retry forwards it again,
// this time with the answer at hand.
func (b *backend) askHandler(method string) client.InputHandler {
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		c, _ := ctx.Value(callKey{}).(*call)
		if c == nil {
			c = b.latestCall()
		}
		if c == nil {
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
		case errors.Is(err, handlers.ErrInputRequired):
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
