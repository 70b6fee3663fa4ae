// Package skillmd reads a SKILL.md, the manifest of an Agent Skill: its
// YAML frontmatter, as the JSON object the skills extension of MCP
// (io.modelcontextprotocol/skills, SEP-2640) carries verbatim in a skill's
// entry, and its body. Both sides of a connection need it: a server to
// build the entry, a host to compare a fetched SKILL.md with the entry it
// holds.
//
// The frontmatter is read by a YAML subset that covers what skill
// manifests are written in: block mappings and sequences (nested by
// indentation), plain, single- and double-quoted scalars (plain ones over
// several lines too), literal and folded block scalars (| and >, with -
// or + chomping), flow sequences and mappings of scalars, and comments.
// Plain scalars resolve as the YAML 1.2 core schema says (null, booleans,
// integers, floats, strings), as YAML libraries do by default. Anchors,
// aliases, tags, complex keys and several documents are refused with an
// error rather than read differently than a YAML library would.
package skillmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Digest is the digest the skills extension gives a file: "sha256:"
// and the hex SHA-256 of its bytes.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Parse splits a SKILL.md into its frontmatter, as a JSON object, and its
// body. The frontmatter must open the file (after an optional byte order
// mark), between lines of "---".
func Parse(text string) (frontmatter json.RawMessage, body string, err error) {
	text = strings.TrimPrefix(text, "\uFEFF")
	if !utf8.ValidString(text) {
		return nil, "", errors.New("SKILL.md is not UTF-8")
	}
	first, rest, ok := cutLine(text)
	if !ok || strings.TrimRight(first, " \t") != "---" {
		return nil, "", errors.New("SKILL.md does not begin with YAML frontmatter (a line of ---)")
	}
	var lines []string
	for {
		line, more, ok := cutLine(rest)
		if !ok && line == "" {
			return nil, "", errors.New("the frontmatter of SKILL.md is not closed by a line of ---")
		}
		rest = more
		if strings.TrimRight(line, " \t") == "---" {
			break
		}
		lines = append(lines, line)
		if !ok {
			return nil, "", errors.New("the frontmatter of SKILL.md is not closed by a line of ---")
		}
	}
	v, err := parseYAML(lines)
	if err != nil {
		return nil, "", fmt.Errorf("the frontmatter of SKILL.md: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", errors.New("the frontmatter of SKILL.md is not a mapping")
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, "", fmt.Errorf("the frontmatter of SKILL.md: %w", err)
	}
	return raw, rest, nil
}

// cutLine cuts text at its first line end (LF or CRLF); ok is false when
// there is none (line is then the rest of text).
func cutLine(text string) (line, rest string, ok bool) {
	i := strings.IndexByte(text, '\n')
	if i < 0 {
		return text, "", false
	}
	return strings.TrimSuffix(text[:i], "\r"), text[i+1:], true
}

// yline is one line of the frontmatter: its indentation and content.
type yline struct {
	n      int // line number in the frontmatter, from 1
	indent int
	text   string // without the indentation
}

type parser struct {
	lines []yline
	i     int
}

func parseYAML(raw []string) (any, error) {
	p := &parser{}
	for n, l := range raw {
		if strings.ContainsRune(l, '\t') && strings.TrimLeft(l, " ") != l && strings.HasPrefix(strings.TrimLeft(l, " "), "\t") {
			return nil, fmt.Errorf("line %d: tabs are not indentation in YAML", n+1)
		}
		text := strings.TrimLeft(l, " ")
		p.lines = append(p.lines, yline{n: n + 1, indent: len(l) - len(text), text: text})
	}
	p.skipBlank()
	if p.i == len(p.lines) {
		return map[string]any{}, nil
	}
	v, err := p.block(p.lines[p.i].indent)
	if err != nil {
		return nil, err
	}
	p.skipBlank()
	if p.i < len(p.lines) {
		return nil, fmt.Errorf("line %d: unexpected indentation", p.lines[p.i].n)
	}
	return v, nil
}

// blank reports whether a line holds nothing but a comment or spaces.
func blank(l yline) bool { return l.text == "" || l.text[0] == '#' }

func (p *parser) skipBlank() {
	for p.i < len(p.lines) && blank(p.lines[p.i]) {
		p.i++
	}
}

// block reads the mapping or sequence whose lines start at indent.
func (p *parser) block(indent int) (any, error) {
	l := p.lines[p.i]
	if l.text == "-" || strings.HasPrefix(l.text, "- ") {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

func (p *parser) mapping(indent int) (map[string]any, error) {
	m := map[string]any{}
	for {
		p.skipBlank()
		if p.i == len(p.lines) || p.lines[p.i].indent < indent {
			return m, nil
		}
		l := p.lines[p.i]
		if l.indent > indent {
			return nil, fmt.Errorf("line %d: unexpected indentation", l.n)
		}
		if l.text == "-" || strings.HasPrefix(l.text, "- ") {
			return nil, fmt.Errorf("line %d: a sequence item where a key was expected", l.n)
		}
		key, rest, err := splitKey(l)
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("line %d: key %q is given twice", l.n, key)
		}
		p.i++
		v, err := p.value(indent, rest, l.n, true)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
}

func (p *parser) sequence(indent int) ([]any, error) {
	seq := []any{}
	for {
		p.skipBlank()
		if p.i == len(p.lines) || p.lines[p.i].indent < indent {
			return seq, nil
		}
		l := p.lines[p.i]
		if l.indent > indent || !(l.text == "-" || strings.HasPrefix(l.text, "- ")) {
			if l.indent == indent {
				return seq, nil // a key after the sequence, in the parent
			}
			return nil, fmt.Errorf("line %d: unexpected indentation", l.n)
		}
		item := strings.TrimLeft(strings.TrimPrefix(l.text, "-"), " ")
		itemIndent := indent + (len(l.text) - len(item))
		if item != "" && !isQuoted(item) && keyColon(item) >= 0 && item[0] != '[' && item[0] != '{' {
			// "- key: value": a mapping whose first line shares the dash's.
			p.lines[p.i] = yline{n: l.n, indent: itemIndent, text: item}
			m, err := p.mapping(itemIndent)
			if err != nil {
				return nil, err
			}
			seq = append(seq, m)
			continue
		}
		p.i++
		v, err := p.value(indent, item, l.n, false)
		if err != nil {
			return nil, err
		}
		seq = append(seq, v)
	}
}

// value reads what follows "key:" or "- " on line n of a node at indent.
func (p *parser) value(indent int, rest string, n int, inMapping bool) (any, error) {
	rest = strings.TrimSpace(stripComment(rest))
	switch {
	case rest == "":
		// A nested block, or nothing (null). A mapping's sequence may sit
		// at the mapping's own indentation.
		p.skipBlank()
		if p.i == len(p.lines) {
			return nil, nil
		}
		next := p.lines[p.i]
		isItem := next.text == "-" || strings.HasPrefix(next.text, "- ")
		if next.indent > indent || inMapping && next.indent == indent && isItem {
			return p.block(next.indent)
		}
		return nil, nil
	case rest[0] == '|' || rest[0] == '>':
		return p.blockScalar(indent, rest, n)
	case rest[0] == '&' || rest[0] == '*' || rest[0] == '!':
		return nil, fmt.Errorf("line %d: anchors, aliases and tags are not supported in a skill's frontmatter", n)
	case rest[0] == '[' || rest[0] == '{':
		v, tail, err := flow(rest, n)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(stripComment(tail)) != "" {
			return nil, fmt.Errorf("line %d: text after a flow collection", n)
		}
		return v, nil
	case rest[0] == '"' || rest[0] == '\'':
		s, tail, err := p.quoted(rest, n, indent)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(stripComment(tail)) != "" {
			return nil, fmt.Errorf("line %d: text after a quoted scalar", n)
		}
		return s, nil
	}
	// A plain scalar, which may go on over more-indented lines, unless a
	// comment ended it.
	text := rest
	commented := p.i > 0 && hasComment(p.lines[p.i-1].text)
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.text != "" && l.indent <= indent {
			break
		}
		if l.text != "" && l.text[0] == '#' {
			commented = true
			p.i++
			continue
		}
		if l.text != "" && (commented || keyColon(l.text) >= 0) {
			return nil, fmt.Errorf("line %d: unexpected indentation", l.n)
		}
		p.i++
		if l.text == "" {
			text += "\n"
			continue
		}
		if strings.HasSuffix(text, "\n") {
			text += strings.TrimSpace(stripComment(l.text))
		} else {
			text += " " + strings.TrimSpace(stripComment(l.text))
		}
		commented = hasComment(l.text)
	}
	return resolve(text), nil
}

// blockScalar reads a literal (|) or folded (>) scalar.
func (p *parser) blockScalar(indent int, header string, n int) (any, error) {
	style, chomp := header[0], byte(0)
	for _, c := range strings.TrimSpace(stripComment(header[1:])) {
		switch {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = byte(c)
		default:
			return nil, fmt.Errorf("line %d: block scalar header %q is not supported", n, header)
		}
	}
	var body []string
	at := -1
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.text != "" && l.indent <= indent {
			break
		}
		if at < 0 && l.text != "" {
			at = l.indent
		}
		if l.text != "" && l.indent < at {
			break
		}
		p.i++
		if l.text == "" {
			body = append(body, "")
			continue
		}
		body = append(body, strings.Repeat(" ", l.indent-at)+l.text)
	}
	// Trailing blank lines are the chomping's.
	end := len(body)
	for end > 0 && body[end-1] == "" {
		end--
	}
	var b strings.Builder
	for i, line := range body[:end] {
		if i > 0 {
			if style == '>' && line != "" && body[i-1] != "" && line[0] != ' ' && body[i-1][0] != ' ' {
				b.WriteByte(' ')
			} else if style == '>' && line != "" && body[i-1] == "" {
				// The blank lines before a line are its newlines.
			} else {
				b.WriteByte('\n')
			}
		}
		b.WriteString(line)
	}
	s := b.String()
	switch chomp {
	case '-':
	case '+':
		if end > 0 {
			s += "\n" + strings.Repeat("\n", len(body)-end)
		}
	default:
		if end > 0 {
			s += "\n"
		}
	}
	return s, nil
}

// quoted reads a quoted scalar starting at s, on line n, going on over
// the next lines if it does not close on this one.
func (p *parser) quoted(s string, n, indent int) (string, string, error) {
	q := s[0]
	text := s
	for {
		if v, tail, ok, err := closeQuoted(text, q, n); err != nil || ok {
			return v, tail, err
		}
		if p.i == len(p.lines) {
			return "", "", fmt.Errorf("line %d: unterminated quoted scalar", n)
		}
		l := p.lines[p.i]
		p.i++
		if l.text == "" {
			text += "\n"
		} else if strings.HasSuffix(text, "\n") {
			text += l.text
		} else {
			text += " " + l.text
		}
	}
}

// closeQuoted reads the quoted scalar at the start of s if it closes in s.
func closeQuoted(s string, q byte, n int) (v, tail string, ok bool, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case q == '\'' && c == '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), s[i+1:], true, nil
		case q == '"' && c == '"':
			return b.String(), s[i+1:], true, nil
		case q == '"' && c == '\\':
			if i+1 == len(s) {
				return "", "", false, nil
			}
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't', '\t':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case '"', '\\', '/', ' ':
				b.WriteByte(e)
			case 'x', 'u', 'U':
				size := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+1+size > len(s) {
					return "", "", false, fmt.Errorf("line %d: bad escape \\%c", n, e)
				}
				r, perr := strconv.ParseUint(s[i+1:i+1+size], 16, 32)
				if perr != nil {
					return "", "", false, fmt.Errorf("line %d: bad escape \\%c%s", n, e, s[i+1:i+1+size])
				}
				b.WriteRune(rune(r))
				i += size
			default:
				return "", "", false, fmt.Errorf("line %d: escape \\%c is not supported", n, e)
			}
		case c == '\n':
			b.WriteByte('\n')
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false, nil
}

