package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// rawServer is a backend written line by line, so that it can answer as
// no library would: before the answer it means, it writes a line that
// must not be taken for it (see runRawServer).
func rawServer(name string) Backend {
	return Backend{Name: name, Command: os.Args[0], Protocol: "legacy",
		Env: []string{testServerEnv + "=raw", "GORACE=atexit_sleep_ms=0"}}
}

// rawTools are the tools of runRawServer. Each answers tools/call with
// {"content":[{"type":"text","text":"ok:<the name it was called by>
// <its arguments>"}]}, after a line the gateway's client must drop:
//   - garbage: the answer cut short (not JSON);
//   - both: a result and an error (not a response);
//   - wrongid: an answer to a request never sent;
//   - zeroid: the id with a leading zero (not JSON);
//   - plain: nothing first.
//
// And three answer otherwise: escaped (a text with escaped quotes,
// backslashes and brackets), failed (isError), spaced (a response with
// whitespace between its members), badutf8 (a text with a byte that is
// not UTF-8).
var rawTools = []string{"garbage", "both", "wrongid", "zeroid", "plain", "escaped", "failed", "spaced", "badutf8"}

func runRawServer() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue // a notification
		}
		id := string(m.ID)
		answer := func(result string) { fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result) }
		ok := func() string {
			text, _ := json.Marshal("ok:" + m.Params.Name + " " + string(m.Params.Arguments))
			return `{"content":[{"type":"text","text":` + string(text) + `}]}`
		}
		const bad = `{"content":[{"type":"text","text":"bad"}]}`
		switch m.Method {
		case "initialize":
			answer(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			var tools []string
			for _, t := range rawTools {
				tools = append(tools, `{"name":"`+t+`","inputSchema":{"type":"object"}}`)
			}
			answer(`{"tools":[` + strings.Join(tools, ",") + `]}`)
		case "tools/call":
			switch m.Params.Name {
			case "garbage":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"bad"}]`+"\n", id)
			case "both":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s,"error":{"code":1,"message":"bad"}}`+"\n", id, bad)
			case "wrongid":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s0000,"result":%s}`+"\n", id, bad)
			case "zeroid":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":0%s,"result":%s}`+"\n", id, bad)
			}
			switch m.Params.Name {
			case "escaped":
				answer(`{"content":[{"type":"text","text":"a\"}]}\\\u0041"}]}`)
			case "failed":
				answer(`{"content":[{"type":"text","text":"no"}],"isError":true}`)
			case "spaced":
				fmt.Fprintf(out, `{ "jsonrpc" : "2.0" , "id" : %s , "result" : %s }`+"\n", id, ok())
			case "badutf8":
				answer("{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}")
			default:
				answer(ok())
			}
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", id)
		}
		out.Flush()
	}
	return 0
}

// TestBackendAnswersRelayed: what a backend answers reaches the client as
// the backend meant it, on both of the gateway's ways of forwarding a
// tool call (started from the session, and on a handler actor): a line
// that is not JSON, not a response, or the answer to another request is
// never taken for the answer; texts with escapes, isError, a response
// spaced out and bytes that are not UTF-8 read as the backend wrote them;
// and the backend gets its own name of the tool (prefix and override
// taken off) and the client's arguments.
func TestBackendAnswersRelayed(t *testing.T) {
	b := rawServer("raw")
	b.Tools = map[string]*ToolOverride{"plain": {Name: "renamed"}}
	g := start(t, b)
	m, _ := g.Server().Method("tools/call")
	if m.Start == nil {
		t.Fatal("tools/call has no Start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	type want struct {
		text    string
		isError bool
	}
	cases := map[string]want{
		"escaped": {`a"}]}\A`, false},
		"failed":  {"no", true},
		"badutf8": {"a\uFFFDb", false},
	}
	for _, tool := range rawTools {
		name, backendName := "raw__"+tool, tool
		if tool == "plain" {
			name = "raw__renamed"
		}
		w, ok := cases[tool]
		if !ok {
			w = want{text: "ok:" + backendName + ` {"n":[1,"é"]}`}
		}
		params := `{"name":"` + name + `","arguments":{"n":[1,"é"]}}`
		check := func(how string, res any, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s %s: %v", name, how, err)
			}
			b, err := res.(*mcp.CallToolResult).AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Content []struct{ Type, Text string }
				IsError bool
			}
			if err := json.Unmarshal(b, &r); err != nil || len(r.Content) != 1 {
				t.Fatalf("%s %s: result %s: %v", name, how, b, err)
			}
			if r.Content[0].Type != "text" || r.Content[0].Text != w.text || r.IsError != w.isError {
				t.Errorf("%s %s: result %s, want text %q isError %v", name, how, b, w.text, w.isError)
			}
		}
		res, err := m.Run(ctx, req("tools/call", params, &peer{}))
		check("on a handler actor", res, err)
		d := &deferred{done: make(chan struct{})}
		if !m.Start(ctx, req("tools/call", params, &peer{}), d) {
			t.Fatalf("%s: the call was not started", name)
		}
		<-d.done
		check("started", d.res, d.err)
	}
}
