package jsonschema

import (
	"encoding/json"
	"testing"
)

// compileFaults: a schema fault for each step of compileObject, each named
// at its pointer, and, for a schema with faults in several steps, the one
// of the earliest step.
var compileFaults = []struct{ schema, want string }{
	{`{"$dynamicRef":"#x"}`, `jsonschema: schema /$dynamicRef: $dynamicRef is not supported`},
	{`{"$recursiveRef":"#"}`, `jsonschema: schema /$recursiveRef: $recursiveRef is not supported`},
	{`{"$defs":[]}`, `jsonschema: schema /$defs: must be an object`},
	{`{"definitions":{"a":{"type":"nope"}}}`, `jsonschema: schema /definitions/a/type: unknown type "nope"`},
	{`{"$ref":7}`, `jsonschema: schema /$ref: must be a string`},
	{`{"$ref":"http://example.com/s"}`, `jsonschema: schema /$ref: $ref "http://example.com/s" is not a local reference ("#/..."); remote references are not supported`},
	{`{"type":"nope"}`, `jsonschema: schema /type: unknown type "nope"`},
	{`{"type":[]}`, `jsonschema: schema /type: must not be empty`},
	{`{"type":["string",1]}`, `jsonschema: schema /type: unknown type 1`},
	{`{"type":1}`, `jsonschema: schema /type: must be a string or an array of strings`},
	{`{"enum":{}}`, `jsonschema: schema /enum: must be an array`},
	{`{"properties":[]}`, `jsonschema: schema /properties: must be an object`},
	{`{"properties":{"a/b":{"type":"nope"}}}`, `jsonschema: schema /properties/a~1b/type: unknown type "nope"`},
	{`{"required":"a"}`, `jsonschema: schema /required: must be an array of strings`},
	{`{"required":[1]}`, `jsonschema: schema /required: must be an array of strings`},
	{`{"additionalProperties":1}`, `jsonschema: schema /additionalProperties: a schema must be an object or a boolean`},
	{`{"patternProperties":{"(":{}}}`, "jsonschema: schema /patternProperties/(: invalid pattern \"(\" (Go RE2 syntax): error parsing regexp: missing closing ): `(`"},
	{`{"patternProperties":{"^a":1}}`, `jsonschema: schema /patternProperties/^a: a schema must be an object or a boolean`},
	{`{"propertyNames":"x"}`, `jsonschema: schema /propertyNames: a schema must be an object or a boolean`},
	{`{"minProperties":-1}`, `jsonschema: schema /minProperties: must be a non-negative integer`},
	{`{"maxLength":1.5}`, `jsonschema: schema /maxLength: must be a non-negative integer`},
	{`{"maxContains":"2"}`, `jsonschema: schema /maxContains: must be a non-negative integer`},
	{`{"dependentRequired":[]}`, `jsonschema: schema /dependentRequired: must be an object`},
	{`{"dependentRequired":{"a":"b"}}`, `jsonschema: schema /dependentRequired: values must be arrays of strings`},
	{`{"dependentRequired":{"a":[1]}}`, `jsonschema: schema /dependentRequired: values must be arrays of strings`},
	{`{"prefixItems":[]}`, `jsonschema: schema /prefixItems: must be a non-empty array of schemas`},
	{`{"items":[1]}`, `jsonschema: schema /items/0: a schema must be an object or a boolean`},
	{`{"items":[{}],"additionalItems":1}`, `jsonschema: schema /additionalItems: a schema must be an object or a boolean`},
	{`{"items":1}`, `jsonschema: schema /items: a schema must be an object or a boolean`},
	{`{"uniqueItems":1}`, `jsonschema: schema /uniqueItems: must be a boolean`},
	{`{"contains":1}`, `jsonschema: schema /contains: a schema must be an object or a boolean`},
	{`{"minimum":"1"}`, `jsonschema: schema /minimum: must be a number`},
	{`{"exclusiveMaximum":"1"}`, `jsonschema: schema /exclusiveMaximum: must be a number`},
	{`{"multipleOf":0}`, `jsonschema: schema /multipleOf: must be > 0`},
	{`{"multipleOf":-2}`, `jsonschema: schema /multipleOf: must be > 0`},
	{`{"pattern":1}`, `jsonschema: schema /pattern: must be a string`},
	{`{"pattern":"("}`, "jsonschema: schema /pattern: invalid pattern \"(\" (Go RE2 syntax): error parsing regexp: missing closing ): `(`"},
	{`{"allOf":[]}`, `jsonschema: schema /allOf: must be a non-empty array of schemas`},
	{`{"anyOf":{}}`, `jsonschema: schema /anyOf: must be a non-empty array of schemas`},
	{`{"oneOf":[1]}`, `jsonschema: schema /oneOf/0: a schema must be an object or a boolean`},
	{`{"not":1}`, `jsonschema: schema /not: a schema must be an object or a boolean`},
	{`{"if":"x"}`, `jsonschema: schema /if: a schema must be an object or a boolean`},
	// Several faults: the earliest step's is reported.
	{`{"not":1,"pattern":1,"multipleOf":0,"contains":1,"dependentRequired":[],"minItems":-1,"required":1,"type":"nope","$ref":1}`, `jsonschema: schema /$ref: must be a string`},
	{`{"not":1,"pattern":1,"multipleOf":0,"contains":1,"dependentRequired":[],"minItems":-1,"required":1,"type":"nope"}`, `jsonschema: schema /type: unknown type "nope"`},
	{`{"not":1,"pattern":1,"multipleOf":0,"contains":1,"dependentRequired":[],"minItems":-1,"required":1}`, `jsonschema: schema /required: must be an array of strings`},
	{`{"not":1,"pattern":1,"multipleOf":0,"contains":1,"dependentRequired":[],"minItems":-1}`, `jsonschema: schema /minItems: must be a non-negative integer`},
	{`{"not":1,"pattern":1,"multipleOf":0,"contains":1,"dependentRequired":[]}`, `jsonschema: schema /dependentRequired: must be an object`},
	{`{"not":1,"pattern":1,"multipleOf":0,"contains":1}`, `jsonschema: schema /contains: a schema must be an object or a boolean`},
	{`{"not":1,"pattern":1,"multipleOf":0}`, `jsonschema: schema /multipleOf: must be > 0`},
	{`{"not":1,"pattern":1}`, `jsonschema: schema /pattern: must be a string`},
}

