// Package handlers is what a server offers, as plain values and functions.
//
// A Server is a registry of tools (raw, with JSON schemas, or typed with
// AddTool, their schemas derived from Go types), resources and resource
// templates, prompts and completion providers: plain Go values and
// functions, safe to change while the server runs (Watch reports each
// change, and the session turns it into list_changed notifications).
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
// one API in both eras (see ErrInputRequired).
//
// # Where it sits
//
// Below session in the stack cmd → runtime → session → handlers
// (test/layers writes it out whole and checks it): handlers imports
// handlers/jsonschema, handlers/uritemplate and session/jsonrpc, and
// neither hollywood nor supervisor. handlers/gateway, a Server whose offers
// are other servers', sits higher, beside runtime and above session/client.
package handlers
