//go:build unix

package streamhttp

import (
	"net"
	"syscall"
)

// hasPending reports whether bytes wait unread on c, by peeking at its
// socket. Go's sockets are non-blocking, so the peek never waits. A
// connection it cannot look into counts as pending: closing it might cut
// off a request.
func hasPending(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	pending := true
	var b [1]byte
	err = raw.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		// EAGAIN: nothing yet. 0 bytes: the client closed it.
		pending = err == nil && n > 0
	})
	return err != nil || pending
}
