package e2e

import (
	"sort"
	"testing"
)

// TestBatch20250326: in 2025-03-26 a batch line is answered by one line
// holding an array of the requests' responses (none for notifications).
func TestBatch20250326(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{AllowBatches: true})
	c.Initialize("2025-03-26")

	t.Run("mixed", func(t *testing.T) {
		m := c.SendNext(`[{"jsonrpc":"2.0","id":"b1","method":"ping"},` +
			`{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"echo","arguments":{"text":"in a batch"}}},` +
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}]`)
		if m.Batch == nil {
			t.Fatalf("want a JSON array, got %s", m)
		}
		if len(m.Batch) != 2 {
			t.Fatalf("want exactly 2 responses, got %d: %s", len(m.Batch), m)
		}
		byID := map[string]*Msg{}
		for _, e := range m.Batch {
			byID[e.IDKey()] = e
		}
		if p := byID[`"b1"`]; p == nil || p.Error != nil || string(p.Result) != "{}" {
			t.Errorf("ping in batch: %v", p)
		}
		if e := byID[`"b2"`]; e == nil {
			t.Errorf("echo in batch: no response in %s", m)
		} else if got := toolText(t, e); got != "in a batch" {
			t.Errorf("echo in batch: got %q", got)
		}
	})

	t.Run("slow and fast parts", func(t *testing.T) {
		m := c.SendNext(`[{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"sleep","arguments":{"ms":200}}},` +
			`{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"echo","arguments":{"text":"quick"}}},` +
			`{"jsonrpc":"2.0","id":"s3","method":"no/such/method"}]`)
		if m.Batch == nil || len(m.Batch) != 3 {
			t.Fatalf("want an array of 3, got %s", m)
		}
		var ids []string
		for _, e := range m.Batch {
			ids = append(ids, e.IDKey())
			switch e.IDKey() {
			case `"s1"`:
				if got, err := toolTextErr(e); err != nil || got != "slept" {
					t.Errorf("sleep in batch: %s", e)
				}
			case `"s3"`:
				wantError(t, e, -32601)
			}
		}
		sort.Strings(ids)
		if want := []string{`"s1"`, `"s2"`, `"s3"`}; !equalStrings(ids, want) {
			t.Errorf("ids %v, want %v", ids, want)
		}
	})

	t.Run("empty", func(t *testing.T) {
		m := c.SendNext(`[]`)
		if m.Batch != nil {
			t.Fatalf("empty batch: want a single error, got %s", m)
		}
		wantError(t, m, -32600)
		if m.IDKey() != "null" {
			t.Errorf("id = %s, want null", m.ID)
		}
	})

	t.Run("initialize in batch", func(t *testing.T) {
		m := c.SendNext(`[{"jsonrpc":"2.0","id":"bi","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}},` +
			`{"jsonrpc":"2.0","id":"bp","method":"ping"}]`)
		if m.Batch == nil || len(m.Batch) != 2 {
			t.Fatalf("want an array of 2, got %s", m)
		}
		for _, e := range m.Batch {
			switch e.IDKey() {
			case `"bi"`:
				if e.Error == nil {
					t.Errorf("initialize in a batch: want an error element, got %s", e)
				}
			case `"bp"`:
				if e.Error != nil {
					t.Errorf("ping in a batch: %s", e)
				}
			default:
				t.Errorf("unexpected element %s", e)
			}
		}
	})

	t.Run("invalid elements", func(t *testing.T) {
		m := c.SendNext(`[1,{"jsonrpc":"2.0","id":"ok","method":"ping"},[{"jsonrpc":"2.0","id":"nested","method":"ping"}]]`)
		if m.Batch == nil || len(m.Batch) != 3 {
			t.Fatalf("want an array of 3, got %s", m)
		}
		n := 0
		for _, e := range m.Batch {
			if e.Error != nil && e.Error.Code == -32600 {
				n++
			}
		}
		if n != 2 {
			t.Errorf("want 2 -32600 elements, got %s", m)
		}
	})

	t.Run("only notifications", func(t *testing.T) {
		c.AssertSilent(`[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2}},{"jsonrpc":"2.0","method":"notifications/other"}]`)
	})

	t.Run("malformed batch", func(t *testing.T) {
		m := c.SendNext(`[{"jsonrpc":"2.0","id":"x","method":"ping"},`)
		if m.Batch != nil {
			t.Fatalf("want a single error, got %s", m)
		}
		wantError(t, m, -32700)
	})

	if got := toolText(t, c.Call("tools/call", echoParams("after batches"))); got != "after batches" {
		t.Errorf("echo: got %q", got)
	}
}

// TestBatchRejected: outside 2025-03-26 a batch is refused whole with a
// single -32600, and the server goes on serving.
func TestBatchRejected(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2024-11-05", "2025-06-18", "2025-11-25"} {
		name := version
		if name == "" {
			name = "no handshake"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := Start(t, Options{})
			if version != "" {
				c.Initialize(version)
			}
			m := c.SendNext(`[{"jsonrpc":"2.0","id":"r1","method":"ping"},{"jsonrpc":"2.0","id":"r2","method":"ping"}]`)
			if m.Batch != nil {
				t.Fatalf("want a single error, got %s", m)
			}
			wantError(t, m, -32600)
			if ping := c.Call("ping", nil); ping.Error != nil {
				t.Errorf("ping after rejected batch: %s", ping)
			}
			if len(c.Responses(`"r1"`)) != 0 || len(c.Responses(`"r2"`)) != 0 {
				t.Errorf("parts of a rejected batch were answered")
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
