package jsonschema

import (
	"bytes"
	"encoding/json"

	"github.com/mcprt/mcprt/session/jsonrpc"
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
		ok := true
		var seen map[string]bool
		if len(n.required) > 0 {
			seen = make(map[string]bool, len(n.required))
		}
		jsonrpc.Members(raw, func(k string, v []byte) bool {
			if seen != nil {
				seen[k] = true
			}
			if sub := n.propIndex[k]; sub != nil {
				ok = fastValid(sub, v)
			} else if n.additional != nil {
				ok = fastValid(n.additional, v)
			}
			return ok
		})
		for _, r := range n.required {
			if !ok || !seen[r] {
				return false
			}
		}
		return ok
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
	return slowValid(n, raw) // arrays and numbers: small, or rare
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
