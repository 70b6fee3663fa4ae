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

// garbageLine returns a line that is not JSON: a '#' and up to 200 random
// bytes (anything but '\n', so NULs, control characters and bytes that are
// not UTF-8 included).
func garbageLine(rng *rand.Rand) []byte {
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

// truncatedLine returns msg, a compact JSON message without its line ending,
// cut short at a random point: a request whose end never arrives. A proper
// prefix of a compact JSON object is never valid JSON.
func truncatedLine(msg []byte, rng *rand.Rand) []byte {
	msg = bytes.TrimRight(msg, "\r\n")
	if len(msg) < 2 {
		return []byte("{\n")
	}
	cut := 1 + rng.IntN(len(msg)-1)
	return append(bytes.Clone(msg[:cut]), '\n')
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
