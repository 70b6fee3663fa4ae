package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// CapabilityError says that a request needs a client capability the client
// did not declare. Ask returns one rather than send what the client cannot
// take, and a handler returns one (from Ask, or made with
// RequireCapability) to say "this needs capability X". In 2026-07-28 the
// request is then answered with CodeMissingClientCapability and
// data.requiredCapabilities, as that revision requires; in the legacy
// revisions a tool's answer is a result with isError set and this text,
// and any other request's is an invalid-params error.
type CapabilityError struct {
	Method     string // the server-to-client request that needed it; "" when the handler said so itself
	Capability string // e.g. "elicitation", "sampling", "roots"
}

// RequireCapability returns the error a handler returns when it cannot go on
// without the client capability name (e.g. "elicitation").
func RequireCapability(name string) error { return &CapabilityError{Capability: name} }

func (e *CapabilityError) Error() string {
	if e.Method == "" {
		return fmt.Sprintf("handlers: the client did not declare the %q capability this request needs", e.Capability)
	}
	return fmt.Sprintf("handlers: the client did not declare the %q capability that %s needs", e.Capability, e.Method)
}

// RPCError is the 2026-07-28 answer for e: CodeMissingClientCapability with
// data.requiredCapabilities naming the capability.
func (e *CapabilityError) RPCError() *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeMissingClientCapability,
		Message: fmt.Sprintf("Missing required client capability: %s", e.Capability),
		Data:    map[string]any{"requiredCapabilities": map[string]any{e.Capability: map[string]any{}}},
	}
}

// HasClientCapability reports whether the client declared the named
// capability ("elicitation", "sampling", "roots", …) for this request: at
// initialize in the legacy revisions, in the request's own _meta in
// 2026-07-28.
func (r *Request) HasClientCapability(name string) bool {
	if len(r.ClientCapabilities) == 0 {
		return false
	}
	v, ok := jsonrpc.Member(r.ClientCapabilities, name)
	return ok && string(v) != "null"
}

// ClientExtension reports whether the client declared the extension id
// ("io.modelcontextprotocol/ui") for this request, and with what settings
// object: in capabilities.extensions, at initialize in the legacy
// revisions, in the request's own _meta in 2026-07-28. A server offering
// an MCP App, say, returns its plain content to a client without it.
func (r *Request) ClientExtension(id string) (settings json.RawMessage, ok bool) {
	if len(r.ClientCapabilities) == 0 {
		return nil, false
	}
	ext, ok := jsonrpc.Member(r.ClientCapabilities, "extensions")
	if !ok {
		return nil, false
	}
	settings, ok = jsonrpc.Member(ext, id)
	if !ok || string(settings) == "null" {
		return nil, false
	}
	return settings, true
}

// InputRequest is one request to the client inside an input_required result.
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// askCapability is the client capability each server-to-client request needs.
var askCapability = map[string]string{
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
	"elicitation/create":     "elicitation",
}

// mrtrMethods are the only requests 2026-07-28 lets answer input_required.
var mrtrMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// Ask sends the client a request (sampling/createMessage, roots/list or
// elicitation/create) on behalf of this request and returns its result, in
// both protocol eras: see mcp.ErrInputRequired. It fails with a
// *CapabilityError when the client did not declare the capability, with
// the client's *jsonrpc.Error when it answered with one, with an
// invalid-params *jsonrpc.Error when a 2026-07-28 client's answer is not
// a result of that method, and with ctx's error when the request was
// cancelled or timed out meanwhile.
//
// In 2026-07-28 the request goes in the input_required result under a key
// Ask chooses ("q1", "q2", … in the order of the handler's Ask calls); use
// AskAs to choose it.
func (r *Request) Ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	r.mu.Lock()
	r.asked++
	key := "q" + strconv.Itoa(r.asked)
	r.mu.Unlock()
	return r.AskAs(ctx, key, method, params)
}

// AskAs is Ask with the key that the request goes by in a 2026-07-28
// input_required result, and that the client's answer comes back under:
// for a server whose clients expect particular keys. Keys must be unique
// within the request (Ask's own are "q" and a number). In the legacy
// revisions the key plays no part.
func (r *Request) AskAs(ctx context.Context, key, method string, params any) (json.RawMessage, error) {
	answers, err := r.AskAll(ctx, map[string]InputRequest{key: {Method: method, Params: params}})
	if err != nil {
		return nil, err
	}
	return answers[key], nil
}

