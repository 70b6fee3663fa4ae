package main

import (
	"encoding/json"
	"testing"
)

// The floor must be a real server, or its figures measure nothing: a client
// has to get through the handshake with it.
func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		line, want string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"id":7,"jsonrpc":"2.0","result":{"capabilities":{},"protocolVersion":"2025-06-18","serverInfo":{"name":"floor","version":"0"}}}`},
		{`{"jsonrpc":"2.0","id":"p","method":"ping"}`, `{"id":"p","jsonrpc":"2.0","result":{}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"error":{"code":-32601,"message":"Method not found"},"id":1,"jsonrpc":"2.0"}`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ``},
		{`{"jsonrpc":`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
	} {
		got := answer([]byte(tc.line))
		if tc.want == "" {
			if got != nil {
				t.Errorf("%s: answered %s", tc.line, got)
			}
			continue
		}
		if len(got) == 0 || got[len(got)-1] != '\n' || !json.Valid(got) {
			t.Fatalf("%s: not one JSON line: %q", tc.line, got)
		}
		if string(got[:len(got)-1]) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.line, got, tc.want)
		}
	}
}
