package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// verbArgs are the arguments of a call or a get as the command line gives
// them: one JSON object, or NAME=VALUE pairs (as the MCP Inspector's CLI
// takes --tool-arg). Both verbs take both forms.
type verbArgs struct {
	object json.RawMessage // the JSON object form; nil for pairs
	pairs  [][2]string     // NAME, VALUE in the order given
}

// argForms is what a malformed argument is told.
const argForms = `want one JSON object ('{"text":"hi"}') or NAME=VALUE pairs (text=hi)`

// parseVerbArgs reads args (what follows TOOL or PROMPT), or says what is
// wrong with them ("" when nothing is).
func parseVerbArgs(args []string) (verbArgs, string) {
	var a verbArgs
	for i, arg := range args {
		if looksJSON(arg) {
			if len(args) > 1 {
				return a, fmt.Sprintf("argument %q is JSON, and a JSON object must be the only argument: %s", arg, argForms)
			}
			if problem := jsonObjectProblem(arg); problem != "" {
				return a, problem
			}
			a.object = json.RawMessage(arg)
			return a, ""
		}
		name, value, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			return a, fmt.Sprintf("argument %d, %q, is neither a JSON object nor NAME=VALUE: %s", i+1, arg, argForms)
		}
		a.pairs = append(a.pairs, [2]string{name, value})
	}
	return a, ""
}

// looksJSON tells an argument meant as JSON from a NAME=VALUE pair: it
// starts like a JSON value that no argument name starts with, or it is a
// JSON value with no = in it ("[1]", "42", "null").
func looksJSON(arg string) bool {
	s := strings.TrimSpace(arg)
	if s == "" {
		return false
	}
	switch s[0] {
	case '{', '[', '"':
		return true
	}
	return !strings.Contains(s, "=") && json.Valid([]byte(s))
}

// jsonObjectProblem says why arg is not a JSON object, with the position
// of a syntax error ("" when it is one).
func jsonObjectProblem(arg string) string {
	var v any
	err := json.Unmarshal([]byte(arg), &v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		at, picture := pointAt(arg, se)
		return fmt.Sprintf("arguments are not valid JSON (%v) %s: %s%s", err, at, argForms, picture)
	case err != nil:
		return fmt.Sprintf("arguments are not valid JSON: %v: %s", err, argForms)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Sprintf("arguments %s are a JSON %s, not an object: %s", arg, jsonKind(v), argForms)
	}
	return ""
}

// pointAt shows where in arg the syntax error se is: its column, and for
// a short one-line arg, lines that show the arg with a caret under it.
func pointAt(arg string, se *json.SyntaxError) (at, picture string) {
	// Offset counts the bytes read, the bad one included; at the end of
	// the input, what is missing is past the last one.
	off := min(max(int(se.Offset)-1, 0), len(arg))
	if strings.Contains(se.Error(), "unexpected end") {
		off = len(arg)
	}
	col := utf8.RuneCountInString(arg[:off])
	at = fmt.Sprintf("at column %d", col+1)
	if strings.ContainsAny(arg, "\n\r\t") || utf8.RuneCountInString(arg) > 100 {
		return at, ""
	}
	return at, "\n  " + arg + "\n  " + strings.Repeat(" ", col) + "^"
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "value"
}

// toolArguments is the arguments object of a tools/call. A pair's VALUE
// is a string when the tool's input schema (nil when unknown) says the
// argument is one; otherwise it is the JSON value it spells (n=3,
// on=true, tags=["a"]), or a string when it spells none.
func (a verbArgs) toolArguments(schema json.RawMessage) json.RawMessage {
	if a.object != nil || len(a.pairs) == 0 {
		return a.object
	}
	var s struct {
		Properties orderedProps `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	// The last pair of a name wins, in the place of its first.
	last := map[string]string{}
	for _, p := range a.pairs {
		last[p[0]] = p[1]
	}
	for _, p := range a.pairs {
		name := p[0]
		if seen[name] {
			continue
		}
		seen[name] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		value := last[name]
		i := slices.IndexFunc(s.Properties, func(p struct {
			name   string
			schema json.RawMessage
		}) bool {
			return p.name == name
		})
		isString := i >= 0 && schemaType(s.Properties[i].schema) == "string"
		if !isString && json.Valid([]byte(value)) && strings.TrimSpace(value) != "" {
			b.WriteString(strings.TrimSpace(value))
			continue
		}
		v, _ := json.Marshal(value)
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// promptArguments is the arguments of a prompts/get, which are strings,
// or what is wrong with a JSON object whose values are not all strings.
func (a verbArgs) promptArguments() (map[string]string, string) {
	out := map[string]string{}
	if a.object != nil {
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(a.object, &obj)
		for k, raw := range obj {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return nil, fmt.Sprintf("prompt arguments are strings, and %q is %s: give it as a string (%q:%q) or as %s=%s", k, raw, k, string(raw), k, raw)
			}
			out[k] = s
		}
		return out, ""
	}
	for _, p := range a.pairs {
		out[p[0]] = p[1]
	}
	return out, ""
}

// closest is the name in names that want was most likely meant to be: one
// that ends in "__"+want (the gateway prefixes its backends' names), or
// one within a small edit distance of it; "" when none is.
func closest(want string, names []string) string {
	for _, n := range names {
		if strings.HasSuffix(n, "__"+want) {
			return n
		}
	}
	// A typo of the name, or of a prefixed name's own part (ech for
	// ref__echo).
	best, bestDist := "", max(2, utf8.RuneCountInString(want)/3)+1
	lw := strings.ToLower(want)
	for _, n := range names {
		d := editDistance(lw, strings.ToLower(n))
		if i := strings.LastIndex(n, "__"); i >= 0 {
			d = min(d, editDistance(lw, strings.ToLower(n[i+2:])))
		}
		if d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
