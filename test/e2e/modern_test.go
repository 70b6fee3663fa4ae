package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

const modernVersion = "2026-07-28"

// meta is a valid 2026-07-28 request _meta.
func meta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

func withMeta(params map[string]any, m map[string]any) map[string]any {
	out := map[string]any{"_meta": m}
	for k, v := range params {
		out[k] = v
	}
	return out
}

// checkModernResult checks what 2026-07-28 requires of every result and,
// when cacheable, of cacheable ones.
func checkModernResult(t *testing.T, m *Msg, cacheable bool) map[string]json.RawMessage {
	t.Helper()
	r := wantResult(t, m)
	if string(r["resultType"]) != `"complete"` {
		t.Errorf("resultType = %s, want \"complete\": %s", r["resultType"], m)
	}
	var metaObj map[string]json.RawMessage
	if err := json.Unmarshal(r["_meta"], &metaObj); err != nil {
		t.Errorf("_meta missing or not an object: %s", m)
	}
	var info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(metaObj["io.modelcontextprotocol/serverInfo"], &info); err != nil || info.Name == "" || info.Version == "" {
		t.Errorf(`_meta["io.modelcontextprotocol/serverInfo"] missing or incomplete: %s`, m)
	}
	if cacheable {
		ttl := string(r["ttlMs"])
		if ttl == "" || strings.ContainsAny(ttl, ".eE-\"") || ttl == "null" {
			t.Errorf("ttlMs = %q, want an integer >= 0: %s", ttl, m)
		}
		if cs := string(r["cacheScope"]); cs != `"public"` && cs != `"private"` {
			t.Errorf("cacheScope = %s, want public or private: %s", cs, m)
		}
	}
	return r
}

