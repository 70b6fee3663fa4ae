// Package loadgentest is a deliberately small, deliberately breakable MCP
// server for the load generator's tests: it answers the handshake of both
// eras, tools/list, ping and tools/call echo, and fails on cue (exits, lies,
// goes silent) so that the generator's failure paths can be exercised
// without timing tricks.
//
// Tests run it in a child process: the test binary re-executes itself with
// EnvVar set and a -test.run pattern selecting a test that calls
// ServeIfChild first.
package loadgentest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// EnvVar holds the fake server's behaviour in the child process:
//
//	ok            answer everything correctly
//	die-after=N   exit with status 3 on tools/call number N+1
//	wrong-after=N from call N+1 on, echo a different text
//	stall-after=N from call N+1 on, read but never answer
const EnvVar = "MCPRT_LOADGENTEST_SERVER"

// ServeIfChild runs the fake server on stdin/stdout and exits the process
// when EnvVar is set; otherwise it returns at once.
func ServeIfChild() {
	mode, ok := os.LookupEnv(EnvVar)
	if !ok {
		return
	}
	if err := Serve(os.Stdin, os.Stdout, mode); err != nil {
		fmt.Fprintln(os.Stderr, "loadgentest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve answers requests from in on out until in ends.
func Serve(in io.Reader, out io.Writer, mode string) error {
	kind, n, _ := strings.Cut(mode, "-after=")
	limit, err := strconv.Atoi(n)
	if kind != "ok" && err != nil {
		return fmt.Errorf("bad mode %q", mode)
	}
	if kind == "ok" {
		limit = -1
	}
	br := bufio.NewReaderSize(in, 64<<10)
	bw := bufio.NewWriter(out)
	calls := 0
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("unreadable request %q: %v", line, err)
		}
		if m.ID == nil {
			continue // a notification
		}
		var result any
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]string{"name": "loadgentest", "version": "1"}}
		case "server/discover":
			result = map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}},
				"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]string{"name": "loadgentest", "version": "1"}}}
		case "tools/list":
			result = map[string]any{"tools": []map[string]any{{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}
		case "ping":
			result = map[string]any{}
		case "tools/call":
			calls++
			text := m.Params.Arguments.Text
			if limit >= 0 && calls > limit {
				switch kind {
				case "die":
					bw.Flush()
					os.Exit(3)
				case "wrong":
					text += " (wrong)"
				case "stall":
					bw.Flush()
					// Keep reading so the client is never blocked writing,
					// and answer nothing more.
					_, err := io.Copy(io.Discard, br)
					return err
				}
			}
			result = map[string]any{"content": []map[string]string{{"type": "text", "text": text}}}
		default:
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", m.ID)
			continue
		}
		res, _ := json.Marshal(result)
		fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, res)
		// Answer all the whole requests already read in one write, as
		// servers do; a partial one may never be completed before the
		// client has its answers.
		if rest, _ := br.Peek(br.Buffered()); !bytes.Contains(rest, []byte{'\n'}) {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}
