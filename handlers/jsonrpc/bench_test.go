package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// Lines as clients send them: the hot path is tools/call, in both eras.
var benchDecodeLines = []struct {
	name string
	line []byte
}{
	{"tools/call", []byte(`{"jsonrpc":"2.0","id":123456,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"}}}`)},
	{"tools/call-modern", []byte(`{"jsonrpc":"2.0","id":123456,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"hello, world"}}}`)},
	{"ping", []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)},
	{"notification", []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)},
	{"tools/call-64KiB", append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`),
		bytes.Repeat([]byte("abcdefgh"), 8<<10)...), `"}}}`...)},
}

// BenchmarkDecodeLine: one line into a Message, as the session does for every
// input line.
func BenchmarkDecodeLine(b *testing.B) {
	for _, bc := range benchDecodeLines {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.line)))
			var m jsonrpc.Message
			for b.Loop() {
				if _, err := jsonrpc.Decode(bc.line, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchResult is what a tools/call echo handler's result marshals to.
var benchResult = []byte(`{"content":[{"type":"text","text":"hello, world"}]}`)

// BenchmarkAppendResult: the success envelope around a marshalled result.
// "reused" appends into a buffer kept across calls; "fresh" allocates one of
// the right size per response, as a handler's reply does.
func BenchmarkAppendResult(b *testing.B) {
	id := json.RawMessage("123456")
	b.Run("reused", func(b *testing.B) {
		b.ReportAllocs()
		var dst []byte
		for b.Loop() {
			dst = jsonrpc.AppendResult(dst[:0], id, benchResult)
		}
		b.SetBytes(int64(len(dst)))
	})
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		var dst []byte
		for b.Loop() {
			dst = jsonrpc.AppendResult(make([]byte, 0, len(benchResult)+len(id)+40), id, benchResult)
		}
		b.SetBytes(int64(len(dst)))
	})
}

// BenchmarkAppendError: a -32602 with a message, as for a bad tools/call.
func BenchmarkAppendError(b *testing.B) {
	b.ReportAllocs()
	id := json.RawMessage("123456")
	e := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: tools/call needs a string name and an object of arguments"}
	var dst []byte
	for b.Loop() {
		dst = jsonrpc.AppendError(dst[:0], id, e)
	}
}

// BenchmarkAppendString: plain text is copied in runs; the escaped and
// non-ASCII cases escape or decode rune by rune. 1 MiB is a large tool
// result's text.
func BenchmarkAppendString(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"plain-100B", string(bytes.Repeat([]byte("abcdefghij"), 10))},
		{"escaped-100B", string(bytes.Repeat([]byte("a\"b<c>\n\tdé"), 9))},
		{"plain-1MiB", string(bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyzABCDEF"), 1<<15))},
		{"utf8-1MiB", string(bytes.Repeat([]byte("héllo, wörld ✓ "), 1<<16))},
		{"prose-1MiB", string(bytes.Repeat([]byte("The \"limit\" server answers at once & never waits; its lines are short.\n"), 1<<20/73))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.s)))
			var dst []byte
			for b.Loop() {
				dst = jsonrpc.AppendString(dst[:0], bc.s)
			}
		})
	}
}

// BenchmarkMembersLine: the member scan of a typical tools/call line, keys
// interned (0 allocations).
func BenchmarkMembersLine(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi 12345"}}}`)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		jsonrpc.Members(line, func(k string, v []byte) bool { n += len(k); return true })
	}
}
