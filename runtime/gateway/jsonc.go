package gateway

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// as VS Code's mcp.json allows, into plain JSON of the same length: every
// byte removed becomes a space (newlines in comments are kept), so the
// offsets in a later syntax error still point at the right line and
// column. Strings are left alone. An unterminated block comment runs to
// the end, where the JSON decoder then reports what is missing.
func stripJSONC(in []byte) []byte {
	out := make([]byte, len(in))
	copy(out, in)
	blank := func(i int) {
		if out[i] != '\n' && out[i] != '\r' {
			out[i] = ' '
		}
	}
	// lastComma is the position of a comma not yet followed by anything
	// but whitespace and comments, -1 when there is none.
	lastComma := -1
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			lastComma = -1
			for i++; i < len(out); i++ {
				if out[i] == '\\' {
					i++
					continue
				}
				if out[i] == '"' {
					break
				}
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				blank(i)
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			blank(i)
			blank(i + 1)
			for i += 2; i < len(out); i++ {
				if out[i] == '*' && i+1 < len(out) && out[i+1] == '/' {
					blank(i)
					blank(i + 1)
					i++
					break
				}
				blank(i)
			}
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	return out
}
