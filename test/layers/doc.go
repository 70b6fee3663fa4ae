// Package layers holds the test that keeps mcprt's packages in the stack
// their docs describe. It has no code of its own.
//
// The stack, top to bottom, as the code has it. A package imports only
// packages of its own floor or of floors below it, never one above:
//
//	cmd/mcprt                     the command; its internal packages: fixture (the servers
//	                              serve -fixture runs), loadgen (the bench load), otlp and
//	                              audit (spans and histograms over OTLP/HTTP JSON, the audit log)
//	test/...                      harnesses: end-to-end, interop, conformance
//	runtime, runtime/streamhttp,  serving a server over stdio or HTTP
//	  internal/sessionactor       (the session actor both transports run),
//	  runtime/resourceserver      (behind OAuth 2.1 access tokens);
//	  runtime/gateway             a server whose offers are other servers' (its
//	                              internal/toolsearch: the tool-search index);
//	  runtime/fault               the fault campaigns of mcprt chaos;
//	session, session/client       the MCP session: what a user chooses for the server
//	                              end (its actor is the runtime's), and the client end
//	handlers                      what a server offers, as plain values and functions;
//	  handlers/trace              W3C trace context in _meta, the MCP spans, the Exporter
//	handlers/mcp                  the protocol's vocabulary: revisions, _meta keys, wire types,
//	                              one set for server, client, gateway and transports
//	handlers/jsonschema,          what handlers are built from
//	  handlers/uritemplate
//	stdio                         bytes ↔ lines: the reader, the writer actor
//	stdio/wire                    the seam's outgoing message and credit, below
//	                              both stdio and session (streamhttp needs no stdio)
//	supervisor                    OTP-style supervision over hollywood
//	handlers/jsonrpc              the JSON-RPC codec: a leaf everyone may use
//
// The folders follow the same order: cmd/, runtime/, session/, handlers/,
// stdio/, supervisor/, and no folder imports one above it (the codec sits
// in handlers/, the lowest folder of the protocol, and imports nothing of
// the module).
//
// So the path of a request is cmd → runtime → handlers: the runtime
// assembles the tree, its session actor (runtime/internal/sessionactor,
// configured by package session's Options) runs the protocol and the
// handler actors, and handlers says what there is to run. handlers imports
// neither hollywood nor supervisor (nor anything that does): it starts no
// actors. A new package is placed by its path (session/x is on session's
// floor); one under a new top-level directory fails the test until it is
// given a floor here and in the test.
package layers
