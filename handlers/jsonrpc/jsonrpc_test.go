package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecode(t *testing.T) {
	const (
		parse   = CodeParseError
		invalid = CodeInvalidRequest
	)
	tests := []struct {
		name   string
		line   string
		code   int    // 0: valid
		id     string // the id Decode returns
		kind   Kind
		method string
		params string
	}{
		// Not JSON at all.
		{name: "garbage", line: `hello`, code: parse, id: "null"},
		{name: "truncated object", line: `{"jsonrpc":"2.0","id":1,"method":"ping"`, code: parse, id: "null"},
		{name: "trailing garbage", line: `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, code: parse, id: "null"},
		{name: "two objects", line: `{"jsonrpc":"2.0","id":1,"method":"ping"}{}`, code: parse, id: "null"},
		{name: "empty", line: ``, code: parse, id: "null"},
		{name: "invalid utf-8 outside a string", line: "{\xff}", code: parse, id: "null"},
		// JSON, but not an object.
		{name: "array", line: `[1,2]`, code: invalid, id: "null"},
		{name: "number", line: `42`, code: invalid, id: "null"},
		{name: "string", line: `"ping"`, code: invalid, id: "null"},
		{name: "true", line: `true`, code: invalid, id: "null"},
		{name: "null", line: `null`, code: invalid, id: "null"},
		// jsonrpc member.
		{name: "jsonrpc missing", line: `{"id":1,"method":"ping"}`, code: invalid, id: "1"},
		{name: "jsonrpc 1.0", line: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, code: invalid, id: "1"},
		{name: "jsonrpc number", line: `{"jsonrpc":2.0,"id":"a","method":"ping"}`, code: invalid, id: `"a"`},
		// id member.
		{name: "id null", line: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, code: invalid, id: "null"},
		{name: "id true", line: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, code: invalid, id: "null"},
		{name: "id object", line: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, code: invalid, id: "null"},
		{name: "id array", line: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, code: invalid, id: "null"},
		{name: "id float", line: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, code: invalid, id: "null"},
		{name: "id exponent", line: `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, code: invalid, id: "null"},
		{name: "id negative exponent", line: `{"jsonrpc":"2.0","id":-2E3,"method":"ping"}`, code: invalid, id: "null"},
		// method member.
		{name: "method number", line: `{"jsonrpc":"2.0","id":1,"method":1}`, code: invalid, id: "1"},
		{name: "method null", line: `{"jsonrpc":"2.0","id":1,"method":null}`, code: invalid, id: "1"},
		{name: "method object", line: `{"jsonrpc":"2.0","id":1,"method":{}}`, code: invalid, id: "1"},
		// params member.
		{name: "params string", line: `{"jsonrpc":"2.0","id":1,"method":"x","params":"p"}`, code: invalid, id: "1"},
		{name: "params number", line: `{"jsonrpc":"2.0","id":1,"method":"x","params":3}`, code: invalid, id: "1"},
		{name: "params null", line: `{"jsonrpc":"2.0","id":1,"method":"x","params":null}`, code: invalid, id: "1"},
		{name: "notification params string", line: `{"jsonrpc":"2.0","method":"x","params":"p"}`, code: invalid, id: "null"},
		// Neither a request nor a response.
		{name: "empty object", line: `{}`, code: invalid, id: "null"},
		{name: "only jsonrpc", line: `{"jsonrpc":"2.0"}`, code: invalid, id: "null"},
		{name: "only id", line: `{"jsonrpc":"2.0","id":1}`, code: invalid, id: "1"},
		{name: "result without id", line: `{"jsonrpc":"2.0","result":{}}`, code: invalid, id: "null"},
		{name: "result and error", line: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, code: invalid, id: "1"},
		// Member names are case-sensitive (JSON-RPC 2.0 §3).
		{name: "Method capitalised", line: `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, code: invalid, id: "1"},
		{name: "JSONRPC capitalised", line: `{"JSONRPC":"2.0","id":1,"method":"ping"}`, code: invalid, id: "1"},
		{name: "ID capitalised is not an id", line: `{"jsonrpc":"2.0","ID":1,"method":"ping"}`, id: "null", kind: KindNotification, method: "ping"},
		{name: "Id does not override id", line: `{"jsonrpc":"2.0","id":1,"method":"ping","Id":2}`, id: "1", kind: KindRequest, method: "ping"},

		// Valid messages.
		{name: "request", line: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, id: "1", kind: KindRequest, method: "tools/list"},
		{name: "request string id", line: `{"jsonrpc":"2.0","id":"a-1","method":"ping","params":{}}`, id: `"a-1"`, kind: KindRequest, method: "ping", params: "{}"},
		{name: "request negative id", line: `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, id: "-7", kind: KindRequest, method: "ping"},
		{name: "request huge id", line: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, id: "123456789012345678901234567890", kind: KindRequest, method: "ping"},
		{name: "request array params", line: `{"jsonrpc":"2.0","id":2,"method":"m","params":[1,2]}`, id: "2", kind: KindRequest, method: "m", params: "[1,2]"},
		{name: "request, members in any order and spaced", line: ` { "params" : {"a":1} , "method" : "m\u002fx" , "id" : 3 , "jsonrpc" : "2.0" } `, id: "3", kind: KindRequest, method: "m/x", params: `{"a":1}`},
		{name: "request with extra members", line: `{"jsonrpc":"2.0","id":4,"method":"m","extra":true}`, id: "4", kind: KindRequest, method: "m"},
		{name: "notification", line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, id: "null", kind: KindNotification, method: "notifications/initialized"},
		{name: "response result", line: `{"jsonrpc":"2.0","id":5,"result":{"ok":true}}`, id: "5", kind: KindResponse},
		{name: "response null result", line: `{"jsonrpc":"2.0","id":5,"result":null}`, id: "5", kind: KindResponse},
		{name: "response error", line: `{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}`, id: `"x"`, kind: KindResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Message
			id, err := Decode([]byte(tt.line), &m)
			if string(id) != tt.id {
				t.Errorf("id = %s, want %s", id, tt.id)
			}
			if tt.code != 0 {
				if err == nil {
					t.Fatalf("no error; want %d (decoded %+v)", tt.code, m)
				}
				if err.Code != tt.code {
					t.Fatalf("code %d (%s), want %d", err.Code, err.Message, tt.code)
				}
				if err.Message == "" {
					t.Error("empty error message")
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v, want a %v", err, tt.kind)
			}
			if m.Kind != tt.kind || m.Method != tt.method || string(m.Params) != tt.params {
				t.Errorf("got kind %d method %q params %s; want kind %d method %q params %s",
					m.Kind, m.Method, m.Params, tt.kind, tt.method, tt.params)
			}
			wantMsgID := tt.id
			if tt.kind == KindNotification {
				wantMsgID = ""
			}
			if string(m.ID) != wantMsgID {
				t.Errorf("Message.ID = %s, want %q", m.ID, wantMsgID)
			}
		})
	}
}

