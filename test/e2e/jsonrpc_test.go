package e2e

import (
	"testing"
)

// TestJSONRPCErrors sends malformed and unusual messages, one at a time, and
// checks the single line each gets back: its error code and its id.
func TestJSONRPCErrors(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-06-18")

	for _, tc := range []struct {
		name   string
		line   string
		code   int
		wantID string // raw id expected in the response
	}{
		{"not json", `this is not json`, -32700, `null`},
		{"truncated json", `{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700, `null`},
		{"truncated string", `{"jsonrpc":"2.0","id":1,"method":"pi`, -32700, `null`},
		{"number", `5`, -32600, `null`},
		{"string", `"x"`, -32600, `null`},
		{"null", `null`, -32600, `null`},
		{"empty object", `{}`, -32600, `null`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, `7`},
		{"jsonrpc missing", `{"id":"no-version","method":"ping"}`, -32600, `"no-version"`},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":71,"method":"ping"}`, -32600, `71`},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, `null`},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, `null`},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, `null`},
		{"method number", `{"jsonrpc":"2.0","id":8,"method":42}`, -32600, `8`},
		{"method null", `{"jsonrpc":"2.0","id":81,"method":null}`, -32600, `81`},
		{"params string", `{"jsonrpc":"2.0","id":82,"method":"tools/list","params":"x"}`, -32600, `82`},
		{"neither request nor response", `{"jsonrpc":"2.0","id":83}`, -32600, `83`},
		{"unknown method", `{"jsonrpc":"2.0","id":9,"method":"no/such/method"}`, -32601, `9`},
		{"unknown tool", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, -32602, `10`},
		{"tools/call without name", `{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"arguments":{}}}`, -32602, `101`},
		{"arguments string", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":"text"}}`, -32602, `11`},
		{"arguments array", `{"jsonrpc":"2.0","id":111,"method":"tools/call","params":{"name":"echo","arguments":["text"]}}`, -32602, `111`},
		{"params array", `{"jsonrpc":"2.0","id":12,"method":"tools/list","params":[1,2]}`, -32602, `12`},
		{"params array on tools/call", `{"jsonrpc":"2.0","id":"pa","method":"tools/call","params":["echo"]}`, -32602, `"pa"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := c.SendNext(tc.line)
			if m.Batch != nil {
				t.Fatalf("got a batch: %s", m)
			}
			wantError(t, m, tc.code)
			if m.IDKey() != tc.wantID {
				t.Errorf("id = %s, want %s: %s", m.ID, tc.wantID, m)
			}
		})
	}

	t.Run("ids echoed exactly", func(t *testing.T) {
		for _, id := range []string{
			`"abc"`,
			`""`,
			`"with \"quotes\" and \\ and \u00e9 and é"`,
			`0`,
			`-5`,
			`9007199254740993`,
			`123456789012345678901234567890`,
			`-98765432109876543210`,
		} {
			m := c.SendNext(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
			if m.IDKey() != id {
				t.Errorf("id %s echoed as %s", id, m.ID)
			}
			if m.Error != nil || string(m.Result) != "{}" {
				t.Errorf("ping with id %s: %s", id, m)
			}
		}
		m := c.SendNext(`{"jsonrpc":"2.0","id":"str-id-call","method":"tools/call","params":{"name":"echo","arguments":{"text":"by string id"}}}`)
		if m.IDKey() != `"str-id-call"` || toolText(t, m) != "by string id" {
			t.Errorf("tools/call with string id: %s", m)
		}
	})

	t.Run("silent", func(t *testing.T) {
		for _, line := range []string{
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}`,
			`{"jsonrpc":"2.0","method":"no/such/method"}`,
			`{"jsonrpc":"2.0","method":"ping"}`,
			`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"notified"}}}`,
			`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
			`{"jsonrpc":"2.0","id":999,"result":{}}`,
			`{"jsonrpc":"2.0","id":"r-998","error":{"code":-1,"message":"no"}}`,
		} {
			c.AssertSilent(line)
		}
	})

	// The server survived all of it.
	if got := toolText(t, c.Call("tools/call", echoParams("survived"))); got != "survived" {
		t.Errorf("echo: got %q", got)
	}
}

// TestDuplicateInFlightID: a request whose id is already in flight is
// refused without disturbing the first one.
func TestDuplicateInFlightID(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-11-25")
	c.AllowRepeat(`"dup"`)
	key := c.Request("dup", "tools/call", sleepParams(300))
	c.Request("dup", "tools/call", echoParams("second"))
	first := c.Response(key, callTimeout)
	// The first line answered is the refusal of the duplicate; then the sleep.
	if !c.waitUntil(callTimeout, func() bool { return len(c.byID[key]) >= 2 }) {
		t.Fatalf("want two responses for id %s (refusal + sleep), got %v", key, c.Responses(key))
	}
	rs := c.Responses(key)
	if first.Error == nil || first.Error.Code != -32600 {
		t.Errorf("duplicate id: first response %s, want -32600", first)
	}
	if got, err := toolTextErr(rs[1]); err != nil || got != "slept" {
		t.Errorf("original request: %s", rs[1])
	}
}
