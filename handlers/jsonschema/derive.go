package jsonschema

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Reflect derives a JSON Schema from t. See the package documentation for
// the derivation rules. A pointer type yields the schema of its element.
func Reflect(t reflect.Type) (json.RawMessage, error) {
	if t == nil {
		return nil, errors.New("jsonschema: cannot derive a schema from a nil type")
	}
	root, err := derefType(t)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: %s: %w", t, err)
	}
	r := &reflector{
		root:       root,
		inProgress: map[reflect.Type]bool{},
		refs:       map[reflect.Type]string{},
		defNames:   map[string]bool{},
		defs:       map[string]*object{},
	}
	s, err := r.schemaFor(root, root.String())
	if err != nil {
		return nil, err
	}
	if len(r.defs) > 0 {
		names := make([]string, 0, len(r.defs))
		for n := range r.defs {
			names = append(names, n)
		}
		sort.Strings(names)
		defs := &object{}
		for _, n := range names {
			defs.set(n, r.defs[n])
		}
		s.set("$defs", defs)
	}
	var buf bytes.Buffer
	writeJSON(&buf, s)
	return json.RawMessage(buf.Bytes()), nil
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	numberType        = reflect.TypeFor[json.Number]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

type reflector struct {
	root       reflect.Type
	inProgress map[reflect.Type]bool
	refs       map[reflect.Type]string // recursive named types → "$ref" value
	defNames   map[string]bool
	defs       map[string]*object
}

func derefType(t reflect.Type) (reflect.Type, error) {
	for n := 0; t.Kind() == reflect.Pointer; n++ {
		if n > 64 {
			return nil, errors.New("pointer type cycle")
		}
		t = t.Elem()
	}
	return t, nil
}

func refObject(ref string) *object { return newObject("$ref", ref) }

// schemaFor returns a fresh schema object for t; where names the Go location
// (Type.Field.Field) for error messages.
func (r *reflector) schemaFor(t reflect.Type, where string) (*object, error) {
	t, err := derefType(t)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: %s: %w", where, err)
	}
	if s := special(t); s != nil {
		return s, nil
	}
	named := t.Name() != "" && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map ||
		t.Kind() == reflect.Slice || t.Kind() == reflect.Array)
	if named {
		if ref, ok := r.refs[t]; ok {
			return refObject(ref), nil
		}
		if r.inProgress[t] {
			return refObject(r.assignRef(t)), nil
		}
		r.inProgress[t] = true
		defer delete(r.inProgress, t)
	}
	s, err := r.build(t, where)
	if err != nil {
		return nil, err
	}
	if named && t != r.root {
		if ref, ok := r.refs[t]; ok {
			r.defs[strings.TrimPrefix(ref, "#/$defs/")] = s
			return refObject(ref), nil
		}
	}
	return s, nil
}

