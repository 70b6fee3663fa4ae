package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// FuzzDecodeRoundTrip checks Decode against encoding/json, the reference
// for what the line means, and checks that what it accepts can be written
// back: a request re-encoded from the decoded fields decodes to the same
// fields, and every response built for a decoded id (or for an error) is
// one valid message carrying that id and that code.
func FuzzDecodeRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":-7,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","\u0069d":1,"method":"pi\u006eg"}`,
		`{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "ping" , "params" : [ ] }`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\\u00e9<>&\u2028\"}",
		`{"jsonrpc":"2.0","id":1e3,"method":"x"}`, `{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`[]`, `"str"`, `{"jsonrpc":"2.0"`, ``, `{}`, `{"jsonrpc":"2.0","id":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var m jsonrpc.Message
		id, jerr := jsonrpc.Decode(line, &m)
		var ref map[string]json.RawMessage
		refErr := json.Unmarshal(line, &ref)
		if jerr != nil {
			switch {
			case !json.Valid(line):
				if jerr.Code != jsonrpc.CodeParseError {
					t.Fatalf("invalid JSON %q: code %d, want %d", line, jerr.Code, jsonrpc.CodeParseError)
				}
			case jerr.Code != jsonrpc.CodeInvalidRequest:
				t.Fatalf("valid JSON %q: code %d, want %d", line, jerr.Code, jsonrpc.CodeInvalidRequest)
			}
			checkResponse(t, jsonrpc.AppendError(nil, id, jerr), id, jerr.Code)
			return
		}
		if refErr != nil || ref == nil {
			t.Fatalf("accepted %q, which encoding/json does not read as an object (%v)", line, refErr)
		}
		if string(ref["jsonrpc"]) != `"2.0"` {
			t.Fatalf("accepted %q with jsonrpc %s", line, ref["jsonrpc"])
		}
		if !bytes.Equal(m.ID, ref["id"]) || !bytes.Equal(m.Params, ref["params"]) ||
			!bytes.Equal(m.Result, ref["result"]) || !bytes.Equal(m.Error, ref["error"]) {
			t.Fatalf("%q: decoded id %q params %q result %q error %q; encoding/json reads %q %q %q %q",
				line, m.ID, m.Params, m.Result, m.Error, ref["id"], ref["params"], ref["result"], ref["error"])
		}
		if m.ID != nil && !bytes.Equal(id, m.ID) {
			t.Fatalf("returned id %q, message id %q", id, m.ID)
		}
		switch m.Kind {
		case jsonrpc.KindRequest, jsonrpc.KindNotification:
			var method string
			if err := json.Unmarshal(ref["method"], &method); err != nil || method != m.Method {
				t.Fatalf("%q: method %q, encoding/json reads %q (%v)", line, m.Method, method, err)
			}
			// Written back from its parts, the message means the same.
			var b []byte
			b = append(b, `{"jsonrpc":"2.0"`...)
			if m.ID != nil {
				b = append(append(b, `,"id":`...), m.ID...)
			}
			b = jsonrpc.AppendString(append(b, `,"method":`...), m.Method)
			if m.Params != nil {
				b = append(append(b, `,"params":`...), m.Params...)
			}
			b = append(b, '}')
			var again jsonrpc.Message
			if _, err := jsonrpc.Decode(b, &again); err != nil {
				t.Fatalf("re-encoded %q does not decode: %v", b, err)
			}
			if again.Kind != m.Kind || again.Method != m.Method || !bytes.Equal(again.ID, m.ID) || !bytes.Equal(again.Params, m.Params) {
				t.Fatalf("re-encoded %q decodes to %+v, want %+v", b, again, m)
			}
			if m.Kind == jsonrpc.KindRequest {
				checkResponse(t, jsonrpc.AppendResult(nil, m.ID, []byte(`{"ok":true}`)), m.ID, 0)
				checkResponse(t, jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: -32603, Message: m.Method, Data: m.Method}), m.ID, -32603)
			}
		case jsonrpc.KindResponse:
			if _, ok := ref["method"]; ok {
				t.Fatalf("%q has a method but decoded as a response", line)
			}
		default:
			t.Fatalf("%q: no error and no kind", line)
		}
	})
}

// checkResponse reads a response the package wrote, with encoding/json
// (Decode refuses null ids, as a server must on input): one line of JSON,
// jsonrpc "2.0", the id (null when id is nil), and an error with code when
// code is not 0, a result otherwise.
func checkResponse(t *testing.T, b, id json.RawMessage, code int) {
	t.Helper()
	var r map[string]json.RawMessage
	if bytes.IndexByte(b, '\n') >= 0 || json.Unmarshal(b, &r) != nil || r == nil {
		t.Fatalf("response %q is not one line holding a JSON object", b)
	}
	// encoding/json lets bytes that are not UTF-8 through; MCP's stdout,
	// and JSON itself (RFC 8259), do not.
	if !utf8.Valid(b) {
		t.Fatalf("response %q is not valid UTF-8", b)
	}
	if id == nil {
		id = jsonrpc.NullID
	}
	if string(r["jsonrpc"]) != `"2.0"` || !bytes.Equal(r["id"], id) || len(r) != 3 {
		t.Fatalf("response %q: want jsonrpc 2.0, id %s and one of result and error", b, id)
	}
	if code == 0 {
		if r["result"] == nil {
			t.Fatalf("response %q: want a result", b)
		}
		return
	}
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if json.Unmarshal(r["error"], &e) != nil || e.Code == nil || *e.Code != code || e.Message == nil {
		t.Fatalf("response %q: want an error with code %d and a message", b, code)
	}
}
