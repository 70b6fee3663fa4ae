package loadgen

import "testing"

// echoResponse is an echo server's answer to tools/call echo(text), in the
// member order the usual servers write.
func echoResponse(id string, text []byte) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"`)
	b = append(b, text...)
	return append(b, `"}]}}`...)
}

// BenchmarkParseResponse: the check every response gets, in the sequential
// and pipelined phases ("echo") and in the payload phase ("echo-1MiB").
// It must stay far cheaper than the server's side of the call.
func BenchmarkParseResponse(b *testing.B) {
	for _, bc := range []struct {
		name string
		line []byte
	}{
		{"echo", echoResponse("123456", []byte("hello, world"))},
		{"echo-1MiB", echoResponse("123456", randomText(1<<20))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.line)))
			var r response
			for b.Loop() {
				if err := parseResponse(bc.line, &r); err != nil || r.text == nil {
					b.Fatal("bad parse", err)
				}
			}
		})
	}
}
