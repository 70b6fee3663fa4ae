package streamhttp

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// quietConns knows the HTTP connections with no request in progress (new
// or idle, in net/http's terms), so that a shutdown closes them without
// cutting off a request already on its way. net/http's state lags the
// wire: a connection stays "new" or "idle" until its goroutine has read a
// whole request's headers, and Shutdown closes it as unused meanwhile, so
// a client whose request was sent gets no response at all.
type quietConns struct {
	mu sync.Mutex
	m  map[*countedConn]int64 // bytes read when it went quiet
}

// listen wraps ln so that each connection counts the bytes read from it.
func (q *quietConns) listen(ln net.Listener) net.Listener { return countingListener{ln} }

// track is the server's ConnState hook.
func (q *quietConns) track(c net.Conn, st http.ConnState) {
	cc, ok := c.(*countedConn)
	if !ok {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch st {
	case http.StateNew, http.StateIdle:
		if q.m == nil {
			q.m = map[*countedConn]int64{}
		}
		q.m[cc] = cc.read.Load()
	default:
		delete(q.m, cc)
	}
}

// settle closes the quiet connections on which nothing has arrived since
// they went quiet, and waits, up to d, for the others to start their
// request. What is left after d (a client that sent half a header) is
// Shutdown's to close.
func (q *quietConns) settle(d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		q.mu.Lock()
		for c, at := range q.m {
			if c.read.Load() == at && !hasPending(c.Conn) {
				c.Close()
				delete(q.m, c)
			}
		}
		left := len(q.m)
		q.mu.Unlock()
		if left == 0 || !time.Now().Before(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

type countingListener struct{ net.Listener }

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c}, nil
}

// countedConn counts what is read from it: net/http reads a request's
// first bytes into its buffer before it calls the connection active.
type countedConn struct {
	net.Conn
	read atomic.Int64
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read.Add(int64(n))
	return n, err
}
