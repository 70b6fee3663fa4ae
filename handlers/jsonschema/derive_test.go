package jsonschema

import (
	"encoding/json"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

type basicArgs struct {
	Name    string  `json:"name" description:"Display name" jsonschema:"minLength=1,maxLength=64"`
	Count   int     `json:"count,omitempty" jsonschema:"minimum=1,maximum=10,default=3"`
	Ratio   float64 `json:"ratio"`
	Enabled bool    `json:"enabled"`
	Size    uint8   `json:"size,omitempty"`
	Mode    string  `json:"mode,omitempty" enum:"fast, slow"`
	Level   int     `json:"level,omitempty" enum:"1,2,3"`
	Skip    string  `json:"-"`
	hidden  string
	NoTag   string
}

type innerArgs struct {
	X int `json:"x"`
}

type EmbeddedBase struct {
	ID string `json:"id"`
}

type nestedArgs struct {
	EmbeddedBase
	Inner  innerArgs         `json:"inner"`
	Ptr    *innerArgs        `json:"ptr"`
	OptPtr *string           `json:"opt_ptr,omitempty"`
	Tags   []string          `json:"tags,omitempty" enum:"a,b" jsonschema:"minItems=1,maxItems=5,uniqueItems"`
	Labels map[string]string `json:"labels,omitempty"`
	Any    map[string]any    `json:"any,omitempty"`
	Data   []byte            `json:"data,omitempty"`
	When   time.Time         `json:"when"`
	Raw    json.RawMessage   `json:"raw,omitempty"`
	Pair   [2]int            `json:"pair"`
	Matrix [][]float64       `json:"matrix,omitempty" jsonschema:"minimum=0"`
	Name   string            `json:"name,omitempty" jsonschema:"required,pattern=^[a-z,]+$"`
}

type treeNode struct {
	Value    string      `json:"value"`
	Children []*treeNode `json:"children,omitempty"`
}

type forest struct {
	Root *treeNode `json:"root"`
	Alt  treeNode  `json:"alt"`
}

type overrides struct {
	Ptr   *int   `json:"ptr" jsonschema:"required"`
	Value string `json:"value" jsonschema:"optional,title=The value,default=hello\\, world"`
	Num   int    `json:"num,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1e3,multipleOf=5"`
	Flag  bool   `json:"flag,omitempty" enum:"true" jsonschema:"default=false"`
	IntS  int64  `json:"ints,string"`
	List  []int  `json:"list" jsonschema:"default=[1\\,2]"`
	Addr  netip.Addr
	Iface any `json:"iface"`
}

type embedPtr struct {
	*EmbeddedBase
	Z int `json:"z"`
}

func TestReflectExact(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"basic", reflect.TypeFor[basicArgs](), `{"type":"object","properties":{` +
			`"name":{"type":"string","description":"Display name","minLength":1,"maxLength":64},` +
			`"count":{"type":"integer","minimum":1,"maximum":10,"default":3},` +
			`"ratio":{"type":"number"},"enabled":{"type":"boolean"},` +
			`"size":{"type":"integer","minimum":0},` +
			`"mode":{"type":"string","enum":["fast","slow"]},` +
			`"level":{"type":"integer","enum":[1,2,3]},` +
			`"NoTag":{"type":"string"}},` +
			`"required":["name","ratio","enabled","NoTag"],"additionalProperties":false}`},
		{"nested", reflect.TypeFor[nestedArgs](), `{"type":"object","properties":{` +
			`"id":{"type":"string"},` +
			`"inner":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},` +
			`"ptr":{"type":["object","null"],"properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},` +
			`"opt_ptr":{"type":"string"},` +
			`"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1,"maxItems":5,"uniqueItems":true},` +
			`"labels":{"type":"object","additionalProperties":{"type":"string"}},` +
			`"any":{"type":"object"},` +
			`"data":{"type":"string","contentEncoding":"base64"},` +
			`"when":{"type":"string","format":"date-time"},` +
			`"raw":{},` +
			`"pair":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2},` +
			`"matrix":{"type":"array","items":{"type":"array","items":{"type":"number","minimum":0}}},` +
			`"name":{"type":"string","pattern":"^[a-z,]+$"}},` +
			`"required":["id","inner","when","pair","name"],"additionalProperties":false}`},
		{"recursive root", reflect.TypeFor[treeNode](), `{"type":"object","properties":{` +
			`"value":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},` +
			`"required":["value"],"additionalProperties":false}`},
		{"recursive defs", reflect.TypeFor[*forest](), `{"type":"object","properties":{` +
			`"root":{"anyOf":[{"$ref":"#/$defs/treeNode"},{"type":"null"}]},` +
			`"alt":{"$ref":"#/$defs/treeNode"}},` +
			`"required":["alt"],"additionalProperties":false,` +
			`"$defs":{"treeNode":{"type":"object","properties":{"value":{"type":"string"},` +
			`"children":{"type":"array","items":{"$ref":"#/$defs/treeNode"}}},` +
			`"required":["value"],"additionalProperties":false}}}`},
		{"overrides", reflect.TypeFor[overrides](), `{"type":"object","properties":{` +
			`"ptr":{"type":["integer","null"]},` +
			`"value":{"type":"string","title":"The value","default":"hello, world"},` +
			`"num":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":1e3,"multipleOf":5},` +
			`"flag":{"type":"boolean","enum":[true],"default":false},` +
			`"ints":{"type":"string"},` +
			`"list":{"type":["array","null"],"items":{"type":"integer"},"default":[1,2]},` +
			`"Addr":{"type":"string"},` +
			`"iface":{}},` +
			`"required":["ptr","ints","list","Addr","iface"],"additionalProperties":false}`},
		{"embedded pointer", reflect.TypeFor[embedPtr](), `{"type":"object","properties":{` +
			`"id":{"type":"string"},"z":{"type":"integer"}},"required":["z"],"additionalProperties":false}`},
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","additionalProperties":false}`},
		{"slice", reflect.TypeFor[[]int](), `{"type":"array","items":{"type":"integer"}}`},
		{"map", reflect.TypeFor[*map[string]uint](), `{"type":"object","additionalProperties":{"type":"integer","minimum":0}}`},
		{"int map key", reflect.TypeFor[map[int]bool](), `{"type":"object","additionalProperties":{"type":"boolean"}}`},
		{"scalar", reflect.TypeFor[string](), `{"type":"string"}`},
		{"any", reflect.TypeFor[any](), `{}`},
		{"time", reflect.TypeFor[time.Time](), `{"type":"string","format":"date-time"}`},
		{"number", reflect.TypeFor[json.Number](), `{"type":"number"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Reflect(tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Reflect(%s)\n got: %s\nwant: %s", tt.typ, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON")
			}
			// Every derived schema must compile.
			if _, err := Compile(got); err != nil {
				t.Errorf("Compile(derived): %v", err)
			}
			again, _ := Reflect(tt.typ)
			if string(again) != string(got) {
				t.Errorf("output is not deterministic")
			}
		})
	}
}

// Conflicting embedded names follow encoding/json: the property set must be
// exactly the keys json.Marshal writes.
type conflictA struct {
	Name string
	A    int
}
type conflictB struct {
	Name string
	B    int
}
type conflictC struct {
	Label string `json:"Name"`
	C     int    `json:"A"`
}
type conflicts struct {
	conflictA
	conflictB
	*conflictC
	Named conflictA `json:"named"`
}

func TestReflectEmbeddedLikeEncodingJSON(t *testing.T) {
	b, err := Reflect(reflect.TypeFor[conflicts]())
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	v := conflicts{conflictC: &conflictC{}}
	enc, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(enc, &m)
	if len(m) != len(s.Properties) {
		t.Errorf("properties %s, json.Marshal keys %s", b, enc)
	}
	for k := range m {
		if _, ok := s.Properties[k]; !ok {
			t.Errorf("property %q missing from %s", k, b)
		}
	}
}

type badChan struct {
	C chan int `json:"c"`
}
type badFunc struct{ F func() }
type badComplex struct{ X complex128 }
type badKey struct {
	M map[[2]int]string
}
type badTag struct {
	S string `jsonschema:"minimum=1"`
}
type badTagNumber struct {
	N int `jsonschema:"minimum=abc"`
}
type badTagUnknown struct {
	N int `jsonschema:"minimun=1"`
}
type badEnum struct {
	N int `enum:"1,two"`
}
type badPattern struct {
	S string `jsonschema:"pattern=(?=x)"`
}
type badBoth struct {
	S string `jsonschema:"required,optional"`
}
type badItems struct {
	S string `jsonschema:"minItems=1"`
}
type badDefault struct {
	N int `jsonschema:"default=abc"`
}
type badCount struct {
	S string `jsonschema:"maxLength=-1"`
}
type badMultiple struct {
	N int `jsonschema:"multipleOf=0"`
}

func TestReflectErrors(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		want string
	}{
		{nil, "nil type"},
		{reflect.TypeFor[badChan](), "badChan.C: unsupported type chan int"},
		{reflect.TypeFor[badFunc](), "unsupported type func()"},
		{reflect.TypeFor[badComplex](), "unsupported type complex128"},
		{reflect.TypeFor[badKey](), "unsupported map key type [2]int"},
		{reflect.TypeFor[badTag](), "minimum needs a numeric field"},
		{reflect.TypeFor[badTagNumber](), `"abc" is not a JSON number`},
		{reflect.TypeFor[badTagUnknown](), `unknown jsonschema tag keyword "minimun"`},
		{reflect.TypeFor[badEnum](), `"two" is not an integer`},
		{reflect.TypeFor[badPattern](), "invalid pattern"},
		{reflect.TypeFor[badBoth](), "both required and optional"},
		{reflect.TypeFor[badItems](), "minItems needs a slice or array field"},
		{reflect.TypeFor[badDefault](), `"abc" is not a JSON value`},
		{reflect.TypeFor[badCount](), "not a non-negative integer"},
		{reflect.TypeFor[badMultiple](), "multipleOf must be > 0"},
	}
	for _, tt := range tests {
		_, err := Reflect(tt.typ)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Reflect(%v) error = %v, want containing %q", tt.typ, err, tt.want)
		}
	}
}

func TestParseSchemaTag(t *testing.T) {
	tests := []struct {
		tag  string
		want []tagItem
	}{
		{"", nil},
		{"required", []tagItem{{key: "required"}}},
		{"minimum=1, maximum=2", []tagItem{{"minimum", "1", true}, {"maximum", "2", true}}},
		{`default=a\,b,uniqueItems`, []tagItem{{"default", "a,b", true}, {key: "uniqueItems"}}},
		{`minLength=1,pattern=^[a,b]\d{2}$`, []tagItem{{"minLength", "1", true}, {"pattern", `^[a,b]\d{2}$`, true}}},
		{"optional,", []tagItem{{key: "optional"}}},
	}
	for _, tt := range tests {
		got, err := parseSchemaTag(tt.tag)
		if err != nil {
			t.Errorf("parseSchemaTag(%q): %v", tt.tag, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseSchemaTag(%q) = %+v, want %+v", tt.tag, got, tt.want)
		}
	}
	for _, bad := range []string{"required=1", "minimum", "bogus"} {
		if _, err := parseSchemaTag(bad); err == nil {
			t.Errorf("parseSchemaTag(%q): no error", bad)
		}
	}
}

type roundTrip struct {
	Name     string            `json:"name" jsonschema:"minLength=1"`
	Count    int               `json:"count" jsonschema:"minimum=0"`
	Big      uint64            `json:"big"`
	Ratio    float32           `json:"ratio"`
	Tags     []string          `json:"tags"`
	Opt      *innerArgs        `json:"opt,omitempty"`
	Nullable *innerArgs        `json:"nullable"`
	Labels   map[string]string `json:"labels"`
	Data     []byte            `json:"data"`
	When     time.Time         `json:"when"`
	Tree     *treeNode         `json:"tree"`
	Any      any               `json:"any"`
	Pair     [2]bool           `json:"pair"`
	Mode     string            `json:"mode" enum:"a,b"`
	MaybeE   *string           `json:"maybe_e" enum:"x,y"`
	Forest   forest            `json:"forest"`
	EmbeddedBase
}

func TestRoundTrip(t *testing.T) {
	schema, err := Reflect(reflect.TypeFor[roundTrip]())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	y := "y"
	values := []roundTrip{
		{Name: "zero-ish", Mode: "a"}, // nil slices, maps and pointers marshal to null
		{
			Name: "full", Count: 3, Big: math.MaxUint64, Ratio: 0.1, Tags: []string{"a", "b"},
			Opt: &innerArgs{X: 1}, Nullable: &innerArgs{X: -2}, Labels: map[string]string{"k": "v"},
			Data: []byte{0, 1, 2}, When: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC),
			Tree: &treeNode{Value: "r", Children: []*treeNode{{Value: "c"}}},
			Any:  map[string]any{"x": []any{1, "two"}}, Pair: [2]bool{true, false}, Mode: "b",
			MaybeE: &y, Forest: forest{Root: &treeNode{Value: "x"}, Alt: treeNode{Value: "y"}},
			EmbeddedBase: EmbeddedBase{ID: "id"},
		},
	}
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(b); err != nil {
			t.Errorf("Validate(%s): %v\nschema: %s", b, err, schema)
		}
	}
	// And a value the tags forbid does not.
	b, _ := json.Marshal(roundTrip{Name: "", Mode: "c"})
	err = s.Validate(b)
	if err == nil || err.Error() != `mode: must be one of "a", "b"; name: must be at least 1 character long` {
		t.Errorf("Validate(bad) = %v", err)
	}
}
