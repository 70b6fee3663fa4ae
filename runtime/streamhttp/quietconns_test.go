//go:build unix

package streamhttp

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestQuietConnsLetARequestIn: at shutdown, a connection the server calls
// new or idle but whose client has sent a request (unread, or read only
// into net/http's buffer) is left open for the request to be answered;
// one with nothing on it is closed.
func TestQuietConnsLetARequestIn(t *testing.T) {
	var q quietConns
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = q.listen(ln)
	defer ln.Close()
	dial := func(st http.ConnState) (client, server net.Conn) {
		t.Helper()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server, err = ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close(); server.Close() })
		q.track(server, st)
		return client, server
	}
	const req = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
	unreadC, unread := dial(http.StateNew) // sent, not read yet
	buffered, bufferedS := dial(http.StateIdle)
	unusedC, unused := dial(http.StateNew)
	idleC, idle := dial(http.StateIdle)
	for _, c := range []net.Conn{unreadC, buffered} {
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
	}
	// The idle connection's next request read into the server's buffer,
	// as net/http's Peek does before it calls the connection active.
	if _, err := io.ReadFull(bufferedS, make([]byte, len(req))); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !hasPending(unread.(*countedConn).Conn); {
		if time.Now().After(deadline) {
			t.Fatal("the unread request never showed as pending")
		}
		time.Sleep(time.Millisecond)
	}
	if hasPending(unused.(*countedConn).Conn) || hasPending(idle.(*countedConn).Conn) {
		t.Fatal("a connection nothing was written on shows as pending")
	}
	q.settle(20 * time.Millisecond)

	buf := make([]byte, len(req))
	unread.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(unread, buf); err != nil || string(buf) != req {
		t.Errorf("the connection with an unread request: read %q, %v; want the request", buf, err)
	}
	if _, err := io.WriteString(bufferedS, "answer"); err != nil {
		t.Errorf("the connection with a buffered request: %v", err)
	}
	buffered.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(buffered, buf[:6]); err != nil || string(buf[:6]) != "answer" {
		t.Errorf("the connection with a buffered request: its client read %q, %v; want the answer", buf[:6], err)
	}
	for _, c := range []struct {
		name           string
		client, server net.Conn
	}{{"unused", unusedC, unused}, {"idle", idleC, idle}} {
		if _, err := c.server.Read(buf); !errors.Is(err, net.ErrClosed) {
			t.Errorf("the %s connection: read %v, want it closed", c.name, err)
		}
		c.client.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.client.Read(buf); err != io.EOF {
			t.Errorf("the %s connection's client: read %v, want EOF", c.name, err)
		}
	}
	// A request that starts takes its connection out of the quiet ones.
	q.track(unread, http.StateActive)
	q.track(bufferedS, http.StateActive)
	if len(q.m) != 0 {
		t.Errorf("%d connections still quiet", len(q.m))
	}
}