func isQuoted(s string) bool { return s != "" && (s[0] == '"' || s[0] == '\'') }

// splitKey reads the key of a mapping line and what follows its colon.
func splitKey(l yline) (key, rest string, err error) {
	t := l.text
	if t[0] == '?' || t[0] == '&' || t[0] == '*' || t[0] == '!' || t[0] == '[' || t[0] == '{' || t[0] == '|' || t[0] == '>' {
		return "", "", fmt.Errorf("line %d: this kind of key is not supported in a skill's frontmatter", l.n)
	}
	if t == "---" || t == "..." {
		return "", "", fmt.Errorf("line %d: several YAML documents are not supported", l.n)
	}
	if isQuoted(t) {
		k, tail, ok, err := closeQuoted(t, t[0], l.n)
		if err != nil {
			return "", "", err
		}
		tail = strings.TrimLeft(tail, " ")
		if !ok || !strings.HasPrefix(tail, ":") {
			return "", "", fmt.Errorf("line %d: expected a key and a colon", l.n)
		}
		return k, tail[1:], nil
	}
	i := keyColon(t)
	if i < 0 {
		return "", "", fmt.Errorf("line %d: expected \"key: value\"", l.n)
	}
	return strings.TrimRight(t[:i], " "), t[i+1:], nil
}

