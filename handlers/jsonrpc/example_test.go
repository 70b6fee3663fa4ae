package jsonrpc_test

import (
	"fmt"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// Reading one member of a params object without decoding the rest: Member
// finds the raw value, Unquote turns a string literal into its text.
func ExampleUnquote() {
	params := []byte(`{"name":"echo","arguments":{"text":"caf\u00e9 \"au lait\""}}`)
	args, _ := jsonrpc.Member(params, "arguments")
	lit, _ := jsonrpc.Member(args, "text")
	text, ok := jsonrpc.Unquote(lit)
	fmt.Println(text, ok)
	_, ok = jsonrpc.Unquote([]byte(`42`))
	fmt.Println(ok)
	// Output:
	// café "au lait" true
	// false
}
