package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"sync/atomic"
	"unicode/utf8"
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

// ValidMembers is Valid and Members in one pass: it reports whether obj is
// one valid JSON value and whether that value is an object, and calls fn
// with the object's members as Members does (after fn returns false, the
// rest is still checked, not passed on). Every line and every tools/call's
// params were scanned twice, once to check and once to read: for the small
// messages of the protocol, the second scan cost as much as the first.
func ValidMembers(obj []byte, fn func(key string, val []byte) bool) (valid, isObject bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return Valid(obj), false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return skipSpace(obj, i+1) == len(obj), true
	}
	for call := true; ; {
		if i >= len(obj) || obj[i] != '"' {
			return false, true
		}
		kEnd := stringEnd(obj, i)
		if kEnd < 0 {
			return false, true
		}
		key := obj[i:kEnd]
		if i = skipSpace(obj, kEnd); i >= len(obj) || obj[i] != ':' {
			return false, true
		}
		i = skipSpace(obj, i+1)
		vEnd := valueEnd(obj, i, 1)
		if vEnd < 0 {
			return false, true
		}
		if call {
			call = fn(memberKey(key), obj[i:vEnd])
		}
		if i = skipSpace(obj, vEnd); i >= len(obj) {
			return false, true
		}
		switch obj[i] {
		case '}':
			return skipSpace(obj, i+1) == len(obj), true
		case ',':
			i = skipSpace(obj, i+1)
		default:
			return false, true
		}
	}
}

// memberKey unquotes a key. The rare escaped key is decoded in a function of
// its own: taking a local's address for json.Unmarshal in Members would move
// that local to the heap for every key of every line.
func memberKey(lit []byte) string {
	body := lit[1 : len(lit)-1]
	if k, ok := internPlain(body); ok {
		return k
	}
	// Invalid UTF-8 too: encoding/json reads it as U+FFFD, and so must
	// every key compared with what encoding/json would have decoded.
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		var k string
		_ = json.Unmarshal(lit, &k)
		return k
	}
	return string(body)
}

// keyCache interns member keys. The keys of a protocol stream are nearly
// always the same few names ("jsonrpc", "id", "method", "params", "name",
// "arguments", ...), and making a new string of each one was a tenth of
// the server's CPU under load. Lock-free: a slot holds the last key that
// hashed to it, and a miss just makes the string.
var keyCache [512]atomic.Pointer[string]

const maxInternedKey = 40

// internPlain returns the text of a string literal's body b, interned,
// when b is short plain ASCII with no escape, as every protocol key and
// method name is; otherwise ok is false and the caller decodes b its own
// way. One pass hashes b and checks it. b comes from a valid document, so
// it holds no control characters.
func internPlain(b []byte) (string, bool) {
	n := len(b)
	if n > maxInternedKey {
		return "", false
	}
	// The slot comes from the length and three bytes, and a hit is a
	// comparison with a key that was checked when it was stored: the
	// common case looks at each byte once, in memequal. The protocol's own
	// keys all differ in those four.
	h := uint32(n) * 0x9E3779B1
	if n > 0 {
		h ^= uint32(b[0])<<16 ^ uint32(b[n/2])<<8 ^ uint32(b[n-1])
		h *= 0x85EBCA6B
	}
	slot := &keyCache[(h>>16)%uint32(len(keyCache))]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p, true
	}
	var or byte
	for _, c := range b {
		if c == '\\' {
			return "", false
		}
		or |= c
	}
	if or >= utf8.RuneSelf {
		return "", false
	}
	// A variable of this branch's own: the pointer stored would put a named
	// result on the heap for every call, hits included.
	k := string(b)
	slot.Store(&k)
	return k, true
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
	for i++; i < len(b); i += 2 {
		if i = quoteOrEscape(b, i); i >= len(b) || b[i] == '"' {
			return min(i+1, len(b))
		}
		// A backslash: step over it and the byte it escapes.
	}
	return len(b)
}

// quoteOrEscape returns the index of the first '"' or '\\' in b at or after
// i (len(b) if none). It is plainRun without the test for control
// characters, which a document that passed Valid has none of in its
// strings: the member scans cross a tool's megabyte of text several times
// per request, and bytes.IndexByte alone is several times faster than
// anything that looks at control characters too.
func quoteOrEscape(b []byte, i int) int {
	for k := 0; k < 2 && i+8 <= len(b); k++ {
		x := binary.LittleEndian.Uint64(b[i:])
		quote := x ^ (ones * '"')
		slash := x ^ (ones * '\\')
		if ((quote-ones)|(slash-ones))&^x&highs != 0 {
			for b[i] != '"' && b[i] != '\\' {
				i++
			}
			return i
		}
		i += 8
	}
	return searchQuoteOrEscape(b, i)
}

// searchQuoteOrEscape is quoteOrEscape for long runs: bytes.IndexByte,
// which the runtime vectorizes, in windows that start small and double, so
// that a string dense in escapes, searched once per escape, never has its
// tail searched again and again.
func searchQuoteOrEscape(b []byte, i int) int {
	for n := 64; i < len(b); n = min(2*n, 64<<10) {
		w := b[i:min(i+n, len(b))]
		end := len(w)
		if q := bytes.IndexByte(w, '"'); q >= 0 {
			end = q
		}
		if s := bytes.IndexByte(w[:end], '\\'); s >= 0 {
			end = s
		}
		if end < len(w) {
			return i + end
		}
		i += len(w)
	}
	return i
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
