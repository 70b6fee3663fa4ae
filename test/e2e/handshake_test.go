package e2e

import (
	"encoding/json"
	"testing"
)

type initResult struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Capabilities    map[string]json.RawMessage `json:"capabilities"`
	ServerInfo      map[string]json.RawMessage `json:"serverInfo"`
	Instructions    *string                    `json:"instructions"`
}

// TestLegacyHandshake runs the initialize-era lifecycle in every legacy
// revision: the version is echoed, serverInfo.title appears from 2025-06-18,
// notifications/initialized gets no answer, tools/list and tools/call work.
func TestLegacyHandshake(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version   string
		wantTitle bool
	}{
		{"2024-11-05", false},
		{"2025-03-26", false},
		{"2025-06-18", true},
		{"2025-11-25", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			c := Start(t, Options{})
			m := c.Call("initialize", map[string]any{
				"protocolVersion": tc.version,
				"capabilities":    map[string]any{},
				"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
			})
			checkInitResult(t, m, tc.version, tc.wantTitle)

			// notifications/initialized: never answered.
			c.AssertSilent(RequestLine(nil, "notifications/initialized", nil))

			list := wantResult(t, c.Call("tools/list", nil))
			var tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			mustUnmarshal(t, list["tools"], &tools)
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
				var schema map[string]any
				if err := json.Unmarshal(tl.InputSchema, &schema); err != nil || schema["type"] != "object" {
					t.Errorf("tool %s: inputSchema %s is not an object schema", tl.Name, tl.InputSchema)
				}
			}
			for _, want := range []string{"echo", "work", "sleep", "panic", "print"} {
				if !hasString(names, want) {
					t.Errorf("tools/list: %q missing from %v", want, names)
				}
			}
			if _, ok := list["resultType"]; ok {
				t.Errorf("legacy tools/list carries the 2026-07-28 resultType: %s", list["resultType"])
			}

			if got := toolText(t, c.Call("tools/call", echoParams("hello "+tc.version))); got != "hello "+tc.version {
				t.Errorf("echo: got %q", got)
			}
			w := c.Call("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"us": 10}})
			if got := toolText(t, w); got != "ok" {
				t.Errorf("work: got %q, want ok", got)
			}
		})
	}
}

func checkInitResult(t *testing.T, m *Msg, wantVersion string, wantTitle bool) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("initialize: %s", m)
	}
	var r initResult
	mustUnmarshal(t, m.Result, &r)
	if r.ProtocolVersion != wantVersion {
		t.Errorf("protocolVersion = %q, want %q", r.ProtocolVersion, wantVersion)
	}
	if tools, ok := r.Capabilities["tools"]; !ok || len(tools) == 0 || tools[0] != '{' {
		t.Errorf("capabilities.tools missing or not an object: %s", m.Result)
	}
	var name, version string
	if json.Unmarshal(r.ServerInfo["name"], &name) != nil || name == "" {
		t.Errorf("serverInfo.name missing: %s", m.Result)
	}
	if json.Unmarshal(r.ServerInfo["version"], &version) != nil || version == "" {
		t.Errorf("serverInfo.version missing: %s", m.Result)
	}
	_, hasTitle := r.ServerInfo["title"]
	if hasTitle != wantTitle {
		t.Errorf("serverInfo.title present = %v, want %v for %s: %s", hasTitle, wantTitle, wantVersion, m.Result)
	}
	if r.Instructions == nil || *r.Instructions == "" {
		t.Errorf("instructions missing: %s", m.Result)
	}
}

// TestLegacyNegotiation covers the handshake's edges: an unknown version
// gets a counter-offer (a result), a second initialize is an error, requests
// before initialize are errors (with their id), ping before initialize works.
func TestLegacyNegotiation(t *testing.T) {
	t.Parallel()

	t.Run("unknown version counter-offer", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		m := c.Call("initialize", map[string]any{
			"protocolVersion": "2099-01-01",
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
		})
		checkInitResult(t, m, "2025-11-25", true)
		c.Notify("notifications/initialized", nil)
		if got := toolText(t, c.Call("tools/call", echoParams("after counter-offer"))); got != "after counter-offer" {
			t.Errorf("echo: got %q", got)
		}
	})

	t.Run("second initialize", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		c.Initialize("2025-06-18")
		m := c.Call("initialize", map[string]any{
			"protocolVersion": "2025-03-26",
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
		})
		if m.Error == nil {
			t.Errorf("second initialize: want an error, got %s", m)
		}
		// The first negotiation still holds: a 2025-03-26 batch is refused.
		if r := c.SendNext(`[{"jsonrpc":"2.0","id":"b","method":"ping"}]`); r.Batch != nil || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("batch after a refused re-initialize to 2025-03-26: got %s, want a single -32600", r)
		}
		if got := toolText(t, c.Call("tools/call", echoParams("still here"))); got != "still here" {
			t.Errorf("echo: got %q", got)
		}
	})

	t.Run("before initialize", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		for _, tc := range []struct {
			id     any
			method string
			params any
		}{
			{"pre-1", "tools/list", nil},
			{77, "tools/call", echoParams("too early")},
			{"pre-3", "tools/list", map[string]any{"_meta": map[string]any{"progressToken": 1}}},
		} {
			key := c.Request(tc.id, tc.method, tc.params)
			m := c.Response(key, callTimeout)
			if m.Error == nil {
				t.Errorf("%s before initialize: want an error, got %s", tc.method, m)
			}
		}
		ping := c.Call("ping", nil)
		if ping.Error != nil || string(ping.Result) != "{}" {
			t.Errorf("ping before initialize: got %s, want result {}", ping)
		}
		// The handshake still works afterwards.
		checkInitResult(t, c.Call("initialize", map[string]any{
			"protocolVersion": "2025-06-18",
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
		}), "2025-06-18", true)
		c.Notify("notifications/initialized", nil)
		if got := toolText(t, c.Call("tools/call", echoParams("now"))); got != "now" {
			t.Errorf("echo: got %q", got)
		}
	})

	t.Run("malformed initialize", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		for _, params := range []any{
			nil,
			map[string]any{"capabilities": map[string]any{}},
			map[string]any{"protocolVersion": 2025},
			map[string]any{"protocolVersion": "2025-06-18", "capabilities": "all"},
		} {
			m := c.Call("initialize", params)
			wantError(t, m, -32602)
		}
		// None of those initialized the session.
		checkInitResult(t, c.Call("initialize", map[string]any{
			"protocolVersion": "2024-11-05",
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
		}), "2024-11-05", false)
	})
}
