package jsonschema

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// object is a JSON object that remembers the order its keys were set in, so
// derived schemas serialize deterministically and readably ("type" first,
// properties in field order).
//
// Values are string, bool, int, json.Number, json.RawMessage, []string,
// []any, *object or nil.
type object struct {
	keys []string
	vals []any
}

func newObject(kv ...any) *object {
	o := &object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *object) set(k string, v any) {
	for i, kk := range o.keys {
		if kk == k {
			o.vals[i] = v
			return
		}
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (o *object) get(k string) (any, bool) {
	for i, kk := range o.keys {
		if kk == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

func (o *object) del(k string) (any, bool) {
	for i, kk := range o.keys {
		if kk == k {
			v := o.vals[i]
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			o.vals = append(o.vals[:i], o.vals[i+1:]...)
			return v, true
		}
	}
	return nil, false
}

// typeName returns the "type" keyword if it is a single string.
func (o *object) typeName() string {
	v, _ := o.get("type")
	s, _ := v.(string)
	return s
}

func writeJSON(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case int:
		buf.WriteString(strconv.Itoa(v))
	case json.Number:
		buf.WriteString(string(v))
	case json.RawMessage:
		_ = json.Compact(buf, v) // validated when the value was built
	case string:
		writeString(buf, v)
	case []string:
		buf.WriteByte('[')
		for i, s := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, s)
		}
		buf.WriteByte(']')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSON(buf, e)
		}
		buf.WriteByte(']')
	case *object:
		buf.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			writeJSON(buf, v.vals[i])
		}
		buf.WriteByte('}')
	default:
		panic("jsonschema: internal error: unexpected value in derived schema")
	}
}

// writeString writes s as a JSON string without HTML escaping, so patterns
// such as "a<b" stay readable. The output is what a json.Encoder with
// SetEscapeHTML(false) writes; building one per string (an encoder, a
// buffer and a reflective encode each time) was half the cost of deriving
// a schema, which every typed tool does at registration, on the way to the
// first answer a server gives.
func writeString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch b {
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(b)
			case '\b':
				buf.WriteString(`\b`)
			case '\f':
				buf.WriteString(`\f`)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[b>>4])
				buf.WriteByte(hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
		case c == '\u2028' || c == '\u2029':
			// Valid JSON, but not JavaScript: encoding/json escapes them.
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}
