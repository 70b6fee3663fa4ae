package uritemplate

import (
	"strings"
)

// querySection is the trailing query part of a template such as
// "db://tables/{table}{?limit,offset}" or "/x?fixed=yes{&y}{#frag}". When a
// template has one, Match compares the URI's query as an unordered set of
// parameters instead of position by position.
type querySection struct {
	pre   []part        // parts before the '?'
	exprs []*expression // the {?...} and {&...} expressions
	fixed [][2]string   // key=value parameters written literally (decoded); all required
	frag  *expression   // a final {#...} expression, if any
}

// buildQuerySection recognises templates of the shape
//
//	<pre> ( "{?…}" | literal containing '?' ) ( "{?…}" | "{&…}" | literal )* [ "{#…}" ]
//
// where <pre> holds no '?', '&' or '#' expression and no literal '#', and the
// literals after the '?' hold no '#'. Other templates are matched purely
// sequentially.
func buildQuerySection(parts []part) *querySection {
	body := parts
	qs := &querySection{}
	if n := len(body); n > 0 && body[n-1].expr != nil && body[n-1].expr.op == opFragment {
		qs.frag = body[n-1].expr
		body = body[:n-1]
	}
	q := -1
	for i, p := range body {
		if p.expr == nil {
			if strings.IndexByte(p.lit, '#') >= 0 {
				return nil
			}
			if strings.IndexByte(p.lit, '?') >= 0 {
				q = i
				break
			}
			continue
		}
		switch p.expr.op {
		case opQuery:
			q = i
		case opCont, opFragment:
			return nil
		}
		if q >= 0 {
			break
		}
	}
	if q < 0 {
		return nil
	}
	qs.pre = append(qs.pre, body[:q]...)
	var params []string
	if p := body[q]; p.expr == nil {
		before, after, _ := strings.Cut(p.lit, "?")
		if before != "" {
			qs.pre = append(qs.pre, part{lit: before})
		}
		params = append(params, after)
	} else {
		qs.exprs = append(qs.exprs, p.expr)
	}
	for _, p := range body[q+1:] {
		if p.expr == nil {
			if strings.IndexByte(p.lit, '#') >= 0 {
				return nil
			}
			params = append(params, p.lit)
			continue
		}
		if p.expr.op != opQuery && p.expr.op != opCont {
			return nil
		}
		qs.exprs = append(qs.exprs, p.expr)
	}
	for _, lit := range params {
		for _, kv := range strings.Split(lit, "&") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			dk, ok1 := unescape(k)
			dv, ok2 := unescape(v)
			if !ok1 || !ok2 {
				return nil
			}
			qs.fixed = append(qs.fixed, [2]string{dk, dv})
		}
	}
	return qs
}

// Match reports whether uri matches the template and, if it does, returns the
// percent-decoded values of the variables that the URI defines. Variables the
// URI leaves undefined (for example an omitted optional query parameter) are
// absent from the map. The package documentation describes the matching rules
// in detail.
func (t *Template) Match(uri string) (map[string]string, bool) {
	if t.query != nil {
		return t.matchQuery(uri)
	}
	m := newMatcher(t.parts, uri, !t.dup)
	if !m.run(0, 0) {
		return nil, false
	}
	return m.result(), true
}

