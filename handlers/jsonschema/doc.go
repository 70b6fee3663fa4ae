// Package jsonschema derives JSON Schemas from Go types and validates JSON
// values against schemas, for MCP tool inputSchema and outputSchema.
//
// It depends only on the standard library. JSON Schema 2020-12 is the
// assumed dialect; "$schema" is not consulted. Remote references are never
// dereferenced: a $ref that does not point into the same document is a
// Compile error.
//
// # Deriving schemas
//
// [Reflect] maps Go types to schemas the way encoding/json maps Go
// values to JSON, so that json.Marshal of a value of the type validates
// against the derived schema:
//
//   - string → {"type":"string"}; bool → {"type":"boolean"}
//   - signed integers → {"type":"integer"}; unsigned integers →
//     {"type":"integer","minimum":0}; floats → {"type":"number"}
//   - []byte → {"type":"string","contentEncoding":"base64"}
//   - other slices → {"type":"array","items":S}; arrays [N]T also get
//     minItems and maxItems N
//   - map[K]T (K a string, integer or encoding.TextMarshaler) →
//     {"type":"object","additionalProperties":S}, additionalProperties left
//     out when S is {}
//   - time.Time → {"type":"string","format":"date-time"}; json.Number →
//     {"type":"number"}; json.RawMessage, interfaces and other types with
//     their own MarshalJSON → {} (anything); other encoding.TextMarshaler
//     types → {"type":"string"}
//   - *T → the schema of T (the root of a derived schema is never nullable)
//   - chan, func, complex and unsafe.Pointer types are errors
//   - structs → {"type":"object","properties":{...},"required":[...],
//     "additionalProperties":false}, properties and required in field order
//
// Struct fields are found as encoding/json finds them: the name comes from
// the `json` tag; "-" and unexported fields are skipped; embedded structs
// without a JSON name are flattened, with encoding/json's rules for
// conflicting names; the ",string" option makes scalar fields strings.
//
// A property is required unless its field has omitempty or omitzero, is a
// pointer, or is promoted through an embedded pointer. `jsonschema:"required"`
// and `jsonschema:"optional"` override this.
//
// A pointer, slice or map field without omitempty/omitzero also accepts null
// ("type":["array","null"]; a $ref is wrapped in anyOf with {"type":"null"}),
// because json.Marshal writes null for a nil value there. This keeps
// structured tool output built from Go values valid against its own derived
// schema; use omitempty to keep null out of the schema.
//
// Recursive named types are emitted once under "$defs" and referenced with
// "$ref":"#/$defs/Name" (the name is the Go type name with characters other
// than letters, digits, '_', '.' and '-' replaced by '_', and "_2", "_3"...
// appended on clashes). A reference back to the root type is "$ref":"#", so
// the root schema itself stays inline with "type":"object", as MCP requires.
// Non-recursive types are always inlined.
//
// Output is deterministic: keys are written in a fixed order, properties
// and required in field order, $defs sorted by name.
//
// # Field tags
//
//	description:"text"   → "description"
//	enum:"a,b,c"         → "enum", typed by the field: strings, integers,
//	                       numbers or booleans; items are trimmed of spaces
//	jsonschema:"..."     → comma-separated keywords:
//	    required, optional
//	    minimum=N, maximum=N, exclusiveMinimum=N, exclusiveMaximum=N, multipleOf=N
//	    minLength=N, maxLength=N, format=F, pattern=RE
//	    minItems=N, maxItems=N, uniqueItems (or uniqueItems=true|false)
//	    title=T, default=V
//
// For example:
//
//	type Args struct {
//		Query string   `json:"query" description:"Search terms" jsonschema:"minLength=1,maxLength=200"`
//		Limit int      `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100,default=10"`
//		Sort  string   `json:"sort,omitempty" enum:"relevance,date"`
//		Tags  []string `json:"tags,omitempty" jsonschema:"maxItems=5,pattern=^[a-z]+$"`
//	}
//
// Escaping: in a value, `\,` is a literal comma. "pattern=" is different: it
// takes the rest of the tag verbatim (commas and backslashes included), so
// it must be the last keyword. Remember that a struct tag value is a Go
// string literal, so a regexp backslash is written twice:
// `jsonschema:"pattern=^\\d{3}$"`.
//
// Enum, number, string and format keywords apply to the value; on a slice or
// array field they apply to its innermost items, while minItems, maxItems
// and uniqueItems apply to the field itself. default= on a string field is
// the literal text (or a JSON string literal); on other fields it must be a
// JSON value. A keyword that does not fit the field's type, an unknown
// keyword, a malformed number or an invalid pattern is an error from
// [Reflect], so mistakes show up when the tool is registered.
//
// # Validation
//
// [Compile] parses a schema once; [Schema.Validate] and
// [Schema.ValidateValue] are then cheap and safe for concurrent use.
// Instances are decoded with json.Decoder.UseNumber and numbers are compared
// exactly (as int64, or as big.Rat when the literal is long), so large
// integers are not rounded. "integer" accepts any number with a zero
// fractional part (1.0, 1e2).
//
// Supported keywords: type (string or array), enum, const; properties,
// required, additionalProperties (boolean or schema), patternProperties,
// propertyNames, minProperties, maxProperties, dependentRequired; items,
// prefixItems (and the older array form of items with additionalItems),
// minItems, maxItems, uniqueItems, contains, minContains, maxContains;
// minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, or the
// draft-04 booleans), multipleOf; minLength, maxLength (counted in runes),
// pattern; allOf, anyOf, oneOf, not, if/then/else; $ref to "#" or any local
// JSON pointer ("#/$defs/Name", "#/definitions/Name", ...), also written
// with the root "$id" as prefix; boolean schemas true and false.
//
// Annotations are ignored: format (never asserted), title, description,
// default, examples, contentEncoding, contentMediaType, deprecated,
// readOnly, writeOnly. Unknown keywords are ignored, including
// unevaluatedProperties, unevaluatedItems and dependentSchemas (so such
// schemas validate more leniently than a full implementation would).
// $dynamicRef, $recursiveRef, anchors ("#name") and non-local $ref are
// Compile errors, as are malformed keyword values, invalid patterns and
// $ref cycles that never descend into the instance.
//
// Patterns use Go's regexp (RE2) rather than ECMA-262: they match anywhere
// in the string unless anchored, as in JSON Schema, but lookaround and
// backreferences are not available (Compile reports them) and some escapes
// and character classes differ in edge cases.
//
// # Errors
//
// Validation failures are reported as a *ValidationError with a JSON
// pointer Path and a short Message; up to 10 failures are collected. Its
// Error method gives one model-readable line, for example
// `count: must be >= 1` or, with Root set to "arguments",
// `arguments/count: must be >= 1; arguments: unexpected property "x"
// (allowed: "count", "name")`.
package jsonschema
