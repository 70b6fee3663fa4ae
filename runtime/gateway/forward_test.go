package gateway

import (
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// TestTextResult: the scan of a text-only tool result gives what the full
// decode gives, and declines every result it might read differently.
func TestTextResult(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		fast  bool
		relay string // what relayText gives ("": not relayed; "=": raw itself)
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, true, "="},
		// One block as compact encoders write it (oneTextBlock): texts
		// with escaped quotes and backslashes, isError either way.
		{`{"content":[{"type":"text","text":""}]}`, true, "="},
		{`{"content":[{"type":"text","text":"a\\"}],"isError":true}`, true, "="},
		{`{"content":[{"type":"text","text":"\"}]}\\\""}],"isError":false}`, true, "="},
		{`{"content":[{"type":"text","text":"x\u0022"}],"isError":true,"isError":false}`, true, ""},
		{`{"content":[{"type":"text","text":"x"}],"isError":true,"content":[]}`, true, ""},
		{`{"content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}`, true, "="},
		{`{"content":[{"type":"text","text":"a"},{"text":"b\u00e9\n\"","type":"text"},{"type":"text","text":""}],"isError":true}`, true, "="},
		{` { "content" : [ ] } `, true, "="},
		{`{"resultType":"complete","content":[{"type":"text","text":"x"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b","version":"1"}},"isError":true}`, true, `{"content":[{"type":"text","text":"x"}],"isError":true}`},
		{`{"resultType":"complete","content":[],"structuredContent":null,"_meta":{"io.modelcontextprotocol/serverInfo":{}},"isError":false}`, true, ""},
		// A _meta of the result's own is kept: the decode reads it.
		{`{"resultType":"complete","content":[{"type":"text","text":"x"}],"_meta":{"x":1},"isError":true}`, false, ""},
		{`{"content":[{"type":"text","text":"x"}],"_meta":{"ui":{"a":1}}}`, false, ""},
		{`{"resultType":"input_required","content":[]}`, true, ""},
		{`{"content":[],"structuredContent":null}`, true, ""},
		{`{"content":[{"type":"text","text":"x"}],"isError":false,"isError":true}`, true, ""},
		// A backend's 0xff, as the client hands it on (session/client).
		{"{\"content\":[{\"type\":\"text\",\"text\":\"\uFFFD\"}]}", true, "="},
		{`{"content":[{"type":"text","text":"x","annotations":{"audience":["user"]}}]}`, false, ""},
		{`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, false, ""},
		{`{"content":[{"type":"text","text":"x"},{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}`, false, ""},
		{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`, false, ""},
		{`{"Content":[{"type":"text","text":"x"}]}`, false, ""},
		{`{"content":[{"type":"text","text":"x"}],"IsError":true}`, false, ""},
		// encoding/json reads _metA as _meta: the decode keeps it.
		{`{"content":[{"type":"text","text":"x"}],"_metA":{"0":0}}`, false, ""},
		{`{"content":[{"type":"text"}]}`, false, ""},
		{`{"content":[{"type":"text","text":1}]}`, false, ""},
		{`{"content":["text"]}`, false, ""},
		{`{"content":[],"isError":"yes"}`, false, ""},
		{`{"content":null}`, false, ""},
		{`{}`, false, ""},
		{`null`, false, ""},
	} {
		fast, ok := textResult([]byte(tc.raw))
		if ok != tc.fast {
			t.Errorf("%s: textResult ok=%v", tc.raw, ok)
		}
		relayed, isError, rok := relayText([]byte(tc.raw))
		if full, err := toolResult([]byte(tc.raw)); rok && err == nil && isError != full.IsError {
			t.Errorf("%s: relayText says isError %v, the decode %v", tc.raw, isError, full.IsError)
		}
		switch want := tc.relay; {
		case want == "" && rok, want != "" && !rok,
			want == "=" && string(relayed) != tc.raw,
			want != "=" && want != "" && string(relayed) != want:
			t.Errorf("%s: relayText %s %v, want %s", tc.raw, relayed, rok, want)
		}
		if rok {
			// What is relayed reads as the decode of it does.
			full, err := toolResult(relayed)
			if err != nil {
				t.Fatalf("%s: relayed %s: %v", tc.raw, relayed, err)
			}
			if a, b := encode(t, full), encode(t, mustText(t, tc.raw)); a != b {
				t.Errorf("%s: relayed reads as %s, the result as %s", tc.raw, a, b)
			}
		}
		if !ok {
			continue
		}
		full, err := toolResult(json.RawMessage(tc.raw))
		if err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
		if a, b := encode(t, fast), encode(t, full); a != b {
			t.Errorf("%s:\nscan %s\nfull %s", tc.raw, a, b)
		}
	}
}

func mustText(t *testing.T, raw string) *mcp.CallToolResult {
	t.Helper()
	r, ok := textResult([]byte(raw))
	if !ok {
		t.Fatalf("%s: not a text result", raw)
	}
	return r
}

func encode(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	b, err := r.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := json.Marshal(r)
	if err != nil || string(m) != string(b) {
		t.Fatalf("AppendJSON %s, json.Marshal %s, %v", b, m, err)
	}
	return string(b)
}

// TestToolParams: the client's arguments and _meta go on as they came,
// but for bytes that are not UTF-8, which become U+FFFD.
func TestToolParams(t *testing.T) {
	for _, tc := range []struct{ args, meta, want string }{
		{`{"text":"hi"}`, ``, `{"name":"t","arguments":{"text":"hi"}}`},
		{`{"text":"hi"}`, `{"traceparent":"00-a"}`, `{"name":"t","arguments":{"text":"hi"},"_meta":{"traceparent":"00-a"}}`},
		{"{\"text\":\"caf\xe9\"}", "{\"k\":\"\xff\"}", "{\"name\":\"t\",\"arguments\":{\"text\":\"caf\uFFFD\"},\"_meta\":{\"k\":\"\uFFFD\"}}"},
	} {
		var meta json.RawMessage
		if tc.meta != "" {
			meta = json.RawMessage(tc.meta)
		}
		if got := string(toolParams([]byte(`"t"`), json.RawMessage(tc.args), meta)); got != tc.want {
			t.Errorf("toolParams(%q, %q) = %q, want %q", tc.args, tc.meta, got, tc.want)
		}
	}
}

// TestResultMeta: a backend's result _meta reaches the client as the
// backend wrote it, but for the backend's serverInfo, which is the
// gateway's to give.
func TestResultMeta(t *testing.T) {
	for raw, want := range map[string]string{
		`{"x":1}`: `{"x":1}`,
		`{"io.modelcontextprotocol/serverInfo":{"name":"b"},"ui":{"k":[1,2]},"com.example/n":1.50}`: `{"ui":{"k":[1,2]},"com.example/n":1.50}`,
		`{"io.modelcontextprotocol/serverInfo":{"name":"b"}}`:                                       "",
		`{}`:   "",
		`null`: "",
		`[1]`:  "",
		``:     "",
	} {
		if got := string(resultMeta(json.RawMessage(raw))); got != want {
			t.Errorf("resultMeta(%s) = %s, want %s", raw, got, want)
		}
	}
	res, err := toolResult(json.RawMessage(`{"content":[{"type":"text","text":"x","_meta":{"b":2}}],"_meta":{"io.modelcontextprotocol/serverInfo":{},"ui":{"a":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := encode(t, res), `{"content":[{"type":"text","text":"x","_meta":{"b":2}}],"_meta":{"ui":{"a":1}}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
