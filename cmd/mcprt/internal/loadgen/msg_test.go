package loadgen

import (
	"encoding/json"
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

// The client must not allocate per response: at a million responses a
// second its garbage would show up as the server's latency.
func TestParseResponseDoesNotAllocate(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hi"}]}}`)
	hi := expect{text: []byte(`"hi"`)}
	var r response
	allocs := testing.AllocsPerRun(100, func() {
		if parseResponse(line, &r) != nil || hi.check(&r) != nil {
			t.Fatal("bad parse")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per response, want 0", allocs)
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