// TestModernEra covers 2026-07-28: server/discover, per-request _meta on
// tools/call and tools/list, and every _meta validation error.
func TestModernEra(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})

	t.Run("server/discover", func(t *testing.T) {
		r := checkModernResult(t, c.Call("server/discover", map[string]any{"_meta": meta()}), true)
		var versions []string
		mustUnmarshal(t, r["supportedVersions"], &versions)
		if !hasString(versions, modernVersion) {
			t.Errorf("supportedVersions %v lacks %s", versions, modernVersion)
		}
		var caps map[string]json.RawMessage
		mustUnmarshal(t, r["capabilities"], &caps)
		if _, ok := caps["tools"]; !ok {
			t.Errorf("capabilities lack tools: %s", r["capabilities"])
		}
	})

	t.Run("tools/call", func(t *testing.T) {
		m := c.Call("tools/call", withMeta(echoParams("modern echo"), meta()))
		checkModernResult(t, m, false)
		if got := toolText(t, m); got != "modern echo" {
			t.Errorf("echo: got %q", got)
		}
		// Text that looks like the keys the runtime adds must not confuse it.
		tricky := `"_meta" "resultType":"input_required"`
		m = c.Call("tools/call", withMeta(echoParams(tricky), meta()))
		checkModernResult(t, m, false)
		if got := toolText(t, m); got != tricky {
			t.Errorf("echo: got %q, want %q", got, tricky)
		}
	})

	t.Run("tools/list", func(t *testing.T) {
		r := checkModernResult(t, c.Call("tools/list", map[string]any{"_meta": meta()}), true)
		if len(r["tools"]) == 0 || r["tools"][0] != '[' {
			t.Errorf("tools missing: %s", r["tools"])
		}
	})

	t.Run("valid logLevel", func(t *testing.T) {
		mt := meta()
		mt["io.modelcontextprotocol/logLevel"] = "debug"
		mt["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "e2e", "version": "1"}
		checkModernResult(t, c.Call("tools/call", withMeta(echoParams("x"), mt)), false)
	})

	without := func(key string) map[string]any {
		m := meta()
		delete(m, key)
		return m
	}
	set := func(key string, v any) map[string]any {
		m := meta()
		m[key] = v
		return m
	}
	for _, tc := range []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"discover without params", "server/discover", nil, -32602},
		{"discover without _meta", "server/discover", map[string]any{}, -32602},
		{"discover without protocolVersion", "server/discover", map[string]any{"_meta": without("io.modelcontextprotocol/protocolVersion")}, -32602},
		{"tools/call without _meta", "tools/call", echoParams("x"), -32602},
		{"unknown version", "server/discover", map[string]any{"_meta": set("io.modelcontextprotocol/protocolVersion", "1900-01-01")}, -32022},
		{"legacy version in _meta", "tools/call", withMeta(echoParams("x"), set("io.modelcontextprotocol/protocolVersion", "2025-06-18")), -32022},
		{"non-string version", "tools/list", map[string]any{"_meta": set("io.modelcontextprotocol/protocolVersion", 20260728)}, -32602},
		{"clientCapabilities missing", "tools/list", map[string]any{"_meta": without("io.modelcontextprotocol/clientCapabilities")}, -32602},
		{"clientCapabilities not an object", "server/discover", map[string]any{"_meta": set("io.modelcontextprotocol/clientCapabilities", []int{1})}, -32602},
		{"invalid logLevel", "tools/call", withMeta(echoParams("x"), set("io.modelcontextprotocol/logLevel", "verbose")), -32602},
		{"ping is gone", "ping", map[string]any{"_meta": meta()}, -32601},
		{"unknown method", "no/such/method", map[string]any{"_meta": meta()}, -32601},
		{"unknown tool", "tools/call", withMeta(map[string]any{"name": "nope", "arguments": map[string]any{}}, meta()), -32602},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := c.Call(tc.method, tc.params)
			e := wantError(t, m, tc.code)
			if tc.code != -32022 || m.Error == nil {
				return
			}
			var data struct {
				Supported []string `json:"supported"`
				Requested *string  `json:"requested"`
			}
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatalf("-32022 data: %v: %s", err, m)
			}
			if !hasString(data.Supported, modernVersion) {
				t.Errorf("data.supported %v lacks %s", data.Supported, modernVersion)
			}
			mt := tc.params.(map[string]any)["_meta"].(map[string]any)
			if want := mt["io.modelcontextprotocol/protocolVersion"]; data.Requested == nil || *data.Requested != want {
				t.Errorf("data.requested = %v, want %v", data.Requested, want)
			}
		})
	}

	// After all those errors, still serving.
	if got := toolText(t, c.Call("tools/call", withMeta(echoParams("alive"), meta()))); got != "alive" {
		t.Errorf("echo: got %q", got)
	}
}

// TestDualEra uses both eras in one process: a legacy handshake, then
// stateless 2026-07-28 requests, then legacy requests again.
func TestDualEra(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-06-18")

	legacy := c.Call("tools/call", echoParams("legacy"))
	if got := toolText(t, legacy); got != "legacy" {
		t.Errorf("legacy echo: got %q", got)
	}
	if _, ok := wantResult(t, legacy)["resultType"]; ok {
		t.Errorf("legacy result carries resultType: %s", legacy)
	}

	checkModernResult(t, c.Call("server/discover", map[string]any{"_meta": meta()}), true)
	m := c.Call("tools/call", withMeta(echoParams("modern"), meta()))
	checkModernResult(t, m, false)
	if got := toolText(t, m); got != "modern" {
		t.Errorf("modern echo: got %q", got)
	}
	// The modern request did not change the legacy session: ping still works.
	if p := c.Call("ping", nil); p.Error != nil || string(p.Result) != "{}" {
		t.Errorf("legacy ping after modern requests: %s", p)
	}
	if got := toolText(t, c.Call("tools/call", echoParams("legacy again"))); got != "legacy again" {
		t.Errorf("legacy echo: got %q", got)
	}
}

// TestModernWithoutHandshake: a process that never sees initialize serves
// 2026-07-28 requests, and a later initialize still works.
func TestModernWithoutHandshake(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	m := c.Call("tools/call", withMeta(echoParams("first"), meta()))
	checkModernResult(t, m, false)
	if got := toolText(t, m); got != "first" {
		t.Errorf("echo: got %q", got)
	}
	checkInitResult(t, c.Call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
	}), "2025-11-25", true)
}
