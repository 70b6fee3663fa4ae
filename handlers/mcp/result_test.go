package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAppendJSONStructured: whatever the structured content, AppendJSON
// writes what json.Marshal writes; it copies raw JSON only when
// json.Marshal would have copied it unchanged.
func TestAppendJSONStructured(t *testing.T) {
	for _, tc := range []struct {
		structured any
		shaped     bool // copied as it is
	}{
		{json.RawMessage(`{"a":1,"b":[true,null,"x y"]}`), true},
		{json.RawMessage(`{"s":"quote \" then space \\\\ ","t":"\u00e9"}`), true},
		{json.RawMessage(`"é — text"`), true},
		{json.RawMessage(`{"a": 1}`), false},
		{json.RawMessage("{\"a\":1}\n"), false},
		{json.RawMessage(`{"html":"<b>&"}`), false},
		{json.RawMessage("{\"ls\":\"a\u2028b\"}"), false},
		{json.RawMessage(`{"s":"a\\","t":"} {"}`), true},
		{json.RawMessage(`{"s":"a\"} {","t":1}`), true},
		{json.RawMessage(`{"s":"a\\\"} {"}`), true},
		{json.RawMessage(`{"s":"a\\", "t":1}`), false},
		{json.RawMessage(`{"s":1`), false},
		{map[string]any{"sum": 3, "html": "<i>"}, false},
	} {
		raw, _ := tc.structured.(json.RawMessage)
		if raw != nil && marshalShaped(raw) != tc.shaped {
			t.Errorf("marshalShaped(%s) = %v", raw, !tc.shaped)
		}
		r := &CallToolResult{Content: []Content{TextContent("t")}, StructuredContent: tc.structured}
		got, err := r.AppendJSON(nil)
		want, werr := json.Marshal((*plainResult)(r))
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%v: AppendJSON = %s, %v; json.Marshal = %s, %v", tc.structured, got, err, want, werr)
		}
	}
}

// TestCallToolResultRead: a result a client reads keeps its structured
// content raw and reads every kind of block.
func TestCallToolResultRead(t *testing.T) {
	in := `{"content":[{"type":"text","text":"hi"},{"type":"image","data":"AQI=","mimeType":"image/png"},` +
		`{"type":"resource_link","uri":"file:///a","name":"a","_meta":null},` +
		`{"type":"resource","resource":{"uri":"file:///b","text":"b"}}],"structuredContent":{"n": 1},"isError":true,"_meta":null}`
	var r CallToolResult
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if raw, ok := r.StructuredContent.(json.RawMessage); !ok || string(raw) != `{"n": 1}` || !r.IsError || r.Meta != nil {
		t.Errorf("read %+v", r)
	}
	c := r.Content
	if len(c) != 4 || c[0].Text != "hi" || !bytes.Equal(c[1].Data, []byte{1, 2}) || c[1].MimeType != "image/png" ||
		c[2].Link == nil || c[2].Link.URI != "file:///a" || c[2].Link.Meta != nil || c[3].Resource == nil || c[3].Resource.Text != "b" {
		t.Errorf("blocks %+v", c)
	}
	if out, err := r.AppendJSON(nil); err != nil || !json.Valid(out) || bytes.Contains(out, []byte(" ")) {
		t.Errorf("written again: %s %v", out, err)
	}
	var none CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"structuredContent":null}`), &none); err != nil || none.StructuredContent != nil {
		t.Errorf("null structured content read as %#v, %v", none.StructuredContent, err)
	}
}
