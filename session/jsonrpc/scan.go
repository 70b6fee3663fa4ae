package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// Members calls fn with each member of the JSON object obj, in order, the
// key unescaped and the value as its raw bytes (sub-slices of obj, not
// copies), until fn returns false. It reports false if obj is not an
// object. obj must be valid JSON (json.Valid): the scan checks structure,
// not grammar (Valid checks that), which is what makes it cheap enough to
// run on every line.
//
// Routing needs a handful of top-level members; decoding the whole line into
// a map (or a struct, whose field matching ignores case, which JSON-RPC
// member names do not) would allocate for every member and then decode the
// params again for the handler.
func Members(obj []byte, fn func(key string, val []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) {
		kEnd := skipString(obj, i)
		k := memberKey(obj[i:kEnd])
		i = skipSpace(obj, kEnd)
		i = skipSpace(obj, i+1) // ':'
		vEnd := skipValue(obj, i)
		if !fn(k, obj[i:vEnd]) {
			return true
		}
		i = skipSpace(obj, vEnd)
		if i >= len(obj) || obj[i] == '}' {
			return true
		}
		i = skipSpace(obj, i+1) // ','
	}
	return true
}

// memberKey unquotes a key. The rare escaped key is decoded in a function of
// its own: taking a local's address for json.Unmarshal in Members would move
// that local to the heap for every key of every line.
func memberKey(lit []byte) string {
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	var k string
	_ = json.Unmarshal(lit, &k)
	return k
}

// Member returns the raw value of obj's member name (the last one, as
// encoding/json does with duplicates). obj must be valid JSON.
func Member(obj []byte, name string) (val []byte, ok bool) {
	Members(obj, func(k string, v []byte) bool {
		if k == name {
			val, ok = v, true
		}
		return true
	})
	return val, ok
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		i = plainRun(b, i)
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}
