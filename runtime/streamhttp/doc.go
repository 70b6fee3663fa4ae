// Package streamhttp serves an mcprt server over Streamable HTTP: an
// http.Handler for one MCP endpoint, in both eras of the protocol.
//
// Every client session is a session actor, the same one the stdio transport
// runs, fed by HTTP requests instead of a reader goroutine, and a temporary
// child of one sessions supervisor, so a session that crashes takes only
// itself down. All sessions share the server's handler supervisor. A
// session has no writer actor: what it sends is handed, on the goroutine
// that sends it, to the HTTP request waiting for it (sessionactor.Config.Deliver),
// so a response costs no extra hand-off. Sessions and handler actors hold
// no goroutine while idle: they borrow one from the tree's runners
// (supervisor.Runners) while they work, so a client that keeps a legacy
// session open between requests costs about 8.5 KiB of heap and no stack
// (BenchmarkSessionMemory).
//
//	root (one_for_one)
//	 ├─ runners    the goroutines sessions and handler actors borrow (permanent)
//	 ├─ handlers   supervisor of the handler actors (permanent)
//	 └─ sessions   supervisor of the sessions (permanent)
//	     ├─ stateless   the 2026-07-28 session (transient: restarted after a crash)
//	     └─ s-…         one per legacy session (temporary)
//
// Legacy revisions (2025-03-26 … 2025-11-25; batches in 2025-03-26 only): initialize creates a session
// and its Mcp-Session-Id (random bits sealed with AES-256-GCM under a key
// derived from Options.StateKey, optionally after a replica tag in clear:
// a client can neither read nor forge one); later requests must carry it (404 once it has ended, so
// the client initializes again); DELETE ends it, and cancels the tasks it
// made that still run (handlers.Server.EndSession: a task is bound to its
// caller or its id, never to the session, so it outlives the session's
// other ends: idle, eviction, a restart); at Options.MaxSessions an
// initialize closes the session idle the longest (no request in flight, no
// open stream; O(1), from a list kept in the order sessions went idle) and
// is refused (503) only when every session is in use, so that abandoned
// sessions cannot lock new clients out; GET opens the stream for
// messages unrelated to a request (list_changed, resource updates,
// server-to-client requests sent outside a call). A request is answered
// with a JSON body, or with an SSE stream when notifications or requests
// for it come first; the response ends the stream.
//
// 2026-07-28: no session. Every request is served statelessly, its
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers checked against
// its body (400 and -32020 when they disagree); closing the response
// stream cancels the request; subscriptions/listen is a long-lived SSE
// response. input_required and its signed requestState work as on stdio:
// replicas that share Options.StateKey accept each other's retries.
//
// Serve is the whole server, as runtime.Serve is for stdio: it serves a
// listener until a context ends, with the HTTP server's timeouts and
// optional health and metrics endpoints, and then drains as mcprt serve
// -http does on SIGTERM (a request already sent but not yet read is let
// in, requests in flight are answered, every session ends). New and the
// Handler are for mounting the endpoint in a server of your own.
//
// Each POST is decoded once and handed to its session as a sessionactor.In, with
// itself as the request's sessionactor.Replier: the response and everything
// sent on the request's behalf come back to that POST, under the client's
// own id, and nothing is re-encoded or rewritten on the way. A legacy
// request is known inside by its id (a session has one client); a
// 2026-07-28 request, on the one session all clients share, by a key of
// its own (sessionactor.In.Key), so that two clients' id 1 never collide. The
// HTTP request's context goes along as the request's values
// (sessionactor.In.Values): what a middleware wrapping the Handler attaches to
// it (an authenticated caller) reaches the handler through its context's
// Value, and a handlers.Caller put there with handlers.WithCaller (as
// runtime/resourceserver's Guard does) is the handler's Request.Caller:
// what handlers.Access decides on, and what a 2026-07-28 requestState is
// bound to.
//
// Flow control is the session's: past MaxInFlight requests of a session
// wait, past MaxQueued they are refused (503 and -32000). Responses and
// notifications from the client are never held back. Each request's stream
// keeps at most a bounded number of undelivered notifications, so a client
// that does not read cannot grow the server's memory without bound.
//
// # Serving it safely
//
// mcprt serve -http ADDR (and mcprt gateway -http) serve one endpoint, /mcp;
// a bare port or :PORT means 127.0.0.1, and 0.0.0.0:PORT must be asked
// for. Safe by default: loopback origins only (-http-allow-origin adds
// others; any other Origin gets 403 naming it, the DNS-rebinding rule,
// and a debug log line); an optional bearer token (-http-token-file; 401
// with WWW-Authenticate without it; serving beyond loopback without one
// is warned of at start), or OAuth 2.1 access tokens of an authorization
// server (-http-oauth-issuer and -http-oauth-resource:
// runtime/resourceserver around the endpoint, through ServeOptions.Wrap
// and Extra; Options.Principal binds each legacy session to its
// token's subject, and Options.ScopeChallenge answers a call that
// handlers.Access refuses for a missing scope with 403 and the
// insufficient_scope challenge, for the client to step up); bounds on sessions (-http-max-sessions: at the
// cap the one idle the longest is closed), idle sessions
// (-http-session-idle), body size (-http-max-body, 413), header time and
// idle connections. SIGINT or SIGTERM: stop accepting, answer what is in
// flight (bounded), end every session, exit 0; a request already sent on
// a connection the server had not read yet counts as in flight. Serve
// does all of this for an embedder in one call. stdin is not read.
// -http-health /healthz answers probes on a path of its own (200 and
// {"status":"ok"}; mcprt gateway -http lists each backend's state there,
// "degraded" while one is failed, 503 when all are); -http-metrics
// /metrics serves Prometheus's text format (version, uptime, goroutines,
// heap, collections; for the gateway each backend's state and restarts
// and its tool calls).
//
// # Scaling out
//
// Behind a load balancer every replica must be given the same
// -http-state-key-file: a 2026-07-28 input_required result carries a
// requestState signed by the replica that asked, and the retry may land on
// any replica; one with another key refuses it (-32602, "requestState is
// not one this server issued"). Legacy sessions live in the memory of the
// replica that created them, and tasks in its memory or -tasks-dir, so
// each replica gets its own -http-session-tag (session and task ids become
// TAG.<hex>) and the balancer routes on it. With -tasks-etcd (the same
// endpoints and -tasks-etcd-prefix on every replica) tasks are shared
// instead: any replica answers for any task, a dead replica's are taken
// over by another, and routing a task by its tag is an optimisation, the
// other replicas its backups (test/e2e/testdata/nginx-etcd.conf).
//
//	head -c 48 /dev/urandom | base64 > state.key      # the same file on every replica
//	mcprt serve -http 127.0.0.1:8081 -http-state-key-file state.key -http-session-tag a -tasks-dir tasks-a
//	mcprt serve -http 127.0.0.1:8082 -http-state-key-file state.key -http-session-tag b -tasks-dir tasks-b
//
// For 2026-07-28 clients only, round robin, except for a task's requests,
// which go to the replica that made it (nginx, in the http context;
// test/e2e/testdata/nginx-modern.conf):
//
//	# 2026-07-28 clients only: every request stands alone, so any replica
//	# serves it. Round robin; the replicas share -http-state-key-file so that
//	# an input_required retry may land on any of them. A task is the exception:
//	# it lives on the replica that made it. Replica A runs with
//	# -http-session-tag a, B with -http-session-tag b, so a task id is a.<hex>
//	# or b.<hex>, and tasks/get, tasks/update and tasks/cancel carry it in
//	# Mcp-Name.
//	map $http_mcp_method $mcprt_task {
//	    ~^tasks/  $http_mcp_name;
//	    default   "";
//	}
//	map $mcprt_task $mcprt_upstream {
//	    default  mcprt;
//	    ~^a\.    mcprt_a;
//	    ~^b\.    mcprt_b;
//	}
//
//	upstream mcprt {
//	    server 127.0.0.1:8081;
//	    server 127.0.0.1:8082;
//	    keepalive 16;
//	}
//	upstream mcprt_a {
//	    server 127.0.0.1:8081;
//	    keepalive 16;
//	}
//	upstream mcprt_b {
//	    server 127.0.0.1:8082;
//	    keepalive 16;
//	}
//
//	server {
//	    listen 127.0.0.1:8080;
//
//	    location /mcp {
//	        proxy_pass http://$mcprt_upstream;
//	        proxy_http_version 1.1;
//	        proxy_set_header Connection "";
//	        proxy_buffering off;            # SSE: pass each event at once
//	        proxy_read_timeout 1h;          # long streams (mcprt sends a keep-alive every 25s)
//	        proxy_connect_timeout 5s;
//	        client_max_body_size 16m;       # mcprt's own -http-max-body
//	    }
//	}
//
// With legacy clients too, a map on the session id's tag (or a task's);
// requests without either (initialize, and most 2026-07-28 requests) go
// round robin (test/e2e/testdata/nginx-legacy.conf):
//
//	# Legacy sessions (2025-03-26 … 2025-11-25) and 2026-07-28 alike. Replica A
//	# runs with -http-session-tag a, B with -http-session-tag b: a session's
//	# requests go to the replica that created it, and so do a 2026-07-28
//	# task's (tasks/get, tasks/update, tasks/cancel name it in Mcp-Name);
//	# other requests without a session (initialize, 2026-07-28) go round robin.
//	map $http_mcp_method $mcprt_task {
//	    ~^tasks/  $http_mcp_name;
//	    default   "";
//	}
//	map $http_mcp_session_id$mcprt_task $mcprt_upstream {
//	    default  mcprt;
//	    ~^a\.    mcprt_a;
//	    ~^b\.    mcprt_b;
//	}
//
//	upstream mcprt {
//	    server 127.0.0.1:8081;
//	    server 127.0.0.1:8082;
//	    keepalive 16;
//	}
//	upstream mcprt_a {
//	    server 127.0.0.1:8081;
//	    keepalive 16;
//	}
//	upstream mcprt_b {
//	    server 127.0.0.1:8082;
//	    keepalive 16;
//	}
//
//	server {
//	    listen 127.0.0.1:8080;
//
//	    location /mcp {
//	        proxy_pass http://$mcprt_upstream;
//	        proxy_http_version 1.1;
//	        proxy_set_header Connection "";
//	        proxy_buffering off;            # SSE: pass each event at once
//	        proxy_read_timeout 1h;          # long streams (mcprt sends a keep-alive every 25s)
//	        proxy_connect_timeout 5s;
//	        client_max_body_size 16m;       # mcprt's own -http-max-body
//	        # The session's replica is gone: answer as mcprt does for a session
//	        # it does not know, 404, and the client initializes again.
//	        error_page 502 = @mcprt_session_gone;
//	    }
//
//	    location @mcprt_session_gone {
//	        if ($http_mcp_session_id = "") {
//	            return 502;
//	        }
//	        default_type application/json;
//	        return 404 '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Found: the replica of this session is gone; send initialize again"}}\n';
//	    }
//	}
//
// When a replica dies: 2026-07-28 requests go to the survivors (a refused
// connection is tried on the next server), and a retry of an
// input_required the dead replica issued completes on any of them; a
// request in flight on it gets nginx's 502, and the client may send it
// again. A legacy session of the dead replica gets 404 with a JSON-RPC
// error on every request, including one in flight, as mcprt answers a
// session it does not know; its GET stream ends; the client initializes
// again and round robin puts the new session on a survivor. Sessions of
// the other replicas notice nothing. With no replica left, initialize gets
// 502. go test ./test/e2e -run Nginx runs both files, as quoted here, in
// front of two replicas and checks all of this (it skips without nginx).
package streamhttp
