// Package mcp is the protocol's vocabulary that mcprt's server, client,
// gateway and transports share: the revisions, the _meta keys, the log
// levels, the Mcp-Name/Mcp-Param header codec and the wire types both
// sides of a connection read and write.
//
// It is defined once so that the sides cannot drift apart: a revision the
// server learns is one the client learns, and a value the gateway reads
// from a backend with package client is one it can hand to its own clients
// through package handlers without converting it. go-sdk keeps a single
// type set for the same reason.
//
// # Where it sits
//
// A leaf below handlers: it imports handlers/jsonrpc and the standard
// library only, so handlers, session, session/client, the runtime's
// transports and the gateway can all stand on it (test/layers checks it).
package mcp
