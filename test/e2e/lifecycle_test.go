package e2e

import (
	"syscall"
	"testing"
	"time"
)

// TestLifecycle covers how the process ends: stdin EOF and SIGTERM/SIGINT,
// idle or with a request in flight (which is answered first), and a client
// that closed its end of stdout.
func TestLifecycle(t *testing.T) {
	t.Parallel()

	t.Run("stdin EOF idle", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		c.Initialize("2025-11-25")
		c.CloseStdin()
		code, ok := c.WaitExit(exitTimeout)
		if !ok {
			t.Fatal("no exit after stdin EOF")
		}
		if code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
		// The one explicit timing requirement: clients wait about 2 s.
		if d := c.SinceStdinClose(); d > 2*time.Second {
			t.Errorf("exited %v after stdin EOF, want within 2s", d)
		}
	})

	t.Run("stdin EOF before initialize", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		c.CloseStdin()
		if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
			t.Errorf("exit: code %d, exited %v", code, ok)
		}
		if d := c.SinceStdinClose(); d > 2*time.Second {
			t.Errorf("exited %v after stdin EOF, want within 2s", d)
		}
	})

	inFlight := func(t *testing.T, c *Client, ms int) string {
		t.Helper()
		c.Initialize("2025-06-18")
		key := c.Request("in-flight", "tools/call", sleepParams(ms))
		// Lines are taken in order: once the ping is answered, the sleep
		// has been read and dispatched.
		c.Call("ping", nil)
		if len(c.Responses(key)) != 0 {
			t.Fatalf("sleep answered too early: %v", c.Responses(key))
		}
		return key
	}
	checkDrained := func(t *testing.T, c *Client, key string) {
		t.Helper()
		code, ok := c.WaitExit(exitTimeout)
		if !ok {
			t.Fatal("no exit")
		}
		if code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
		if !c.WaitReader(exitTimeout) {
			t.Fatal("stdout not closed after exit")
		}
		rs := c.Responses(key)
		if len(rs) != 1 {
			t.Fatalf("in-flight request: %d responses before exit, want 1", len(rs))
		}
		if got, err := toolTextErr(rs[0]); err != nil || got != "slept" {
			t.Errorf("in-flight request answered %s, want \"slept\"", rs[0])
		}
	}

	t.Run("stdin EOF in flight", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		key := inFlight(t, c, 1000)
		c.CloseStdin()
		checkDrained(t, c, key)
	})

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String()+" idle", func(t *testing.T) {
			t.Parallel()
			c := Start(t, Options{})
			c.Initialize("2025-06-18")
			// Idle for a moment: a signal right after the first response
			// is TestSignalRightAfterFirstResponse's business.
			time.Sleep(200 * time.Millisecond)
			c.Signal(sig)
			if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
				t.Errorf("exit after %v: code %d, exited %v", sig, code, ok)
			}
		})
	}

	t.Run("SIGTERM in flight", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		key := inFlight(t, c, 1000)
		c.Signal(syscall.SIGTERM)
		checkDrained(t, c, key)
	})

	t.Run("SIGTERM in flight, requests after it refused", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		key := inFlight(t, c, 1000)
		c.Signal(syscall.SIGTERM)
		// A request sent while draining is answered (with an error) or not
		// read at all; it must not be left hanging without the process exiting.
		_ = c.SendRaw([]byte(RequestLine("late", "tools/call", echoParams("late")) + "\n"))
		checkDrained(t, c, key)
	})

	t.Run("drain timeout", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{Args: []string{"-drain-timeout", "300ms"}})
		key := inFlight(t, c, 30000)
		c.CloseStdin()
		code, ok := c.WaitExit(exitTimeout)
		if !ok || code != 0 {
			t.Fatalf("exit: code %d, exited %v", code, ok)
		}
		c.WaitReader(exitTimeout)
		rs := c.Responses(key)
		if len(rs) != 1 || rs[0].Error == nil {
			t.Errorf("request cut off by the drain timeout: got %v, want one error response", rs)
		}
	})

	t.Run("stdout closed by client", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{Paused: true})
		c.CloseStdoutReader()
		for i := 0; i < 20; i++ {
			// Writes fail once the server has gone: that is fine.
			if c.SendRaw([]byte(RequestLine(i+1, "tools/call", echoParams("into the void"))+"\n")) != nil {
				break
			}
		}
		code, ok := c.WaitExit(5 * time.Second)
		if !ok {
			t.Fatal("server still running 5s after the client closed stdout")
		}
		if code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
	})

	t.Run("stdout closed by client after handshake", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{Paused: true})
		// The handshake is written while nobody reads: it sits in the pipe.
		c.Send(RequestLine(1, "initialize", map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "e2e", "version": "1"},
		}))
		c.Notify("notifications/initialized", nil)
		time.Sleep(100 * time.Millisecond)
		c.CloseStdoutReader()
		for i := 0; i < 20; i++ {
			if c.SendRaw([]byte(RequestLine(i+2, "tools/call", echoParams("into the void"))+"\n")) != nil {
				break
			}
		}
		code, ok := c.WaitExit(5 * time.Second)
		if !ok {
			t.Fatal("server still running 5s after the client closed stdout")
		}
		if code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
	})
}

// TestSignalRightAfterFirstResponse: a server that has already answered a
// request must handle SIGTERM gracefully (exit 0), however soon the signal
// follows. Each attempt pings a fresh process and sends SIGTERM the moment
// the answer arrives.
func TestSignalRightAfterFirstResponse(t *testing.T) {
	t.Parallel()
	const attempts = 20
	killed := 0
	for i := 0; i < attempts; i++ {
		c := Start(t, Options{})
		if p := c.Call("ping", nil); p.Error != nil {
			t.Fatalf("ping: %s", p)
		}
		c.Signal(syscall.SIGTERM)
		code, ok := c.WaitExit(exitTimeout)
		if !ok {
			t.Fatalf("attempt %d: no exit after SIGTERM", i)
		}
		if code != 0 {
			killed++
			t.Logf("attempt %d: exit status %d (%v)", i, code, c.exitState)
		}
	}
	if killed > 0 {
		t.Errorf("BUG: %d of %d servers that had already answered a ping were killed by SIGTERM instead of exiting 0 "+
			"(signal.Notify runs only once the run.Group goroutines start, after the server is already serving)", killed, attempts)
	}
}
