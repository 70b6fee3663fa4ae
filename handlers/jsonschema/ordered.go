package jsonschema

import (
	"bytes"
	"encoding/json"
	"strconv"
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
// such as "a<b" stay readable.
func writeString(buf *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // strings always encode
	buf.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
}