func TestCompileFaults(t *testing.T) {
	for _, tc := range compileFaults {
		_, err := Compile(json.RawMessage(tc.schema))
		if err == nil {
			t.Errorf("%s: compiled", tc.schema)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.schema, err.Error(), tc.want)
		}
	}
}

// compileVerdicts: what each step compiles is what validation then
// enforces.
var compileVerdicts = []struct{ schema, instance, want string }{
	{`{"$defs":{"n":{"type":"integer"}},"$ref":"#/$defs/n"}`, `1`, ``},
	{`{"$defs":{"n":{"type":"integer"}},"$ref":"#/$defs/n"}`, `1.5`, `must be integer, got number`},
	{`{"definitions":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/n"}}}`, `{"a":"x"}`, `a: must be integer, got string`},
	{`{"type":["string","null"]}`, `null`, ``},
	{`{"type":["string","null"]}`, `1`, `must be string or null, got integer`},
	{`{"enum":[1,"a",null]}`, `"b"`, `must be one of 1, "a", null`},
	{`{"const":{"a":[1]}}`, `{"a":[1.0]}`, ``},
	{`{"const":{"a":[1]}}`, `{"a":[2]}`, `must be equal to {"a":[1]}`},
	{`{"properties":{"a":{"type":"string"}},"required":["a","b"],"additionalProperties":false}`, `{"a":1,"c":2}`, `missing required property "b"; a: must be string, got integer; unexpected property "c" (allowed: "a")`},
	{`{"patternProperties":{"^x":{"type":"integer"}},"propertyNames":{"maxLength":2}}`, `{"xa":"s","long":1}`, `property name "long" is invalid: must be at most 2 characters long; xa: must be integer, got string`},
	{`{"minProperties":1,"maxProperties":1}`, `{}`, `must have at least 1 property`},
	{`{"minProperties":1,"maxProperties":1}`, `{"a":1,"b":2}`, `must have at most 1 property`},
	{`{"dependentRequired":{"a":["b","c"]}}`, `{"a":1,"b":2}`, `property "a" requires property "c"`},
	{`{"prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":2,"maxItems":3}`, `["a",1,"b"]`, `2: must be integer, got string`},
	{`{"prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":2,"maxItems":3}`, `["a"]`, `must contain at least 2 items`},
	{`{"items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`, `must contain at most 1 item`},
	{`{"uniqueItems":true,"contains":{"type":"string"},"minContains":2,"maxContains":2}`, `["a","a",1]`, `items must be unique, but items 0 and 1 are equal`},
	{`{"uniqueItems":true,"contains":{"type":"string"},"minContains":2,"maxContains":2}`, `["a","b","c"]`, `must contain at most 2 items matching "contains"`},
	{`{"minimum":1,"maximum":10,"multipleOf":0.5}`, `10.5`, `must be <= 10`},
	{`{"minimum":1,"maximum":10,"multipleOf":0.5}`, `1.25`, `must be a multiple of 0.5`},
	{`{"exclusiveMinimum":1,"exclusiveMaximum":10}`, `1`, `must be > 1`},
	{`{"exclusiveMinimum":1,"exclusiveMaximum":10}`, `10`, `must be < 10`},
	// Draft-04: a boolean exclusiveMinimum/Maximum makes minimum/maximum
	// exclusive, in whichever order the keywords come.
	{`{"exclusiveMinimum":true,"minimum":1,"maximum":10,"exclusiveMaximum":true}`, `1`, `must be > 1`},
	{`{"minimum":1,"exclusiveMinimum":true,"exclusiveMaximum":true,"maximum":10}`, `10`, `must be < 10`},
	{`{"minimum":1,"exclusiveMinimum":true,"exclusiveMaximum":true,"maximum":10}`, `5`, ``},
	{`{"minimum":1,"exclusiveMinimum":false,"exclusiveMaximum":false,"maximum":10}`, `10`, ``},
	{`{"minLength":2,"maxLength":3,"pattern":"^a"}`, `"bcde"`, `must be at most 3 characters long; must match pattern "^a"`},
	{`{"allOf":[{"type":"integer"}],"anyOf":[{"minimum":5},{"maximum":0}],"oneOf":[{"multipleOf":2},{"multipleOf":3}]}`, `6`, `must match exactly one oneOf alternative, but matched 2 (#0, #1)`},
	{`{"allOf":[{"type":"integer"}],"anyOf":[{"minimum":5},{"maximum":0}],"oneOf":[{"multipleOf":2},{"multipleOf":3}]}`, `8`, ``},
	{`{"not":{"type":"string"}}`, `"s"`, `must not match the "not" schema`},
	{`{"if":{"type":"integer"},"then":{"minimum":3},"else":{"type":"string"}}`, `2`, `must be >= 3`},
	{`{"if":{"type":"integer"},"then":{"minimum":3},"else":{"type":"string"}}`, `true`, `must be string, got boolean`},
}

func TestCompileVerdicts(t *testing.T) {
	for _, tc := range compileVerdicts {
		s, err := Compile(json.RawMessage(tc.schema))
		if err != nil {
			t.Errorf("%s: %v", tc.schema, err)
			continue
		}
		got := ""
		if err := s.Validate(json.RawMessage(tc.instance)); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s against %s:\n got %q\nwant %q", tc.schema, tc.instance, got, tc.want)
		}
	}
}
