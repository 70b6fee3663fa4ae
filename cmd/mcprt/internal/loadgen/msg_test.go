package loadgen

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseResponse(t *testing.T) {
	hi := expect{text: []byte(`"hi"`)}
	for _, tc := range []struct {
		line    string
		wantErr bool   // parseResponse fails
		id      int64  // when idOK
		method  bool   // from the server, not a response
		check   string // "" when hi.check passes, else a substring of its error
	}{
		{line: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`, id: 7},
		{line: `{"result":{"content":[{"text":"hi","type":"text"}],"isError":false},"id":8,"jsonrpc":"2.0"}`, id: 8},
		{line: `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"h\u0069"}]}}`, id: 9},
		{line: `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"ho"}]}}`, id: 9, check: "wrong text"},
		{line: `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"hi"}],"isError":true}}`, id: 9, check: "isError"},
		{line: `{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`, id: 9, check: "no content"},
		{line: `{"jsonrpc":"2.0","id":9,"result":[]}`, id: 9, check: "not an object"},
		{line: `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found"}}`, id: 9, check: "-32601"},
		{line: `{"jsonrpc":"2.0","id":9}`, id: 9, check: "neither"},
		{line: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`, method: true},
		{line: `{"jsonrpc":"2.0","id":9,"result":{}} x`, wantErr: true},
		{line: `not json`, wantErr: true},
		{line: `[{"jsonrpc":"2.0","id":9,"result":{}}]`, wantErr: true},
		{line: `{"jsonrpc":"2.0","id":9,"result":{"content":[{"text":"hi}]}}`, wantErr: true},
	} {
		var r response
		err := parseResponse([]byte(tc.line), &r)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: parse error %v, want error %v", tc.line, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if r.method != tc.method {
			t.Errorf("%s: method %v, want %v", tc.line, r.method, tc.method)
		}
		if tc.method {
			continue
		}
		if !r.idOK || r.id != tc.id {
			t.Errorf("%s: id %d (ok %v), want %d", tc.line, r.id, r.idOK, tc.id)
		}
		err = hi.check(&r)
		switch {
		case tc.check == "" && err != nil:
			t.Errorf("%s: check: %v", tc.line, err)
		case tc.check != "" && (err == nil || !strings.Contains(err.Error(), tc.check)):
			t.Errorf("%s: check: %v, want an error about %q", tc.line, err, tc.check)
		}
	}
}

// raceEnabled is set when the tests run under -race (race_test.go).
var raceEnabled bool

// The client must not allocate per response: at a million responses a
// second its garbage would show up as the server's latency.
func TestParseResponseDoesNotAllocate(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hi"}]}}`)
	hi := expect{text: []byte(`"hi"`)}
	var r response
	if raceEnabled {
		// jsonrpc.Valid's stack of open containers lives on the goroutine
		// stack only when the compiler may put append's backing array
		// there, which it does not under -race.
		t.Skip("allocates under -race")
	}
	allocs := testing.AllocsPerRun(100, func() {
		if parseResponse(line, &r) != nil || hi.check(&r) != nil {
			t.Fatal("bad parse")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per response, want 0", allocs)
	}
}

// validityCases are lines that are valid JSON and lines that are not:
// parseResponse must accept exactly the objects among the first.
var validityCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e10`, `-12.25E-3`, `true`, `false`, `null`,
	` { "a" : [ 1 , 2 , { "b" : null } ] } `,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`"\u00e9\n\t\"\\\/"`, `"é"`, `{"a":1,"a":2}`, "\t{\"id\":1}\r\n",
	// Invalid.
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`,
	`tru`, `nul`, `"abc`, "\"a\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, `{"a":1}}`, `[1 2]`, `{"a" 1}`,
	`1 2`, `{} {}`, `NaN`, `[`, `[[[]]`, `{"id":1,"result":{"content":[{"text":"hi\u00"}]}}`,
	"{\"id\":1,\"result\":{\"content\":[{\"text\":\"h\ni\"}]}}",
}

// responseCases are response-shaped lines, including the corners where
// encoding/json's answer is easy to miss: duplicated members (the last one
// counts), escaped keys, space everywhere, members of the wrong type.
var responseCases = []string{
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	` { "id" : 7 , "result" : { "isError" : true , "content" : [ { "text" : "no" } , { "text" : "hi" } ] } } `,
	`{"\u0069d":8,"r\u0065sult":{"cont\u0065nt":[{"t\u0065xt":"hi"}],"is\u0045rror":true}}`,
	`{"id":1,"id":2,"result":{"content":[{"text":"a"}]},"result":{"content":[{"type":"text"}]}}`,
	`{"id":1,"result":{"isError":true,"isError":false,"content":[{"text":"a","text":1}]}}`,
	`{"id":1,"result":{"content":[{"text":"a"}],"content":{"text":"b"}}}`,
	`{"id":1,"result":{"content":[7,{"text":"a"}]}}`,
	`{"id":1,"result":{"content":[]}}`,
	`{"id":1,"result":{"content":[ ]}}`,
	`{"id":1,"result":{"content":[{}]}}`,
	`{"id":1,"result":{"content":[{"deep":[[{"text":"x"}]],"text":"y"}]}}`,
	`{"id":1,"result":{"isError":"true","content":"text"}}`,
	`{"id":1,"result":null}`, `{"id":1,"result":[{"text":"a"}]}`, `{"id":1,"result":"x"}`,
	`{"id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`{"id":"7","error":{"code":1.5,"message":7,"data":{"message":"x"}}}`,
	`{"id":7,"error":{"code":99999999999999999999,"message":"big"}}`,
	`{"id":7,"error":{"message":"a","message":"b"},"error":"flat"}`,
	`{"id":-1}`, `{"id":007}`, `{"id":1e3}`, `{"id":123456789012345678}`, `{"id":1234567890123456789}`,
	`{"method":null}`, `{"jsonrpc":"2.0","method":"ping","id":3}`,
	`{"Id":1,"RESULT":{"content":[{"text":"a"}]}}`,
	"{\"id\":1,\"result\":{\"content\":[{\"text\":\"\xff\xfe\"}]}}",
}

// parseReference is parseResponse written with encoding/json: the
// definition that parseResponse, which must not allocate, is held to.
func parseReference(line []byte) (response, error) {
	var r response
	if !json.Valid(line) {
		return r, errSyntax
	}
	var top map[string]json.RawMessage
	if line := strings.TrimLeft(string(line), " \t\r\n"); line[0] != '{' {
		return r, errNotObject
	}
	if err := json.Unmarshal(line, &top); err != nil {
		panic(err)
	}
	object := func(raw []byte) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if len(raw) > 0 && raw[0] == '{' {
			if err := json.Unmarshal(raw, &m); err != nil {
				panic(err)
			}
		}
		return m
	}
	if id, ok := top["id"]; ok {
		r.rawID = id
		r.hasID = string(id) != "null"
		r.id, r.idOK = parseID(id)
	}
	_, r.method = top["method"]
	if res, ok := top["result"]; ok {
		r.result = res
		m := object(res)
		r.toolError = string(m["isError"]) == "true"
		if c := m["content"]; len(c) > 0 && c[0] == '[' {
			var elems []json.RawMessage
			if err := json.Unmarshal(c, &elems); err != nil {
				panic(err)
			}
			if len(elems) > 0 {
				if t := object(elems[0])["text"]; len(t) > 0 && t[0] == '"' {
					r.text = t
				}
			}
		}
	}
	if e, ok := top["error"]; ok {
		r.errObj = e
		m := object(e)
		if code, ok := m["code"]; ok {
			r.errCode, _ = strconv.ParseInt(string(code), 10, 64)
		}
		if msg := m["message"]; len(msg) > 0 && msg[0] == '"' {
			r.errMsg = msg
		}
	}
	return r, nil
}

func checkAgainstReference(t *testing.T, line string) {
	t.Helper()
	var got response
	err := parseResponse([]byte(line), &got)
	want, wantErr := parseReference([]byte(line))
	if !errors.Is(err, wantErr) {
		t.Fatalf("parseResponse(%q): error %v, encoding/json says %v", line, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("parseResponse(%q):\n got %+v\nwant %+v", line, got, want)
	}
}

func TestParseResponseAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range append(validityCases, responseCases...) {
		checkAgainstReference(t, c)
	}
}

func FuzzParseResponse(f *testing.F) {
	for _, c := range append(validityCases, responseCases...) {
		f.Add(c)
	}
	f.Fuzz(checkAgainstReference)
}

// A hostile server's nesting is refused past encoding/json's 10,000 levels
// without costing the client its stack, and accepted below it, however
// deep the member the checks skip over.
func TestParseResponseDeepNesting(t *testing.T) {
	line := func(n int) []byte { // result.content[0] is 4 levels deep
		return []byte(`{"id":1,"result":{"content":[{"deep":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `,"text":"hi"}]}}`)
	}
	var r response
	if err := parseResponse(line(10000-4), &r); err != nil || string(r.text) != `"hi"` {
		t.Errorf("10,000 levels: error %v, text %s", err, r.text)
	}
	if err := parseResponse(line(10000-3), &r); err != errSyntax {
		t.Errorf("10,001 levels: error %v, want %v", err, errSyntax)
	}
	if err := parseResponse(line(1<<22), &r); err != errSyntax {
		t.Errorf("4M levels: error %v, want %v", err, errSyntax)
	}
	if err := parseResponse([]byte(strings.Repeat("[", 1<<22)), &r); err != errSyntax {
		t.Errorf("4M open brackets: error %v, want %v", err, errSyntax)
	}
}

func TestRequests(t *testing.T) {
	meta := metaObject(ModernVersion)
	for _, tc := range []struct {
		name string
		q    request
		want string
	}{
		{"ping", newRequest("ping", nil, nil), `{"id":42,"jsonrpc":"2.0","method":"ping"}`},
		{"legacy call", newRequest("tools/call", toolCallParams("echo", []byte(`{"text":"hi"}`)), nil),
			`{"id":42,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"text":"hi"},"name":"echo"}}`},
		{"modern call", newRequest("tools/call", toolCallParams("echo", []byte(`{"text":"hi"}`)), meta),
			`{"id":42,"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"text":"hi"},"name":"echo"}}`},
		{"modern discover", newRequest("server/discover", nil, meta),
			`{"id":42,"jsonrpc":"2.0","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{"modern empty params", newRequest("tools/list", []byte(`{}`), meta),
			`{"id":42,"jsonrpc":"2.0","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
	} {
		b := tc.q.append(nil, 42)
		if !strings.HasSuffix(string(b), "}\n") || strings.Count(string(b), "\n") != 1 {
			t.Errorf("%s: %q is not one line", tc.name, b)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("%s: %q: %v", tc.name, b, err)
			continue
		}
		canon, _ := json.Marshal(v)
		if string(canon) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, canon, tc.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i))
	}
	for _, tc := range []struct{ p, want int }{{50, 50}, {90, 90}, {99, 99}, {100, 100}, {1, 1}} {
		if got := pct(ds, tc.p); int(got) != tc.want {
			t.Errorf("p%d = %d, want %d", tc.p, got, tc.want)
		}
	}
	if got := pct(ds[:1], 99); got != 1 {
		t.Errorf("p99 of one sample = %d", got)
	}
}
