// Command limit is the smallest honest stdio MCP server: a hand-written
// loop over newline-delimited JSON-RPC with encoding/json, and nothing
// else. It is the yardstick of the comparison, what a server costs when it
// does no more than the protocol asks: it reads stdin line by line and
// answers initialize, ping, tools/list and tools/call echo on the read
// loop itself, with one write per response. sleep, the one tool that would
// block the loop, runs on a goroutine. No supervision, no validation beyond
// decoding, no back-pressure, no cancellation.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

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
	IsError bool      `json:"isError,omitempty"`
}

func textResult(s string) toolResult { return toolResult{Content: []content{{Type: "text", Text: s}}} }

var versions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

var tools = json.RawMessage(`{"tools":[` +
	`{"name":"echo","description":"Returns its text argument unchanged.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},` +
	`{"name":"sleep","description":"Sleeps ms milliseconds.","inputSchema":{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]}}]}`)

var (
	mu      sync.Mutex // one response at a time on stdout
	pending sync.WaitGroup
)

func send(r response) {
	r.JSONRPC = "2.0"
	if r.ID == nil {
		r.ID = json.RawMessage("null")
	}
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: r.ID, Error: &rpcError{-32603, err.Error()}})
	}
	mu.Lock()
	_, err = os.Stdout.Write(append(b, '\n'))
	mu.Unlock()
	if err != nil {
		os.Exit(0) // the client went away
	}
}

func handle(line []byte) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		send(response{Error: &rpcError{-32700, "Parse error"}})
		return
	}
	if req.ID == nil || req.Method == "" {
		return // a notification, or a response to nothing we asked
	}
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		v := versions[len(versions)-1]
		if slices.Contains(versions, p.ProtocolVersion) {
			v = p.ProtocolVersion
		}
		send(response{ID: req.ID, Result: map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]string{"name": "bench-limit", "version": "1.0.0"},
		}})
	case "ping":
		send(response{ID: req.ID, Result: struct{}{}})
	case "tools/list":
		send(response{ID: req.ID, Result: tools})
	case "tools/call":
		call(req)
	default:
		send(response{ID: req.ID, Error: &rpcError{-32601, "Method not found"}})
	}
}

func call(req request) {
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Text *string `json:"text"`
			MS   *int    `json:"ms"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		send(response{ID: req.ID, Error: &rpcError{-32602, "Invalid params"}})
		return
	}
	switch {
	case p.Name == "echo" && p.Arguments.Text != nil:
		send(response{ID: req.ID, Result: textResult(*p.Arguments.Text)})
	case p.Name == "sleep" && p.Arguments.MS != nil && *p.Arguments.MS >= 0:
		pending.Add(1)
		go func() {
			defer pending.Done()
			time.Sleep(time.Duration(*p.Arguments.MS) * time.Millisecond)
			send(response{ID: req.ID, Result: textResult("slept")})
		}()
	case p.Name == "echo" || p.Name == "sleep":
		send(response{ID: req.ID, Error: &rpcError{-32602, "Invalid params: missing argument"}})
	default:
		send(response{ID: req.ID, Error: &rpcError{-32602, "Unknown tool " + p.Name}})
	}
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	var long []byte
	for {
		line, err := in.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = in.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 && (len(line) > 2 || line[0] != '\n' && line[0] != '\r') {
			handle(line)
		}
		if err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "limit: reading stdin:", err)
			}
			break
		}
	}
	pending.Wait()
}
