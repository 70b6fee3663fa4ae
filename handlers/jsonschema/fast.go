package jsonschema

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// fastValid decides, on the raw bytes of a valid JSON document, whether it
// surely matches n, without decoding what the schema does not look at: a
// tool's 1 MiB text argument under {"type":"string"} is only checked to be
// a string. It is conservative: true means valid; false means "not shown
// valid", and Validate then runs the full validator, which finds the errors
// (or finds none). Keywords it does not handle send that subtree to the
// full validator, decoded on its own.
func fastValid(n *node, raw []byte) bool {
	if n.boolean {
		return n.value
	}
	if n.enum != nil || n.hasConst || n.ref != nil || n.allOf != nil || n.anyOf != nil ||
		n.oneOf != nil || n.not != nil || n.ifN != nil {
		return slowValid(n, raw)
	}
	allows := func(t uint8) bool { return n.types == 0 || n.types&t != 0 }
	switch raw[0] {
	case '{':
		if !allows(tObject) {
			return false
		}
		if len(n.patternProps) > 0 || n.propNames != nil || n.minProps >= 0 || n.maxProps >= 0 || len(n.dependentReq) > 0 {
			return slowValid(n, raw)
		}
		if len(n.required) > 64 {
			return slowValid(n, raw)
		}
		// Required members are ticked off in a bit set, not a map: this
		// runs on every tools/call.
		ok := true
		var seen uint64
		jsonrpc.Members(raw, func(k string, v []byte) bool {
			for i, r := range n.required {
				if r == k {
					seen |= 1 << i
				}
			}
			if sub := n.propIndex[k]; sub != nil {
				ok = fastValid(sub, v)
			} else if n.additional != nil {
				ok = fastValid(n.additional, v)
			}
			return ok
		})
		return ok && seen == 1<<len(n.required)-1
	case '"':
		if !allows(tString) {
			return false
		}
		if n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil {
			return slowValid(n, raw)
		}
		return true
	case 't', 'f':
		return allows(tBoolean)
	case 'n':
		return allows(tNull)
	}
	if ok, settled := fastInteger(n, raw); settled {
		return ok
	}
	return slowValid(n, raw) // arrays and other numbers: small, or rare
}

// fastInteger settles a plain integer literal (at most 18 digits, so int64
// holds it exactly) against type and integer bounds: the "us" and "ms"
// arguments of tools. Anything else (fractions, exponents, bounds that are
// not integers, multipleOf) reports settled false, for the full validator.
func fastInteger(n *node, raw []byte) (ok, settled bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return false, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false, false
		}
	}
	if n.multOf != nil {
		return false, false
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return false, false
	}
	if n.types != 0 && n.types&(tInteger|tNumber) == 0 {
		return false, true
	}
	for _, b := range []struct {
		lim  *number
		pass func(v, lim int64) bool
	}{
		{n.minimum, func(v, l int64) bool { return v >= l }},
		{n.maximum, func(v, l int64) bool { return v <= l }},
		{n.exclMin, func(v, l int64) bool { return v > l }},
		{n.exclMax, func(v, l int64) bool { return v < l }},
	} {
		if b.lim == nil {
			continue
		}
		if !b.lim.isInt64 {
			return false, false
		}
		if !b.pass(v, b.lim.i) {
			return false, true
		}
	}
	return true, true
}

// slowValid runs the full validator on one subtree.
func slowValid(n *node, raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return false
	}
	st := state{limit: 1}
	return st.validate(n, v, nil)
}