// keyColon is the index of the colon that ends a plain key in t (one
// followed by a space or the end of the line), or -1.
func keyColon(t string) int {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case ':':
			if i+1 == len(t) || t[i+1] == ' ' {
				return i
			}
		case '#':
			if i > 0 && t[i-1] == ' ' {
				return -1
			}
		}
	}
	return -1
}

// hasComment reports whether a line's plain value ends in a comment.
func hasComment(t string) bool { return stripComment(t) != t }

// stripComment removes a comment (" #…") from the end of a plain value.
func stripComment(s string) string {
	if strings.HasPrefix(s, "#") {
		return ""
	}
	if i := strings.Index(s, " #"); i >= 0 && !isQuoted(strings.TrimSpace(s)) {
		return s[:i]
	}
	return s
}

// flow reads a flow sequence or mapping of scalars at the start of s.
func flow(s string, n int) (any, string, error) {
	open := s[0]
	closeCh := byte(']')
	if open == '{' {
		closeCh = '}'
	}
	rest := strings.TrimLeft(s[1:], " ")
	var seq []any
	m := map[string]any{}
	for {
		if rest == "" {
			return nil, "", fmt.Errorf("line %d: unterminated flow collection (flow collections over several lines are not supported)", n)
		}
		if rest[0] == closeCh {
			if open == '[' {
				if seq == nil {
					seq = []any{}
				}
				return seq, rest[1:], nil
			}
			return m, rest[1:], nil
		}
		item, tail, err := flowScalar(rest, n)
		if err != nil {
			return nil, "", err
		}
		rest = strings.TrimLeft(tail, " ")
		if open == '[' {
			seq = append(seq, item)
		} else {
			key, ok := item.(string)
			if !ok || !strings.HasPrefix(rest, ":") {
				return nil, "", fmt.Errorf("line %d: a flow mapping needs \"key: value\" pairs", n)
			}
			v, tail, err := flowScalar(strings.TrimLeft(rest[1:], " "), n)
			if err != nil {
				return nil, "", err
			}
			m[key] = v
			rest = strings.TrimLeft(tail, " ")
		}
		switch {
		case strings.HasPrefix(rest, ","):
			rest = strings.TrimLeft(rest[1:], " ")
		case rest != "" && rest[0] == closeCh:
		default:
			return nil, "", fmt.Errorf("line %d: expected , or %c in a flow collection", n, closeCh)
		}
	}
}

