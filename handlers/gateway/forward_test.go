package gateway

import (
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/handlers"
)

// TestTextResult: the scan of a text-only tool result gives what the full
// decode gives, and declines every result it might read differently.
func TestTextResult(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		fast bool
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, true},
		{`{"content":[{"type":"text","text":"a"},{"text":"b\u00e9\n\"","type":"text"},{"type":"text","text":""}],"isError":true}`, true},
		{` { "content" : [ ] } `, true},
		{`{"resultType":"complete","content":[],"structuredContent":null,"_meta":{"x":1},"isError":false}`, true},
		{`{"content":[{"type":"text","text":"x"}],"isError":false,"isError":true}`, true},
		{`{"content":[{"type":"text","text":"x","annotations":{"audience":["user"]}}]}`, false},
		{`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, false},
		{`{"content":[{"type":"text","text":"x"},{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}`, false},
		{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`, false},
		{`{"Content":[{"type":"text","text":"x"}]}`, false},
		{`{"content":[{"type":"text","text":"x"}],"IsError":true}`, false},
		{`{"content":[{"type":"text"}]}`, false},
		{`{"content":[{"type":"text","text":1}]}`, false},
		{`{"content":["text"]}`, false},
		{`{"content":[],"isError":"yes"}`, false},
		{`{"content":null}`, false},
		{`{}`, false},
		{`null`, false},
	} {
		fast, ok := textResult([]byte(tc.raw))
		if ok != tc.fast {
			t.Errorf("%s: textResult ok=%v", tc.raw, ok)
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

func encode(t *testing.T, r *handlers.CallToolResult) string {
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
