// Package handlers is what a server offers, as plain values and functions.
//
// A Server is a registry of tools (raw, with JSON schemas, or typed with
// AddTool, their schemas derived from Go types), resources and resource
// templates, prompts and completion providers: plain Go values and
// functions, safe to change while the server runs (Watch reports each
// change, and the session turns it into list_changed notifications).
// What a client sees of them is package mcp's, the one vocabulary the
// server, session/client and the gateway share: a Tool, Resource,
// ResourceTemplate or Prompt here is that value (mcp.Tool, say) with what
// only the server reads beside it (Access, a tool's Timeout, completions),
// and handlers return mcp.CallToolResult and mcp.GetPromptResult built
// from mcp.Content blocks (mcp.TextResult, mcp.TextContent).
// Method maps an MCP method to its implementation. Running it is the
// session's job (package session): it decides which protocol era a request
// is in and hands it, with a Request, to a handler actor it starts under
// the handler supervisor, never running it on the session actor: a slow
// handler does not hold up other requests, and a panicking one is answered
// with an error and replaced by a fresh actor. This package starts no
// actors and no goroutines of its own.
//
// A handler gets a context (cancelled on cancellation, deadline and
// shutdown) and a Request: the negotiated version and client capabilities,
// Progress and Log/Logger (sent only when the client asked, never after the
// response), and Ask/Elicit/CreateMessage/Roots to ask the client back, with
// one API in both eras (see mcp.ErrInputRequired).
//
// # Who calls
//
// Request.Caller is who the request comes from, as its transport vouched
// for it: over Streamable HTTP behind runtime/resourceserver, what the
// verified OAuth access token says (subject, client id, issuer, audience,
// scopes, claims; never the token). Over stdio, and over HTTP without
// OAuth, it is nil. An Access on a tool, prompt, resource or template
// says which callers see it in their lists and may use it (scopes, claim
// values); the others are refused, with CodeInsufficientScope (403 and a
// step-up challenge over HTTP) when only a scope is missing, otherwise as
// if the item did not exist. A request without a Caller meets no Access.
// ExampleCaller shows both.
//
// # Where it sits
//
// Below session in the stack cmd → runtime → session → handlers
// (test/layers writes it out whole and checks it): handlers imports
// handlers/mcp (the vocabulary it shares with the client), handlers/jsonschema,
// handlers/uritemplate and handlers/jsonrpc, and
// neither hollywood nor supervisor. runtime/gateway, a Server whose offers
// are other servers', sits higher, beside runtime and above session/client.
// The handlers/ folder is the protocol's own floor: what a server offers,
// and beneath it the codec (handlers/jsonrpc) and the schemas everything
// above is built from.
package handlers
