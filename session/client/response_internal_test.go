package client

import (
	"bytes"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// plainResponseLines are lines plainResponse must read as jsonrpc.Decode
// does, or leave to it.
var plainResponseLines = []string{
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":0,"result":{}}`,
	`{"jsonrpc":"2.0","id":123456789012345678,"result":[1,"a",null]}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	// Left to Decode: refused by it, or not the plain shape.
	`{"jsonrpc":"2.0","id":01,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"error":{"code":1,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":{"a":2}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":}}`,
	`{"jsonrpc":"2.0","id":1,"result": {} }`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\v{}}",
	`{"jsonrpc":"2.0","id":1,"result":{}`,
	`{"jsonrpc":"2.0","id":1,"result":}`,
	`{"jsonrpc":"2.0","id":"1","result":{}}`,
	`{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}`,
	`{"jsonrpc":"2.0","id":-1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
	`{"id":1,"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`,
}

// TestPlainResponse: the shortcut for a response as servers mostly write
// it takes only lines Decode reads as that response, and reads them the
// same; it declines the rest (Decode then says what they are).
func TestPlainResponse(t *testing.T) {
	took := 0
	for _, line := range plainResponseLines {
		if checkPlainResponse(t, []byte(line)) {
			took++
		}
	}
	if took != 4 {
		t.Errorf("took %d lines, want the first 4", took)
	}
}

// FuzzPlainResponse: as TestPlainResponse, for any line.
func FuzzPlainResponse(f *testing.F) {
	for _, line := range plainResponseLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkPlainResponse(t, line) })
}

func checkPlainResponse(t *testing.T, line []byte) bool {
	t.Helper()
	result, id, ok := plainResponse(line)
	if !ok {
		return false
	}
	var m jsonrpc.Message
	if _, err := jsonrpc.Decode(line, &m); err != nil {
		t.Fatalf("%s: plainResponse took it, Decode: %v", line, err)
	}
	if m.Kind != jsonrpc.KindResponse || m.Error != nil || !bytes.Equal(m.ID, id) || !bytes.Equal(m.Result, result) {
		t.Fatalf("%s: plainResponse reads id %s result %s; Decode %+v", line, id, result, m)
	}
	if _, ok := ourID(id); !ok {
		t.Fatalf("%s: id %s is none of ours", line, id)
	}
	return true
}
