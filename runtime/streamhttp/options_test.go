package streamhttp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/session"
)

// TestCrashPolicyOverHTTP: the session options are the stdio ones
// (session.Options, embedded), so an HTTP session honours a crash policy,
// which the hand copy of the fields used to drop: past CrashIntensity
// panics within CrashPeriod, the tool is suspended, as on stdio
// (session's TestCrashLoopSuspend), and other tools are not.
func TestCrashPolicyOverHTTP(t *testing.T) {
	f := start(t, testServer(nil), streamhttp.Options{Options: session.Options{CrashIntensity: 2, CrashPeriod: time.Hour}})
	sid := f.initialize(`{}`)
	s := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	for i := range 3 {
		r := f.do("POST", `{"jsonrpc":"2.0","id":`+string(rune('1'+i))+`,"method":"tools/call","params":{"name":"panic"}}`, s)
		if !strings.Contains(string(r.last()["result"]), `"isError":true`) {
			t.Fatalf("panic %d: %v", i, r.msgs)
		}
	}
	r := f.do("POST", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"panic"}}`, s)
	if e := string(r.last()["error"]); !strings.Contains(e, "crash-looping and suspended") {
		t.Fatalf("the 4th panic within CrashPeriod: %v; want the tool suspended", r.msgs)
	}
	r = f.do("POST", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fine"}}}`, s)
	if !strings.Contains(string(r.last()["result"]), `"text":"fine"`) {
		t.Fatalf("other tools must be unaffected: %v", r.msgs)
	}
}
