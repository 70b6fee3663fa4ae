// Command floor is the smallest stdio server that links hollywood, mcprt's
// actor library: it answers initialize, and every other request with
// "Method not found", on one goroutine. It does nothing else, so its cold
// start and idle RSS are what linking hollywood costs before mcprt does
// anything, the floor beneath mcprt's own figures:
//
//	go build -o /tmp/floor ./test/floor
//	mcprt bench -skip seq,pipe,payload -- /tmp/floor
//
// hollywood is linked, not used: its package initialisation (CPU feature
// detection, protobuf descriptors) and its share of the executable are the
// cost being measured.
package main

import (
	"bufio"
	"encoding/json"
	"os"

	_ "github.com/anthdm/hollywood/actor"
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if out := answer(line); out != nil {
				if _, werr := os.Stdout.Write(out); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// answer returns the response line to one request (nil for a notification
// or a response).
func answer(line []byte) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n")
	}
	if m.ID == nil || m.Method == "" {
		return nil
	}
	var res any
	switch m.Method {
	case "initialize":
		res = map[string]any{
			"protocolVersion": m.Params.ProtocolVersion,
			"capabilities":    map[string]any{},
			"serverInfo":      map[string]string{"name": "floor", "version": "0"},
		}
	case "ping":
		res = map[string]any{}
	default:
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		return append(b, '\n')
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
	return append(b, '\n')
}