// flowScalar reads one scalar of a flow collection.
func flowScalar(s string, n int) (any, string, error) {
	if isQuoted(s) {
		v, tail, ok, err := closeQuoted(s, s[0], n)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, "", fmt.Errorf("line %d: unterminated quoted scalar", n)
		}
		return v, tail, nil
	}
	if s != "" && (s[0] == '[' || s[0] == '{') {
		return nil, "", fmt.Errorf("line %d: nested flow collections are not supported", n)
	}
	end := strings.IndexAny(s, ",]}")
	if c := strings.Index(s, ": "); c >= 0 && (end < 0 || c < end) {
		end = c
	}
	if end < 0 {
		end = len(s)
	}
	return resolve(strings.TrimSpace(s[:end])), s[end:], nil
}

// resolve gives a plain scalar its type, as the YAML 1.2 core schema does.
func resolve(s string) any {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
		return s // JSON has no infinities nor NaN: kept as written
	}
	if isInt(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x') {
		base := 8
		if s[1] == 'x' {
			base = 16
		}
		if i, err := strconv.ParseInt(s[2:], base, 64); err == nil {
			return i
		}
	}
	if isFloat(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
			return f
		}
	}
	return s
}

// isInt matches [-+]?[0-9]+.
func isInt(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isFloat matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?.
func isFloat(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	digits := func(t string) (int, string) {
		i := 0
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		return i, t[i:]
	}
	n, rest := digits(s)
	frac := 0
	if strings.HasPrefix(rest, ".") {
		frac, rest = digits(rest[1:])
	}
	if n == 0 && frac == 0 {
		return false
	}
	if rest != "" && (rest[0] == 'e' || rest[0] == 'E') {
		rest = rest[1:]
		if rest != "" && (rest[0] == '-' || rest[0] == '+') {
			rest = rest[1:]
		}
		var e int
		e, rest = digits(rest)
		if e == 0 {
			return false
		}
	}
	return rest == ""
}
