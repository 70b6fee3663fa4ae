// Package handlers holds what a server offers (its tools and their
// handlers) and the handler actors that run user code.
//
// A Server is a registry: plain Go values and functions, safe to change while
// the server runs. The session decides which method a request names and in
// which protocol era; the method itself (tools/list, tools/call, ...) runs in
// a handler actor (Worker) under the handler supervisor, never on the session
// actor, so a slow handler does not hold up other requests and a panicking
// one is answered with an error and replaced by a fresh actor.
package handlers
