package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Unquote returns the string a JSON string literal stands for (lit is the
// literal, quotes included, with no space around it), exactly as
// json.Unmarshal into a string gives it: escapes decoded, invalid UTF-8 and
// lone surrogate escapes replaced by U+FFFD. It reports false if lit is not
// one JSON string.
//
// A tool's text argument is usually free of escapes and its megabyte only
// needs to be checked and copied: that is done a word at a time, where
// encoding/json would run its validating scanner over the literal and then
// unquote it byte by byte. Literals with escapes, or with invalid UTF-8 to
// replace, are left to encoding/json, which defines the answer.
func Unquote(lit []byte) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 && bytes.IndexByte(body, '"') < 0 {
		i := asciiRun(body)
		if i == len(body) || (body[i] >= utf8.RuneSelf && controlRun(body[i:]) == len(body)-i && utf8.Valid(body[i:])) {
			return string(body), true
		}
	}
	return unquoteSlow(lit)
}

// unquoteSlow is kept out of Unquote so that taking s's address does not
// move it to the heap on the fast path.
func unquoteSlow(lit []byte) (string, bool) {
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return "", false
	}
	return s, true
}

// asciiRun returns the index of the first byte of b that is a control
// character or not ASCII (len(b) if none), 32 bytes a step. Unquote runs
// it over line bytes, AppendString (through plainWords) over a handler's
// string.
func asciiRun[T string | []byte](b T) int {
	// In a word of bytes 0x20-0x7f, subtracting 0x20 from each borrows
	// nowhere and leaves every high bit clear; the lowest control byte comes
	// out with its high bit set, and or-ing x in flags non-ASCII bytes. Exact
	// as a yes or no, which is all the loop asks.
	i := 0
	for ; i+32 <= len(b); i += 32 {
		x0, x1, x2, x3 := load64(b, i), load64(b, i+8), load64(b, i+16), load64(b, i+24)
		if ((x0-ones*0x20)|x0|(x1-ones*0x20)|x1|(x2-ones*0x20)|x2|(x3-ones*0x20)|x3)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}
