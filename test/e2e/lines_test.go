package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// pattern returns n bytes of printable text that does not repeat trivially,
// so a truncated or shifted echo does not compare equal.
func pattern(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var b strings.Builder
	b.Grow(n)
	for i := 0; b.Len() < n; i++ {
		b.WriteByte(alphabet[(i*7+i/len(alphabet))%len(alphabet)])
	}
	return b.String()
}

// TestHugeLine: a 16 MiB request line is answered with exactly its text.
func TestHugeLine(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-11-25")
	text := pattern(16 << 20)
	m := c.Call("tools/call", echoParams(text))
	got := toolText(t, m)
	if got != text {
		t.Fatalf("16 MiB echo: got %d bytes, want %d (equal prefix %d)", len(got), len(text), commonPrefix(got, text))
	}
	if got := toolText(t, c.Call("tools/call", echoParams("small"))); got != "small" {
		t.Errorf("echo after huge line: got %q", got)
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestMaxLine: with -max-line 4096 an over-long line gets -32600 carrying the
// request's id (found in the line's head), and the server goes on.
func TestMaxLine(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{Args: []string{"-max-line", "4096"}})
	c.Initialize("2025-06-18")

	long := RequestLine("too-long-1", "tools/call", echoParams(pattern(10<<10)))
	m := c.SendNext(long)
	wantError(t, m, -32600)
	if m.IDKey() != `"too-long-1"` {
		t.Errorf("id = %s, want \"too-long-1\": %s", m.ID, m)
	}

	// Integer id, and a line that crosses the reader's 64 KiB buffer.
	long = `{"jsonrpc":"2.0","id":4242,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + pattern(200<<10) + `"}}}`
	m = c.SendNext(long)
	wantError(t, m, -32600)
	if m.IDKey() != `4242` {
		t.Errorf("id = %s, want 4242: %s", m.ID, m)
	}

	// Just under the limit is served.
	under := pattern(3800)
	if got := toolText(t, c.Call("tools/call", echoParams(under))); got != under {
		t.Errorf("echo under the limit: got %d bytes", len(got))
	}
	if got := toolText(t, c.Call("tools/call", echoParams("next"))); got != "next" {
		t.Errorf("echo after over-long lines: got %q", got)
	}
}

// TestLineEndings: CRLF line endings are accepted (also on lines longer than
// the reader's buffer), blank and whitespace-only lines are ignored, and a
// final line without a newline is still served before EOF.
func TestLineEndings(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-06-18")

	if err := c.SendRaw([]byte(RequestLine("crlf-echo", "tools/call", echoParams("crlf")) + "\r\n")); err != nil {
		t.Fatal(err)
	}
	if got := toolText(t, c.Response(`"crlf-echo"`, callTimeout)); got != "crlf" {
		t.Errorf("CRLF echo: got %q", got)
	}

	// Line lengths (without CRLF) around the server reader's 64 KiB buffer,
	// so the '\r' lands just before, on and after the buffer boundary.
	for _, size := range []int{64<<10 - 2, 64<<10 - 1, 64 << 10, 200 << 10} {
		id := "crlf-big-" + itoa(size)
		n := size - len(RequestLine(id, "tools/call", echoParams("")))
		text := pattern(n)
		line := RequestLine(id, "tools/call", echoParams(text))
		if len(line) != size {
			t.Fatalf("line is %d bytes, want %d", len(line), size)
		}
		if err := c.SendRaw([]byte(line + "\r\n")); err != nil {
			t.Fatal(err)
		}
		m := c.Response(jsonString(id), callTimeout)
		if got, err := toolTextErr(m); err != nil || got != text {
			t.Errorf("CRLF echo, line of %d bytes: %v, got %d bytes", size, err, len(got))
		}
	}

	c.AssertSilent("")
	c.AssertSilent("   \t ")
	c.AssertSilent("\r")
	c.AssertSilent("\n\n\r\n")

	if err := c.SendRaw([]byte(RequestLine("last", "tools/call", echoParams("no newline")))); err != nil {
		t.Fatal(err)
	}
	c.CloseStdin()
	if got := toolText(t, c.Response(`"last"`, callTimeout)); got != "no newline" {
		t.Errorf("final line without newline: got %q", got)
	}
	if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
		t.Errorf("exit: code %d, exited %v", code, ok)
	}
}

// TestMaxLineBoundary: a line of exactly -max-line bytes (line ending
// excluded, whether LF or CRLF) is served; one byte more is refused. Run for
// a small limit and for one at the server reader's 64 KiB buffer size, where
// a CRLF line's '\r' is the last byte of a full buffer.
func TestMaxLineBoundary(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{4096, 64<<10 - 1} {
		t.Run(itoa(limit), func(t *testing.T) {
			t.Parallel()
			c := Start(t, Options{Args: []string{"-max-line", itoa(limit)}})
			c.Initialize("2025-06-18")
			for _, tc := range []struct {
				size int
				eol  string
				ok   bool
			}{
				{limit, "\n", true},
				{limit, "\r\n", true},
				{limit + 1, "\n", false},
				{limit + 1, "\r\n", false},
				{limit - 1, "\r\n", true},
			} {
				id := fmt.Sprintf("b-%d-%d", tc.size, len(tc.eol))
				text := pattern(tc.size - len(RequestLine(id, "tools/call", echoParams(""))))
				line := RequestLine(id, "tools/call", echoParams(text))
				if len(line) != tc.size {
					t.Fatalf("line is %d bytes, want %d", len(line), tc.size)
				}
				if err := c.SendRaw([]byte(line + tc.eol)); err != nil {
					t.Fatal(err)
				}
				m := c.Response(jsonString(id), callTimeout)
				if tc.ok {
					if got, err := toolTextErr(m); err != nil || got != text {
						t.Errorf("line of %d bytes + %q with -max-line %d: want it served, got %.300s", tc.size, tc.eol, limit, m)
					}
				} else if m.Error == nil || m.Error.Code != -32600 {
					t.Errorf("line of %d bytes + %q with -max-line %d: want -32600, got %.300s", tc.size, tc.eol, limit, m)
				}
			}
		})
	}
}
