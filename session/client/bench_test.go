//go:build unix

package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/session/client"
)

// BenchmarkCall is the call path a gateway forwards through: Call with the
// raw params of a tools/call and a raw result, against mcprt serve (the
// real server, built by TestMain) in the 2026-07-28 era, so every request
// carries the era's _meta and every answer is checked for input_required.
// One call at a time (seq) and many in flight (par: 64 goroutines per
// CPU). Allocations are the client's alone: the server is another process.
func BenchmarkCall(b *testing.B) {
	if mcprtBuildErr != nil {
		b.Skip(mcprtBuildErr)
	}
	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		b.Run(era.String(), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c, err := client.Connect(ctx, client.Command{Path: mcprtPath, Args: []string{"serve"}, Env: []string{"LOG_LEVEL=warn"}},
				&client.Options{Era: era, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			params := json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`)
			call := func() {
				var res json.RawMessage
				if err := c.Call(ctx, "tools/call", params, &res); err != nil {
					b.Fatal(err)
				}
				if len(res) == 0 {
					b.Fatal("empty result")
				}
			}
			b.Run("seq", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					call()
				}
			})
			b.Run("par", func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(64)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						call()
					}
				})
			})
		})
	}
}