func TestDecodeResponseFields(t *testing.T) {
	var m Message
	if _, err := Decode([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`), &m); err != nil {
		t.Fatal(err)
	}
	if m.Result != nil || string(m.Error) != `{"code":-32601,"message":"x"}` {
		t.Errorf("Result %s Error %s", m.Result, m.Error)
	}
	// Decode resets a reused Message.
	if _, err := Decode([]byte(`{"jsonrpc":"2.0","method":"n"}`), &m); err != nil {
		t.Fatal(err)
	}
	if m.Error != nil || m.ID != nil || m.Kind != KindNotification {
		t.Errorf("stale fields after reuse: %+v", m)
	}
}

func TestIsBatch(t *testing.T) {
	for line, want := range map[string]bool{
		`[]`: true, ` [{}]`: true, "\t\r\n[": true,
		`{}`: false, ``: false, `   `: false, `"["`: false, `x[`: false,
	} {
		if got := IsBatch([]byte(line)); got != want {
			t.Errorf("IsBatch(%q) = %v, want %v", line, got, want)
		}
	}
}

// marshalled is what encoding/json makes of the same response.
func marshalled(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type wireResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
}

type wireError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *Error          `json:"error"`
}

type wireNotification struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// awkward strings: HTML characters, quotes, control characters, unicode,
// the JavaScript line separators, invalid UTF-8.
var awkward = []string{
	"", "plain", `say "hi"`, `back\slash`, "<script>&amp;</script>", "tab\there\nnew line\r",
	"\x00\x01\x1f\x7f", "héllo wörld", "日本語", "emoji 😀", "\u2028\u2029", "bad \xff\xfe utf8",
	strings.Repeat("a", 1000) + "<",
}

func TestAppendString(t *testing.T) {
	for _, s := range awkward {
		want := marshalled(t, s)
		if got := string(AppendString(nil, s)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got := string(AppendString([]byte("pre:"), s)); got != "pre:"+want {
			t.Errorf("AppendString appends: got %s", got)
		}
	}
}

// TestAppendStringPositions: the sixteen-at-a-time scan sees every byte
// that needs escaping (or a multi-byte look) wherever it falls in a word,
// and treats every other byte as plain.
func TestAppendStringPositions(t *testing.T) {
	var specials []string
	for c := 0; c < 0x80; c++ {
		specials = append(specials, string(rune(c)))
	}
	specials = append(specials, "\x80", "\xff", "é", "\u2028", "\u2029", "😀", "\xe2\x80")
	few := []string{"\x00", "\x1f", "\"", "\\", "<", ">", "&", "\x7f", "\xff", "é", "\u2028"}
	// Past 8 + 64 bytes the run is searched in windows of 256, 512, ...
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 100, 340, 700, 1000} {
		set := specials
		if n > 40 {
			set = few
		}
		for p := 0; p < n; p++ {
			for _, c := range set {
				s := strings.Repeat("a", p) + c + strings.Repeat("b", n-p-1)
				if got, want := string(AppendString(nil, s)), marshalled(t, s); got != want {
					t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
				}
			}
		}
	}
}

func TestAppendResult(t *testing.T) {
	// The result is copied as is: it is what json.Marshal made of the
	// handler's value, so the whole line is what json.Marshal would make.
	for _, id := range []string{`1`, `"abc"`, `-5`} {
		for _, s := range awkward {
			result := []byte(marshalled(t, map[string]any{"content": []any{map[string]string{"type": "text", "text": s}}, "n": nil}))
			want := marshalled(t, wireResult{"2.0", json.RawMessage(id), result})
			if got := string(AppendResult(nil, json.RawMessage(id), result)); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		}
	}
	// A nil id is written as null, as for AppendError: never `"id":,`.
	got := AppendResult(nil, nil, []byte(`{}`))
	if !json.Valid(got) || string(got) != `{"jsonrpc":"2.0","id":null,"result":{}}` {
		t.Errorf("nil id: got %s", got)
	}
}

func TestAppendError(t *testing.T) {
	for _, id := range []string{`1`, `"x"`, `null`} {
		for _, msg := range awkward {
			for _, data := range []any{nil, map[string]any{"supported": []string{"a", "b"}, "requested": "<v>"}, 42, "s"} {
				e := &Error{Code: CodeInvalidParams, Message: msg, Data: data}
				want := marshalled(t, wireError{"2.0", json.RawMessage(id), e})
				if got := string(AppendError(nil, json.RawMessage(id), e)); got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
			}
		}
	}
	e := newError(CodeMethodNotFound, "nope")
	if got, want := string(AppendError(nil, nil, e)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"nope"}}`; got != want {
		t.Errorf("nil id: got %s, want %s", got, want)
	}
	// Data that cannot be marshalled is left out; the error still goes out.
	e = &Error{Code: CodeInternalError, Message: "m", Data: func() {}}
	if got, want := string(AppendError(nil, json.RawMessage(`1`), e)), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m"}}`; got != want {
		t.Errorf("bad data: got %s, want %s", got, want)
	}
	if got := e.Error(); got != "jsonrpc -32603: m" {
		t.Errorf("Error() = %q", got)
	}
}

func TestAppendNotification(t *testing.T) {
	for _, method := range awkward {
		for _, params := range []any{nil, struct{}{}, map[string]any{"progress": 1, "message": "<&>" + method}} {
			var p json.RawMessage
			if params != nil {
				p = json.RawMessage(marshalled(t, params))
			}
			want := marshalled(t, wireNotification{"2.0", method, p})
			if got := string(AppendNotification(nil, method, p)); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		}
	}
}

// TestAppendedDecode: what the Append functions write decodes back as a
// response (or notification) with the same id.
func TestAppendedDecode(t *testing.T) {
	var m Message
	for _, id := range []string{`7`, `"s"`} {
		for _, b := range [][]byte{
			AppendResult(nil, json.RawMessage(id), []byte(`{}`)),
			AppendError(nil, json.RawMessage(id), newError(CodeInternalError, "x")),
		} {
			got, err := Decode(b, &m)
			if err != nil || m.Kind != KindResponse || string(got) != id {
				t.Errorf("Decode(%s) = %s, %v, kind %d", b, got, err, m.Kind)
			}
		}
	}
	if _, err := Decode(AppendNotification(nil, "n", nil), &m); err != nil || m.Kind != KindNotification {
		t.Errorf("notification: %v kind %d", err, m.Kind)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":""}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":-0,"method":"","params":[]}`,
		`null`, `{`, `"`, `{"id":}`, "{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var m Message
		id, err := Decode(line, &m)
		if !json.Valid(id) {
			t.Fatalf("returned id %q is not JSON", id)
		}
		if err != nil {
			if err.Code != CodeParseError && err.Code != CodeInvalidRequest {
				t.Fatalf("error code %d", err.Code)
			}
			if err.Code == CodeParseError && json.Valid(line) {
				t.Fatalf("parse error for valid JSON %q", line)
			}
			// Whatever it is, the error response is valid JSON.
			if resp := AppendError(nil, id, err); !json.Valid(resp) {
				t.Fatalf("error response %q is not JSON", resp)
			}
			return
		}
		if !json.Valid(line) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
		switch m.Kind {
		case KindRequest, KindResponse:
			if m.ID == nil || !bytes.Equal(id, m.ID) {
				t.Fatalf("kind %d with id %q / %q", m.Kind, m.ID, id)
			}
			if resp := AppendResult(nil, m.ID, []byte(`{}`)); !json.Valid(resp) {
				t.Fatalf("result for id %q is not JSON", m.ID)
			}
		case KindNotification:
			if m.ID != nil {
				t.Fatalf("notification with id %q", m.ID)
			}
		default:
			t.Fatalf("no error and no kind for %q", line)
		}
		if m.Kind != KindResponse && !utf8.ValidString(m.Method) {
			// encoding/json replaces invalid UTF-8; a method name is text.
			t.Fatalf("method %q is not UTF-8", m.Method)
		}
		if m.Params != nil && m.Params[0] != '{' && m.Params[0] != '[' {
			t.Fatalf("params %q", m.Params)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world, a typical small argument"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		var m Message
		if _, err := Decode(line, &m); err != nil {
			b.Fatal(err)
		}
	}
}
