package sessionactor

import (
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// An error's Outcome names its data.scope, as handlers.Access makes it or
// as a gateway forwards it decoded.
func TestOutcomeOfScope(t *testing.T) {
	for _, data := range []any{map[string]string{"scope": "a b"}, map[string]any{"scope": "a b"}} {
		o := outcomeOf(&jsonrpc.Error{Code: jsonrpc.CodeInsufficientScope, Data: data})
		if o.Code != jsonrpc.CodeInsufficientScope || o.Scope != "a b" {
			t.Errorf("outcomeOf(%T) = %+v, want scope \"a b\"", data, o)
		}
	}
	if o := outcomeOf(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: 3}); o.Scope != "" {
		t.Errorf("outcomeOf(data 3) = %+v, want no scope", o)
	}
}

func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		code   int
		modern bool
		want   int
	}{
		{0, true, 200}, {0, false, 200},
		{jsonrpc.CodeServerBusy, false, 503}, {jsonrpc.CodeServerBusy, true, 503},
		{jsonrpc.CodeMethodNotFound, false, 200}, {jsonrpc.CodeMethodNotFound, true, 404},
		{jsonrpc.CodeHeaderMismatch, true, 400}, {jsonrpc.CodeMissingClientCapability, true, 400},
		{jsonrpc.CodeUnsupportedProtocolVersion, true, 400}, {jsonrpc.CodeUnsupportedProtocolVersion, false, 200},
		{jsonrpc.CodeInvalidParams, true, 200}, // a handler's: the request was well formed
	} {
		if got := statusOf(c.code, c.modern); got != c.want {
			t.Errorf("statusOf(%d, %v) = %d, want %d", c.code, c.modern, got, c.want)
		}
	}
}