// AskAll sends the client several requests at once, by key, and returns
// its answers by the same keys. In 2026-07-28 the requests not yet
// answered all go in one input_required result, so the client answers
// them in one round rather than one round each; in the legacy revisions
// they are sent one after the other, in key order. It fails as Ask does,
// before anything is sent when the client lacks a capability one of the
// requests needs.
func (r *Request) AskAll(ctx context.Context, requests map[string]InputRequest) (map[string]json.RawMessage, error) {
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(r.ClientCapabilities, &caps)
	keys := make([]string, 0, len(requests))
	for key, q := range requests {
		capName, ok := askCapability[q.Method]
		if !ok {
			return nil, fmt.Errorf("handlers: Ask cannot send %q", q.Method)
		}
		if _, ok := caps[capName]; !ok {
			return nil, &CapabilityError{Method: q.Method, Capability: capName}
		}
		keys = append(keys, key)
	}
	slices.Sort(keys)
	answers := make(map[string]json.RawMessage, len(requests))
	if !r.Modern {
		if r.Peer == nil {
			return nil, errors.New("handlers: Ask needs a session (Request.Peer is nil)")
		}
		for _, key := range keys {
			q := requests[key]
			answer, err := r.Peer.Ask(ctx, q.Method, q.Params)
			if err != nil {
				return nil, err
			}
			answers[key] = answer
		}
		return answers, nil
	}
	if !mrtrMethods[r.Method] {
		return nil, fmt.Errorf("handlers: in 2026-07-28 only tools/call, prompts/get and resources/read may ask the client, not %s", r.Method)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	missing := false
	for _, key := range keys {
		q := requests[key]
		answer, ok := r.InputResponses[key]
		if !ok {
			m := r.extra()
			if m.inputRequests == nil {
				m.inputRequests = map[string]InputRequest{}
			}
			m.inputRequests[key] = q
			missing = true
			continue
		}
		if !fitsResult(q.Method, answer) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
				"Invalid params: inputResponses[%q] is not a result of %s", key, q.Method)}
		}
		answers[key] = answer
	}
	if missing {
		return nil, mcp.ErrInputRequired
	}
	if r.probe {
		return nil, errAnswered
	}
	return answers, nil
}

// fitsResult reports whether answer has the shape of a result of method,
// the members a handler reads from it: an elicitation's action, a
// sampled message's role and content, the roots list.
func fitsResult(method string, answer json.RawMessage) bool {
	var res struct {
		Action  *string            `json:"action"`
		Role    *string            `json:"role"`
		Content json.RawMessage    `json:"content"`
		Roots   *[]json.RawMessage `json:"roots"`
	}
	if len(answer) == 0 || answer[0] != '{' || json.Unmarshal(answer, &res) != nil {
		return false
	}
	switch method {
	case "elicitation/create":
		return res.Action != nil && (*res.Action == "accept" || *res.Action == "decline" || *res.Action == "cancel")
	case "sampling/createMessage":
		return res.Role != nil && len(res.Content) > 0 && (res.Content[0] == '{' || res.Content[0] == '[')
	case "roots/list":
		return res.Roots != nil
	}
	return false
}

// PendingInputs returns what the handler asked for and did not get in this
// round (2026-07-28): the inputRequests of an input_required result.
func (r *Request) PendingInputs() map[string]InputRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.more == nil {
		return nil
	}
	return r.more.inputRequests
}

// ElicitResult is the client's answer to an elicitation.
type ElicitResult struct {
	// Action is "accept", "decline" or "cancel".
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Elicit asks the user, through the client, for the fields described by
// requestedSchema (a flat JSON Schema object of primitive properties).
func (r *Request) Elicit(ctx context.Context, message string, requestedSchema json.RawMessage) (*ElicitResult, error) {
	params := map[string]any{"message": message, "requestedSchema": requestedSchema}
	if r.Version >= mcp.Version20251125 {
		params["mode"] = "form"
	}
	raw, err := r.Ask(ctx, "elicitation/create", params)
	if err != nil {
		return nil, err
	}
	var res ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("handlers: elicitation result: %w", err)
	}
	return &res, nil
}

// SamplingMessage is one message of a sampling request or its answer.
type SamplingMessage struct {
	Role    string      `json:"role"`
	Content mcp.Content `json:"content"`
}

// CreateMessageResult is the client's sampled answer.
type CreateMessageResult struct {
	Role       string      `json:"role"`
	Content    mcp.Content `json:"content"`
	Model      string      `json:"model"`
	StopReason string      `json:"stopReason,omitempty"`
}

// CreateMessage asks the client's model for a completion of messages.
func (r *Request) CreateMessage(ctx context.Context, messages []SamplingMessage, maxTokens int) (*CreateMessageResult, error) {
	raw, err := r.Ask(ctx, "sampling/createMessage", map[string]any{"messages": messages, "maxTokens": maxTokens})
	if err != nil {
		return nil, err
	}
	var res CreateMessageResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("handlers: sampling result: %w", err)
	}
	return &res, nil
}

// Roots asks the client for its roots.
func (r *Request) Roots(ctx context.Context) ([]mcp.Root, error) {
	raw, err := r.Ask(ctx, "roots/list", nil)
	if err != nil {
		return nil, err
	}
	var res struct {
		Roots []mcp.Root `json:"roots"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("handlers: roots result: %w", err)
	}
	return res.Roots, nil
}
