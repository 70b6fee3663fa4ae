//go:build !unix

package streamhttp

import "net"

// hasPending cannot peek at a socket here: only what net/http has read
// shows a request on its way (quietConns' count), as with Shutdown alone.
func hasPending(net.Conn) bool { return false }
