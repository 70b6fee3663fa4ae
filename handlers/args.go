package handlers

import (
	"encoding/json"
	"strconv"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// StringArg returns the tool argument name, a JSON string, from args (the
// raw arguments object a ToolHandler gets). It reports false when the
// argument is missing or is not a string.
//
// The text is what json.Unmarshal into a string gives (escapes decoded,
// invalid UTF-8 replaced by U+FFFD) for a fraction of the cost: the member
// is found by a scan that skips the other values and, without escapes, the
// text is checked and copied a word at a time. A handler that takes a
// megabyte of text and decodes its arguments with json.Unmarshal spends
// more time there than the rest of the request costs.
//
// Names match exactly, as MCP argument names do (a struct decoded by
// encoding/json would also accept "Text" for "text"); of duplicates the
// last one counts, as with encoding/json. args must be valid JSON, as a
// ToolHandler's args always are.
func StringArg(args json.RawMessage, name string) (string, bool) {
	v, ok := jsonrpc.Member(args, name)
	if !ok {
		return "", false
	}
	return jsonrpc.Unquote(v)
}

// IntArg returns the tool argument name, a JSON integer, from args (see
// StringArg). It reports false when the argument is missing or is not an
// integer that fits an int, as json.Unmarshal into an int reads integers:
// 3 and -3, but not 3.0 or 3e0 (which the JSON Schema type "integer" admits).
func IntArg(args json.RawMessage, name string) (int, bool) {
	v, ok := jsonrpc.Member(args, name)
	if !ok || len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, strconv.IntSize)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// BoolArg returns the tool argument name, a JSON boolean, from args (see
// StringArg). It reports false in ok when the argument is missing or is not
// a boolean.
func BoolArg(args json.RawMessage, name string) (v, ok bool) {
	raw, found := jsonrpc.Member(args, name)
	switch {
	case !found:
		return false, false
	case string(raw) == "true":
		return true, true
	case string(raw) == "false":
		return false, true
	}
	return false, false
}