// assignRef records that t is recursive and returns the reference to use for
// it: "#" for the root type, "#/$defs/Name" otherwise.
func (r *reflector) assignRef(t reflect.Type) string {
	if t == r.root {
		r.refs[t] = "#"
		return "#"
	}
	base := defName(t)
	name := base
	for i := 2; r.defNames[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	r.defNames[name] = true
	ref := "#/$defs/" + name
	r.refs[t] = ref
	return ref
}

// defName turns a Go type name (possibly generic, "List[pkg.T]") into a name
// that needs no escaping in a JSON pointer or URI fragment.
func defName(t reflect.Type) string {
	var b strings.Builder
	for _, c := range t.Name() {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// special handles types whose JSON form is not given by their kind.
func special(t reflect.Type) *object {
	switch t {
	case timeType:
		return newObject("type", "string", "format", "date-time")
	case rawMessageType:
		return &object{}
	case numberType:
		return newObject("type", "number")
	}
	if t.Kind() == reflect.Interface {
		return &object{}
	}
	if t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType) {
		return &object{} // custom JSON: nothing is known about its shape
	}
	if t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return newObject("type", "string")
	}
	return nil
}

func (r *reflector) build(t reflect.Type, where string) (*object, error) {
	switch t.Kind() {
	case reflect.Bool:
		return newObject("type", "boolean"), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return newObject("type", "integer"), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return newObject("type", "integer", "minimum", 0), nil
	case reflect.Float32, reflect.Float64:
		return newObject("type", "number"), nil
	case reflect.String:
		return newObject("type", "string"), nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && special(t.Elem()) == nil {
			return newObject("type", "string", "contentEncoding", "base64"), nil
		}
		items, err := r.schemaFor(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		return newObject("type", "array", "items", items), nil
	case reflect.Array:
		items, err := r.schemaFor(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		return newObject("type", "array", "items", items, "minItems", t.Len(), "maxItems", t.Len()), nil
	case reflect.Map:
		k := t.Key()
		switch k.Kind() {
		case reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !k.Implements(textMarshalerType) {
				return nil, fmt.Errorf("jsonschema: %s: unsupported map key type %s", where, k)
			}
		}
		s := newObject("type", "object")
		v, err := r.schemaFor(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		if len(v.keys) > 0 {
			s.set("additionalProperties", v)
		}
		return s, nil
	case reflect.Struct:
		return r.buildStruct(t, where)
	default:
		return nil, fmt.Errorf("jsonschema: %s: unsupported type %s", where, t)
	}
}

func (r *reflector) buildStruct(t reflect.Type, where string) (*object, error) {
	s := newObject("type", "object")
	props := &object{}
	var required []string
	for _, f := range typeFields(t) {
		fs, req, err := r.fieldSchema(f, where+"."+f.sf.Name)
		if err != nil {
			return nil, err
		}
		props.set(f.name, fs)
		if req {
			required = append(required, f.name)
		}
	}
	if len(props.keys) > 0 {
		s.set("properties", props)
	}
	if len(required) > 0 {
		s.set("required", required)
	}
	s.set("additionalProperties", false)
	return s, nil
}

// field is a JSON-visible struct field, found the way encoding/json finds them.
type field struct {
	name      string
	tagged    bool
	index     []int
	sf        reflect.StructField
	omitEmpty bool
	omitZero  bool
	asString  bool
	viaPtr    bool // reached through an embedded pointer: absent when it is nil
}

// typeFields mirrors encoding/json: embedded structs without a JSON name are
// flattened; among fields with the same name the shallowest wins, then the
// one with a JSON tag; remaining ties hide the name entirely.
func typeFields(t reflect.Type) []field {
	type queued struct {
		typ    reflect.Type
		index  []int
		viaPtr bool
	}
	var fields []field
	next := []queued{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, q := range current {
			if visited[q.typ] {
				continue
			}
			visited[q.typ] = true
			for i := 0; i < q.typ.NumField(); i++ {
				sf := q.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				index := make([]int, len(q.index)+1)
				copy(index, q.index)
				index[len(q.index)] = i
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := field{
						name:   name,
						tagged: name != "",
						index:  index,
						sf:     sf,
						viaPtr: q.viaPtr,
					}
					if f.name == "" {
						f.name = sf.Name
					}
					for _, o := range strings.Split(opts, ",") {
						switch o {
						case "omitempty":
							f.omitEmpty = true
						case "omitzero":
							f.omitZero = true
						case "string":
							f.asString = true
						}
					}
					fields = append(fields, f)
					if count[q.typ] > 1 {
						// Two embeddings of the same type at this depth
						// annihilate each other's fields.
						fields = append(fields, fields[len(fields)-1])
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, queued{typ: ft, index: index, viaPtr: q.viaPtr || sf.Type.Kind() == reflect.Pointer})
				}
			}
		}
	}

	sort.SliceStable(fields, func(i, j int) bool {
		a, b := fields[i], fields[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if len(a.index) != len(b.index) {
			return len(a.index) < len(b.index)
		}
		if a.tagged != b.tagged {
			return a.tagged
		}
		return lessIndex(a.index, b.index)
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		group := fields[i:j]
		i = j
		if len(group) == 1 {
			out = append(out, group[0])
			continue
		}
		// Dominant field: shallowest, and unique (or the only tagged one).
		if len(group[0].index) < len(group[1].index) || group[0].tagged && !group[1].tagged {
			out = append(out, group[0])
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessIndex(out[i].index, out[j].index) })
	return out
}

func lessIndex(a, b []int) bool {
	for k := range a {
		if k >= len(b) {
			return false
		}
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return len(a) < len(b)
}

func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c > 127):
			return false
		}
	}
	return true
}

func nilable(k reflect.Kind) bool {
	return k == reflect.Pointer || k == reflect.Slice || k == reflect.Map
}

// fieldSchema builds the property schema for f and reports whether the
// property is required.
func (r *reflector) fieldSchema(f field, where string) (*object, bool, error) {
	ft := f.sf.Type
	base, err := derefType(ft)
	if err != nil {
		return nil, false, fmt.Errorf("jsonschema: %s: %w", where, err)
	}
	var fs *object
	if f.asString && stringable(base.Kind()) {
		fs = newObject("type", "string")
	} else if fs, err = r.schemaFor(ft, where); err != nil {
		return nil, false, err
	}

	required := !f.omitEmpty && !f.omitZero && ft.Kind() != reflect.Pointer && !f.viaPtr
	tags, err := parseSchemaTag(f.sf.Tag.Get("jsonschema"))
	if err != nil {
		return nil, false, fmt.Errorf("jsonschema: %s: %w", where, err)
	}
	if d, ok := f.sf.Tag.Lookup("description"); ok {
		fs.set("description", d)
	}

	// Scalar keywords (enum, numeric and string constraints) apply to the
	// value itself, or to the innermost items of a slice or array field.
	target, tt := fs, base
	for (tt.Kind() == reflect.Slice || tt.Kind() == reflect.Array) && target.typeName() == "array" {
		items, ok := target.get("items")
		io, isObj := items.(*object)
		if !ok || !isObj {
			break
		}
		target = io
		if tt, err = derefType(tt.Elem()); err != nil {
			return nil, false, fmt.Errorf("jsonschema: %s: %w", where, err)
		}
	}

	if e, ok := f.sf.Tag.Lookup("enum"); ok {
		vals, err := enumValues(e, target.typeName())
		if err != nil {
			return nil, false, fmt.Errorf("jsonschema: %s: enum tag: %w", where, err)
		}
		target.set("enum", vals)
	}

	seenReq, seenOpt := false, false
	for _, kv := range tags {
		switch kv.key {
		case "required":
			required, seenReq = true, true
		case "optional":
			required, seenOpt = false, true
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
			if !typeIn(target, "integer", "number") {
				return nil, false, fmt.Errorf("jsonschema: %s: %s needs a numeric field", where, kv.key)
			}
			n, err := tagNumber(kv.val)
			if err != nil {
				return nil, false, fmt.Errorf("jsonschema: %s: %s: %w", where, kv.key, err)
			}
			if kv.key == "multipleOf" && strings.HasPrefix(string(n), "-") || kv.key == "multipleOf" && isZeroLiteral(string(n)) {
				return nil, false, fmt.Errorf("jsonschema: %s: multipleOf must be > 0", where)
			}
			target.set(kv.key, n)
		case "minLength", "maxLength", "pattern", "format":
			if !typeIn(target, "string") {
				return nil, false, fmt.Errorf("jsonschema: %s: %s needs a string field", where, kv.key)
			}
			switch kv.key {
			case "pattern":
				if _, err := compilePattern(kv.val); err != nil {
					return nil, false, fmt.Errorf("jsonschema: %s: %w", where, err)
				}
				target.set(kv.key, kv.val)
			case "format":
				target.set(kv.key, kv.val)
			default:
				n, err := tagCount(kv.val)
				if err != nil {
					return nil, false, fmt.Errorf("jsonschema: %s: %s: %w", where, kv.key, err)
				}
				target.set(kv.key, n)
			}
		case "minItems", "maxItems", "uniqueItems":
			if !typeIn(fs, "array") {
				return nil, false, fmt.Errorf("jsonschema: %s: %s needs a slice or array field", where, kv.key)
			}
			if kv.key == "uniqueItems" {
				b := true
				if kv.hasVal {
					if b, err = strconv.ParseBool(kv.val); err != nil {
						return nil, false, fmt.Errorf("jsonschema: %s: uniqueItems: %q is not a boolean", where, kv.val)
					}
				}
				fs.set(kv.key, b)
				continue
			}
			n, err := tagCount(kv.val)
			if err != nil {
				return nil, false, fmt.Errorf("jsonschema: %s: %s: %w", where, kv.key, err)
			}
			fs.set(kv.key, n)
		case "title":
			fs.set("title", kv.val)
		case "default":
			v, err := defaultValue(kv.val, fs.typeName())
			if err != nil {
				return nil, false, fmt.Errorf("jsonschema: %s: default: %w", where, err)
			}
			fs.set("default", v)
		}
	}
	if seenReq && seenOpt {
		return nil, false, fmt.Errorf("jsonschema: %s: jsonschema tag has both required and optional", where)
	}

	// encoding/json writes null for a nil pointer, slice or map unless the
	// field is omitted when empty, so such fields must accept null for the
	// schema to describe what json.Marshal produces.
	if !f.omitEmpty && !f.omitZero && nilable(ft.Kind()) {
		fs = allowNull(fs)
	}
	return fs, required, nil
}

func stringable(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// typeIn reports whether s has one of the given types, or no type at all
// (anything, or a $ref we do not look through).
func typeIn(s *object, types ...string) bool {
	v, ok := s.get("type")
	if !ok {
		return true
	}
	t, _ := v.(string)
	for _, want := range types {
		if t == want {
			return true
		}
	}
	return false
}

func allowNull(s *object) *object {
	v, ok := s.get("type")
	if !ok {
		if _, isRef := s.get("$ref"); !isRef {
			return s // already accepts anything
		}
		outer := &object{}
		for _, k := range []string{"title", "description", "default"} {
			if v, ok := s.del(k); ok {
				outer.set(k, v)
			}
		}
		outer.set("anyOf", []any{s, newObject("type", "null")})
		return outer
	}
	if t, ok := v.(string); ok {
		s.set("type", []string{t, "null"})
	}
	if e, ok := s.get("enum"); ok {
		s.set("enum", append(e.([]any), nil))
	}
	return s
}

type tagItem struct {
	key, val string
	hasVal   bool
}

var knownTagKeys = map[string]bool{
	"required": true, "optional": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minItems": true, "maxItems": true, "uniqueItems": true,
	"default": true, "title": true,
}

// parseSchemaTag splits a `jsonschema:"..."` tag into key[=value] items.
// Items are separated by commas; `\,` is a literal comma inside a value.
// "pattern=" takes the rest of the tag verbatim, commas and backslashes
// included, so it must come last.
func parseSchemaTag(tag string) ([]tagItem, error) {
	var items []tagItem
	for len(tag) > 0 {
		// Key.
		i := strings.IndexAny(tag, "=,")
		key := tag
		if i >= 0 {
			key = tag[:i]
		}
		key = strings.TrimSpace(key)
		if i < 0 || tag[i] == ',' {
			if i < 0 {
				tag = ""
			} else {
				tag = tag[i+1:]
			}
			if key != "" {
				items = append(items, tagItem{key: key})
			}
			continue
		}
		tag = tag[i+1:]
		if key == "pattern" {
			items = append(items, tagItem{key: key, val: tag, hasVal: true})
			break
		}
		var val strings.Builder
		for len(tag) > 0 {
			c := tag[0]
			if c == '\\' && len(tag) > 1 && tag[1] == ',' {
				val.WriteByte(',')
				tag = tag[2:]
				continue
			}
			tag = tag[1:]
			if c == ',' {
				break
			}
			val.WriteByte(c)
		}
		items = append(items, tagItem{key: key, val: val.String(), hasVal: true})
	}
	for _, it := range items {
		if !knownTagKeys[it.key] {
			return nil, fmt.Errorf("unknown jsonschema tag keyword %q", it.key)
		}
		switch it.key {
		case "required", "optional":
			if it.hasVal {
				return nil, fmt.Errorf("jsonschema tag keyword %q takes no value", it.key)
			}
		case "uniqueItems":
		default:
			if !it.hasVal {
				return nil, fmt.Errorf("jsonschema tag keyword %q needs a value (%s=...)", it.key, it.key)
			}
		}
	}
	return items, nil
}

func tagNumber(s string) (json.Number, error) {
	s = strings.TrimSpace(s)
	if _, ok := analyzeNumber(s); !ok {
		return "", fmt.Errorf("%q is not a JSON number", s)
	}
	return json.Number(s), nil
}

func tagCount(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return n, nil
}

func isZeroLiteral(s string) bool {
	info, ok := analyzeNumber(s)
	return ok && info.zero
}

// enumValues parses a comma-separated enum tag, typing the values after the
// schema they constrain.
func enumValues(tag, typ string) ([]any, error) {
	var out []any
	for _, part := range strings.Split(tag, ",") {
		p := strings.TrimSpace(part)
		switch typ {
		case "string":
			out = append(out, p)
		case "integer":
			info, ok := analyzeNumber(p)
			if !ok || !info.integral {
				return nil, fmt.Errorf("%q is not an integer", p)
			}
			out = append(out, json.Number(p))
		case "number":
			if _, ok := analyzeNumber(p); !ok {
				return nil, fmt.Errorf("%q is not a number", p)
			}
			out = append(out, json.Number(p))
		case "boolean":
			b, err := strconv.ParseBool(p)
			if err != nil {
				return nil, fmt.Errorf("%q is not a boolean", p)
			}
			out = append(out, b)
		default:
			return nil, fmt.Errorf("enum needs a string, integer, number or boolean field")
		}
	}
	return out, nil
}

// defaultValue: for string fields the tag text is the default (unless it is
// itself a JSON string literal); otherwise it must be a JSON value.
func defaultValue(s, typ string) (any, error) {
	if typ == "string" && !(strings.HasPrefix(s, `"`) && json.Valid([]byte(s))) {
		return s, nil
	}
	if !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("%q is not a JSON value", s)
	}
	return json.RawMessage(s), nil
}
