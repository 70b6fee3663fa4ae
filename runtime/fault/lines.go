package fault

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
)

// The transport faults are lines a client should never send. Each builder
// returns one line, '\n' included, ready to be written to a server's stdin.
// A robust server answers each with at most one error (or, where the line
// is still a valid request, with its result), keeps its output valid, and
// goes on serving.

// GarbageLine returns a line that is not JSON: a '#' and up to 200 random
// bytes (anything but '\n', so NULs, control characters and bytes that are
// not UTF-8 included).
func GarbageLine(rng *rand.Rand) []byte {
	n := 1 + rng.IntN(200)
	b := make([]byte, 0, n+2)
	b = append(b, '#') // no JSON value starts with '#', whatever follows
	for range n {
		c := byte(rng.UintN(256))
		if c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\n')
}

// TruncatedLine returns msg, a compact JSON message without its line ending,
// cut short at a random point: a request whose end never arrives. A proper
// prefix of a compact JSON object is never valid JSON.
func TruncatedLine(msg []byte, rng *rand.Rand) []byte {
	msg = bytes.TrimRight(msg, "\r\n")
	if len(msg) < 2 {
		return []byte("{\n")
	}
	cut := 1 + rng.IntN(len(msg)-1)
	return append(bytes.Clone(msg[:cut]), '\n')
}

// InvalidUTF8Line returns a tools/call of tool whose "text" argument holds
// bytes that are not UTF-8. The server may answer it with a result or an
// error, but what it writes back must be valid UTF-8.
func InvalidUTF8Line(id int64, tool string) []byte {
	return invalidUTF8Line(intID(id), tool, nil)
}

// HugeLine returns a tools/call of tool whose "text" argument is size bytes
// long: a line larger than most servers' read buffers. The id comes first,
// so a server that rejects the line can still name it in its error.
func HugeLine(id int64, tool string, size int) []byte {
	return hugeLine(intID(id), tool, size, nil)
}

// DeepLine returns a tools/call of tool whose arguments carry, besides a
// "text", a value nested depth arrays deep. Past encoding/json's limit of
// 10,000 levels it is a parse error for Go servers; far below it, a stack
// hazard for recursive parsers.
func DeepLine(id int64, tool string, depth int) []byte {
	return deepLine(intID(id), tool, depth, nil)
}

func intID(id int64) json.RawMessage { return strconv.AppendInt(nil, id, 10) }

// callLine builds a compact tools/call request. args is a JSON object
// without its closing brace, so callers can append to it; meta, when set, is
// the 2026-07-28 _meta object.
func callLine(id json.RawMessage, tool string, argsOpen []byte, meta []byte) []byte {
	b := make([]byte, 0, len(argsOpen)+len(meta)+96)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":"tools/call","params":{`...)
	if meta != nil {
		b = append(b, `"_meta":`...)
		b = append(b, meta...)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = appendJSONString(b, tool)
	b = append(b, `,"arguments":`...)
	b = append(b, argsOpen...)
	return append(b, "}}}\n"...)
}

func invalidUTF8Line(id json.RawMessage, tool string, meta []byte) []byte {
	return callLine(id, tool, []byte("{\"text\":\"ok \xff\xfe \xc0\x80 \xed\xa0\x80 end\""), meta)
}

func hugeLine(id json.RawMessage, tool string, size int, meta []byte) []byte {
	args := make([]byte, 0, size+16)
	args = append(args, `{"text":"`...)
	const abc = "abcdefghijklmnopqrstuvwxyz"
	for len(args) < size+9 {
		args = append(args, abc[:min(len(abc), size+9-len(args))]...)
	}
	args = append(args, '"')
	return callLine(id, tool, args, meta)
}

func deepLine(id json.RawMessage, tool string, depth int, meta []byte) []byte {
	args := make([]byte, 0, 2*depth+32)
	args = append(args, `{"text":"deep","deep":`...)
	args = append(args, bytes.Repeat([]byte{'['}, depth)...)
	args = append(args, bytes.Repeat([]byte{']'}, depth)...)
	return callLine(id, tool, args, meta)
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
