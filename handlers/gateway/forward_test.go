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
		raw    string
		fast   bool
		asItIs bool // textBlocksOnly: sent on as it came
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, true, true},
		{`{"content":[{"type":"text","text":"a"},{"text":"b\u00e9\n\"","type":"text"},{"type":"text","text":""}],"isError":true}`, true, true},
		{` { "content" : [ ] } `, true, true},
		{`{"resultType":"complete","content":[],"structuredContent":null,"_meta":{"x":1},"isError":false}`, true, false},
		{`{"content":[],"structuredContent":null}`, true, false},
		{`{"content":[{"type":"text","text":"x"}],"isError":false,"isError":true}`, true, false},
		{"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}", true, false},
		{`{"content":[{"type":"text","text":"x","annotations":{"audience":["user"]}}]}`, false, false},
		{`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, false, false},
		{`{"content":[{"type":"text","text":"x"},{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}`, false, false},
		{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`, false, false},
		{`{"Content":[{"type":"text","text":"x"}]}`, false, false},
		{`{"content":[{"type":"text","text":"x"}],"IsError":true}`, false, false},
		{`{"content":[{"type":"text"}]}`, false, false},
		{`{"content":[{"type":"text","text":1}]}`, false, false},
		{`{"content":["text"]}`, false, false},
		{`{"content":[],"isError":"yes"}`, false, false},
		{`{"content":null}`, false, false},
		{`{}`, false, false},
		{`null`, false, false},
	} {
		fast, ok := textResult([]byte(tc.raw))
		if ok != tc.fast {
			t.Errorf("%s: textResult ok=%v", tc.raw, ok)
		}
		if asItIs := textBlocksOnly([]byte(tc.raw)); asItIs != tc.asItIs {
			t.Errorf("%s: textBlocksOnly=%v", tc.raw, asItIs)
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