func (t *Template) matchQuery(uri string) (map[string]string, bool) {
	qs := t.query
	s, fragment := uri, ""
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, fragment = s[:i], s[i:]
		if qs.frag == nil {
			return nil, false
		}
	}
	path, query := s, ""
	if i := strings.IndexByte(s, '?'); i >= 0 {
		path, query = s[:i], s[i+1:]
	}
	m := newMatcher(qs.pre, path, !t.dup)
	if !m.run(0, 0) {
		return nil, false
	}
	if qs.frag != nil && !qs.frag.match(fragment, m.bind) {
		return nil, false
	}
	pairs := splitPairs(query, '&')
	for _, f := range qs.fixed {
		found := false
		for _, p := range pairs {
			k, ok1 := unescape(p.key)
			v, ok2 := unescape(p.val)
			if ok1 && ok2 && k == f[0] && v == f[1] {
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	for _, e := range qs.exprs {
		if !e.bindNamed(pairs, m.bind) {
			return nil, false
		}
	}
	return m.result(), true
}

// binding is a variable value found so far. A value found through a prefix
// modifier ({var:3}) is partial: only its first prefix characters are known.
type binding struct {
	name, value string
	prefix      int // 0: full value
}

// matcher is a backtracking matcher of a sequence of template parts against
// a string, anchored at both ends.
type matcher struct {
	parts  []part
	s      string
	binds  []binding
	failed map[[2]int]bool // memo of (part, offset) states known to fail; nil if disabled
}

func newMatcher(parts []part, s string, memo bool) *matcher {
	m := &matcher{parts: parts, s: s}
	if memo {
		// Without repeated variables the outcome of a state does not
		// depend on earlier bindings, so failures can be remembered.
		m.failed = make(map[[2]int]bool)
	}
	return m
}

func (m *matcher) result() map[string]string {
	out := make(map[string]string, len(m.binds))
	for _, b := range m.binds {
		out[b.name] = b.value
	}
	return out
}

// bind records the value of a variable; prefix is the variable's prefix
// modifier (0 if none). A variable bound more than once must get consistent
// values: equal full values, and prefixes agreeing with each other and with
// the full value.
func (m *matcher) bind(name, value string, prefix int) bool {
	for i, b := range m.binds {
		if b.name != name {
			continue
		}
		switch {
		case b.prefix == 0 && prefix == 0:
			return b.value == value
		case b.prefix == 0:
			return truncate(b.value, prefix) == value
		case prefix == 0:
			if truncate(value, b.prefix) != b.value {
				return false
			}
		default:
			short, long := b.value, value
			if len(short) > len(long) {
				short, long = long, short
			}
			if !strings.HasPrefix(long, short) {
				return false
			}
			if len(value) <= len(b.value) {
				return true
			}
		}
		m.binds[i] = binding{name, value, prefix}
		return true
	}
	m.binds = append(m.binds, binding{name, value, prefix})
	return true
}

func (m *matcher) run(i, pos int) bool {
	if i == len(m.parts) {
		return pos == len(m.s)
	}
	key := [2]int{i, pos}
	if m.failed != nil && m.failed[key] {
		return false
	}
	if m.step(i, pos) {
		return true
	}
	if m.failed != nil {
		m.failed[key] = true
	}
	return false
}

func (m *matcher) step(i, pos int) bool {
	p := m.parts[i]
	if p.expr == nil {
		return strings.HasPrefix(m.s[pos:], p.lit) && m.run(i+1, pos+len(p.lit))
	}
	// When a literal follows, the expression can only end where it starts.
	next := i+1 < len(m.parts) && m.parts[i+1].expr == nil
	var nextLit string
	if next {
		nextLit = m.parts[i+1].lit
	}
	for _, end := range candidates(p.expr.op, m.s, pos, i == len(m.parts)-1) {
		if next && !strings.HasPrefix(m.s[end:], nextLit) {
			continue
		}
		mark := len(m.binds)
		if p.expr.match(m.s[pos:end], m.bind) && m.run(i+1, end) {
			return true
		}
		m.binds = m.binds[:mark]
	}
	return false
}

// stops reports whether c cannot occur in the text of an expression with
// operator op (outside its leading operator character).
func stops(op *operator, c byte) bool {
	switch op {
	case opSimple, opParam, opLabel:
		return c == '/' || c == '?' || c == '#'
	case opReserved, opPath:
		return c == '?' || c == '#'
	case opQuery, opCont:
		return c == '#'
	}
	return false // fragment: anything
}

// candidates returns the end offsets, in order of preference, of the text
// that an expression with operator op may cover starting at pos. Shorter
// texts come first; for operators with a leading character the empty text
// (all variables undefined) is tried last. The final part of a template
// must cover the rest of the string.
func candidates(op *operator, s string, pos int, last bool) []int {
	if op == opSimple || op == opReserved {
		end := pos
		for end < len(s) && !stops(op, s[end]) {
			end++
		}
		if last {
			if end == len(s) && end > pos {
				return []int{end}
			}
			return nil
		}
		ends := make([]int, 0, end-pos)
		for e := pos + 1; e <= end; e++ {
			ends = append(ends, e)
		}
		return ends
	}
	if pos == len(s) || s[pos] != op.char {
		return []int{pos}
	}
	end := pos + 1
	for end < len(s) && !stops(op, s[end]) {
		end++
	}
	if last {
		if end == len(s) {
			return []int{end}
		}
		return nil
	}
	ends := make([]int, 0, end-pos+1)
	for e := pos + 1; e <= end; e++ {
		ends = append(ends, e)
	}
	return append(ends, pos)
}

// match decodes text, the whole expansion of e, into variable values.
func (e *expression) match(text string, bind func(name, value string, prefix int) bool) bool {
	switch e.op {
	case opSimple, opReserved:
		if text == "" {
			return false
		}
		return e.assign(strings.Split(text, ","), bind)
	case opFragment:
		if text == "" {
			return true
		}
		if text[0] != '#' {
			return false
		}
		return e.assign(strings.Split(text[1:], ","), bind)
	case opLabel, opPath:
		if text == "" {
			return true
		}
		if text[0] != e.op.char {
			return false
		}
		return e.assign(strings.Split(text[1:], string(e.op.char)), bind)
	default: // ';', '?', '&'
		if text == "" {
			return true
		}
		if text[0] != e.op.char {
			return false
		}
		sep := byte('&')
		if e.op == opParam {
			sep = ';'
		}
		return e.bindNamed(splitPairs(text[1:], sep), bind)
	}
}

// assign gives the pieces of an unnamed expression to its variables, left to
// right, one piece each. Variables left without a piece are undefined. Surplus
// pieces go to the first exploded variable (joined by '/' for path segments,
// ',' otherwise); without one they go to the last variable for '+' and '#'
// (joined by ',') and '.' (joined by '.'), and otherwise the text does not
// match.
func (e *expression) assign(pieces []string, bind func(name, value string, prefix int) bool) bool {
	for i, p := range pieces {
		d, ok := unescape(p)
		if !ok {
			return false
		}
		pieces[i] = d
	}
	n := len(e.vars)
	if len(pieces) <= n {
		for i, p := range pieces {
			if !bind(e.vars[i].name, p, e.vars[i].prefix) {
				return false
			}
		}
		return true
	}
	surplus := len(pieces) - n
	idx, join := -1, ","
	for i, v := range e.vars {
		if v.explode {
			idx = i
			break
		}
	}
	switch {
	case idx >= 0:
		if e.op == opPath {
			join = "/"
		}
	case e.op == opReserved || e.op == opFragment:
		idx = n - 1
	case e.op == opLabel:
		idx, join = n-1, "."
	default:
		return false
	}
	j := 0
	for i, v := range e.vars {
		k := 1
		if i == idx {
			k += surplus
		}
		if !bind(v.name, strings.Join(pieces[j:j+k], join), v.prefix) {
			return false
		}
		j += k
	}
	return true
}

type pair struct{ key, val string }

// splitPairs splits "a=1&b&c=3" into raw (still encoded) pairs, skipping
// empty members.
func splitPairs(s string, sep byte) []pair {
	var out []pair
	for s != "" {
		var kv string
		if i := strings.IndexByte(s, sep); i >= 0 {
			kv, s = s[:i], s[i+1:]
		} else {
			kv, s = s, ""
		}
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, pair{k, v})
	}
	return out
}

// bindNamed binds each variable of a named expression to the decoded values
// of the parameters named after it, joined by ','. Parameters named after no
// variable are ignored; variables without a parameter are undefined.
func (e *expression) bindNamed(pairs []pair, bind func(name, value string, prefix int) bool) bool {
	for _, v := range e.vars {
		var vals []string
		for _, p := range pairs {
			if p.key != v.name {
				continue
			}
			d, ok := unescape(p.val)
			if !ok {
				return false
			}
			vals = append(vals, d)
		}
		if vals != nil && !bind(v.name, strings.Join(vals, ","), v.prefix) {
			return false
		}
	}
	return true
}

// unescape decodes %XX triplets; it fails on a malformed one. '+' is kept.
func unescape(s string) (string, bool) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, true
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
		i += 2
	}
	return b.String(), true
}

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
