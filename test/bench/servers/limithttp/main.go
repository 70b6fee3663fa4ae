// Command limithttp is the smallest honest Streamable HTTP MCP server: a
// bare net/http handler with encoding/json, and nothing else. It is the
// yardstick of the HTTP comparison, what a server costs when it does no
// more than the protocol asks, in both eras on one endpoint:
//
//   - 2026-07-28 (the request's MCP-Protocol-Version header names it): no
//     session; each POST is answered on its own, server/discover included.
//   - legacy (2025-03-26 … 2025-11-25): initialize issues an Mcp-Session-Id;
//     every later request must carry a live one (404 otherwise); DELETE
//     ends it.
//
// It answers initialize, server/discover, ping, tools/list and tools/call
// echo {text}, one JSON body per request (never SSE), on the request's own
// goroutine. Notifications get 202. No validation beyond decoding, no
// flow control, no cancellation, no GET stream.
//
//	limithttp [-addr 127.0.0.1:0]
//
// It prints "limithttp: serving Streamable HTTP on http://ADDR/mcp" on
// stderr once it listens.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
)

const modern = "2026-07-28"

// legacy revisions that Streamable HTTP exists in, newest first.
var legacy = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolResult struct {
	Content []content `json:"content"`
}

var serverInfo = map[string]string{"name": "bench-limithttp", "version": "1.0.0"}

var tools = json.RawMessage(`{"tools":[{"name":"echo","description":"Returns its text argument unchanged.",` +
	`"inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}`)

// sessions are the live legacy session ids.
var sessions sync.Map

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func write(w http.ResponseWriter, status int, r response) {
	r.JSONRPC = "2.0"
	if r.ID == nil {
		r.ID = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(r)
}

func handle(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		if _, ok := sessions.LoadAndDelete(r.Header.Get("Mcp-Session-Id")); !ok {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		write(w, http.StatusBadRequest, response{Error: &rpcError{-32700, "Parse error"}})
		return
	}
	isModern := r.Header.Get("Mcp-Protocol-Version") == modern
	if !isModern && req.Method != "initialize" {
		if _, ok := sessions.Load(r.Header.Get("Mcp-Session-Id")); !ok {
			http.Error(w, "unknown or missing session", http.StatusNotFound)
			return
		}
	}
	if req.ID == nil {
		w.WriteHeader(http.StatusAccepted) // a notification
		return
	}
	switch {
	case req.Method == "initialize" && !isModern:
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		v := legacy[0]
		if slices.Contains(legacy, p.ProtocolVersion) {
			v = p.ProtocolVersion
		}
		id := newSessionID()
		sessions.Store(id, struct{}{})
		w.Header().Set("Mcp-Session-Id", id)
		write(w, http.StatusOK, response{ID: req.ID, Result: map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      serverInfo,
		}})
	case req.Method == "server/discover" && isModern:
		write(w, http.StatusOK, response{ID: req.ID, Result: map[string]any{
			"supportedVersions": append([]string{modern}, legacy...),
			"capabilities":      map[string]any{"tools": map[string]any{}},
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": serverInfo},
		}})
	case req.Method == "ping" && !isModern:
		write(w, http.StatusOK, response{ID: req.ID, Result: struct{}{}})
	case req.Method == "tools/list":
		write(w, http.StatusOK, response{ID: req.ID, Result: tools})
	case req.Method == "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Text *string `json:"text"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Name != "echo" || p.Arguments.Text == nil {
			write(w, http.StatusOK, response{ID: req.ID, Error: &rpcError{-32602, "Invalid params"}})
			return
		}
		write(w, http.StatusOK, response{ID: req.ID, Result: toolResult{Content: []content{{Type: "text", Text: *p.Arguments.Text}}}})
	default:
		write(w, http.StatusOK, response{ID: req.ID, Error: &rpcError{-32601, "Method not found"}})
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("limithttp: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", handle)
	fmt.Fprintf(os.Stderr, "limithttp: serving Streamable HTTP on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
