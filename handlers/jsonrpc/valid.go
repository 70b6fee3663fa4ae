package jsonrpc

import "encoding/binary"

// Valid reports whether b is one valid JSON value, exactly as json.Valid
// does (RFC 8259 grammar, invalid UTF-8 inside strings allowed, at most
// 10,000 levels of nesting), several times faster: encoding/json's scanner
// calls a state function per byte, and every line of the protocol, however
// large its strings, passes through here first.
func Valid(b []byte) bool {
	i := valueEnd(b, skipSpace(b, 0), 0)
	return i >= 0 && skipSpace(b, i) == len(b)
}

// maxDepth is encoding/json's limit on nesting.
const maxDepth = 10000

// valueEnd checks the value that starts at b[i], inside depth open
// containers, and returns the index just past it, or -1 if it is not
// valid JSON.
func valueEnd(b []byte, i, depth int) int {
	var stack []byte // '{' or '[' per open container
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if depth+len(stack) >= maxDepth {
				return -1
			}
			stack = append(stack, c)
			i = skipSpace(b, i+1)
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			if i < len(b) && b[i] == close {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i = objectKey(b, i); i < 0 {
					return -1
				}
			}
			continue
		case c == '"':
			if i = stringEnd(b, i); i < 0 {
				return -1
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if i = numberEnd(b, i); i < 0 {
				return -1
			}
		case c == 't':
			if !hasLiteral(b, i, "true") {
				return -1
			}
			i += 4
		case c == 'f':
			if !hasLiteral(b, i, "false") {
				return -1
			}
			i += 5
		case c == 'n':
			if !hasLiteral(b, i, "null") {
				return -1
			}
			i += 4
		default:
			return -1
		}
		// After a value: close containers, or move to the next value.
		for {
			if len(stack) == 0 {
				return i
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return -1
			}
			top := stack[len(stack)-1]
			switch {
			case b[i] == ',':
				i = skipSpace(b, i+1)
				if top == '{' {
					if i = objectKey(b, i); i < 0 {
						return -1
					}
				}
			case (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']'):
				stack = stack[:len(stack)-1]
				i++
				continue
			default:
				return -1
			}
			break
		}
	}
}

// objectKey checks `"key" :` at b[i] and returns the index of the value
// after it, or -1.
func objectKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = stringEnd(b, i); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// stringEnd checks the string starting at b[i] and returns the index just
// past its closing quote, or -1. Runs of plain bytes are skipped eight at a
// time: a tool's megabyte of text should cost a memory scan, not a state
// machine step per byte.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		i = plainRun(b, i)
		if i >= len(b) {
			return -1
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// plainRun returns the index of the first byte at or after i that is a
// quote, a backslash or a control character (len(b) if none).
//
// Short strings (keys, methods, ids) are settled by a word or two read
// eight bytes at a time. Longer runs are searched in windows: the quote and
// the backslash with bytes.IndexByte, which the runtime vectorizes, and only
// control characters word by word, which is where a megabyte of text spends
// its time (see searchQuoteOrEscape for the windows).
func plainRun(b []byte, i int) int {
	for k := 0; k < 2 && i+8 <= len(b); k++ {
		if specialWord(binary.LittleEndian.Uint64(b[i:])) != 0 {
			return plainBytes(b, i)
		}
		i += 8
	}
	// Control characters before the first quote or backslash end the run
	// early; both scans cover the same bytes once.
	end := searchQuoteOrEscape(b, i)
	return i + controlRun(b[i:end])
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialWord is non-zero when one of the eight bytes of x is a quote, a
// backslash or a control character. Each term is the classic
// has-byte-less-than-n test, whose "& ^x" the three share: a byte's high
// bit is the same in x and in x with a quote or backslash xored in. The
// answer is exact as a yes or no, which is all the callers need.
func specialWord(x uint64) uint64 {
	quote := x ^ (ones * '"')
	slash := x ^ (ones * '\\')
	return ((x - ones*0x20) | (quote - ones) | (slash - ones)) &^ x & highs
}

func plainBytes(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// controlRun returns the index of the first control character in b (len(b)
// if none), 32 bytes a step.
func controlRun(b []byte) int {
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32]
		x0 := binary.LittleEndian.Uint64(w[0:])
		x1 := binary.LittleEndian.Uint64(w[8:])
		x2 := binary.LittleEndian.Uint64(w[16:])
		x3 := binary.LittleEndian.Uint64(w[24:])
		if ((x0-ones*0x20)&^x0|(x1-ones*0x20)&^x1|(x2-ones*0x20)&^x2|(x3-ones*0x20)&^x3)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return i
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// numberEnd checks the number starting at b[i] (RFC 8259: -?int frac? exp?)
// and returns the index just past it, or -1.
func numberEnd(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	return i
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}
