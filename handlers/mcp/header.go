package mcp

import (
	"encoding/base64"
	"strings"
)

// The header codec is protocol (2026-07-28 Streamable HTTP), not JSON Schema:
// the client encodes, the transport decodes, the gateway re-encodes.

// EncodeHeaderValue is a value as 2026-07-28 puts it in an Mcp-Name or
// Mcp-Param header: as is when it is plain ASCII (visible characters,
// space and tab, no space at either end), otherwise, or when it looks like
// the sentinel itself, =?base64?…?= around its UTF-8 in base64.
func EncodeHeaderValue(s string) string {
	plain := !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) &&
		strings.TrimSpace(s) == s
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// DecodeHeaderValue undoes EncodeHeaderValue; ok is false for a value
// that is neither plain ASCII nor a well-formed =?base64?…?=. Only a value
// with both sentinels is Base64: one that starts with "=?base64?" and does
// not end with "?=" (or the reverse) is plain text, as the specification's
// sentinel pattern has it.
func DecodeHeaderValue(v string) (s string, ok bool) {
	const prefix, suffix = "=?base64?", "?="
	if len(v) < len(prefix)+len(suffix) || !strings.HasPrefix(v, prefix) || !strings.HasSuffix(v, suffix) {
		for i := 0; i < len(v); i++ {
			if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
				return "", false
			}
		}
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(prefix) : len(v)-len(suffix)])
	if err != nil {
		return "", false
	}
	return string(b), true
}
