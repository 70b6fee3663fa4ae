package handlers

import (
	"context"
	"net"
	"net/netip"
)

// What a transport tells handlers of the connection a request came on,
// beside its caller (WithCaller): the tasks it makes are listed by the
// session and counted against the address when there is no caller.

type sessionKey struct{}

// WithSession returns ctx carrying the id of the session a request came
// in (a legacy Streamable HTTP session), which scopes the tasks it
// makes: see tasks.Requestor.Session.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// sessionFrom returns the session id WithSession put in ctx, or "" (stdio,
// whose process is its one session, and 2026-07-28 requests, which have
// no session).
func sessionFrom(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

type remoteKey struct{}

// WithRemote returns ctx carrying the remote address of the connection a
// request came on (net/http's Request.RemoteAddr, "host:port"), for
// the tasks' budgets when there is no caller.
func WithRemote(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, remoteKey{}, addr)
}

// remoteFrom returns the address WithRemote put in ctx, or "".
func remoteFrom(ctx context.Context) string {
	a, _ := ctx.Value(remoteKey{}).(string)
	return a
}

// clientOfAddr is the tasks.Requestor.Client of a connection from addr
// ("host:port", or a bare host) without a caller: "addr:" and its IP, an
// IPv6 one by its /64 prefix, which one host is commonly given whole, so
// that a client cannot multiply its budget by moving within its own
// prefix. Behind a reverse proxy every client has the proxy's address and
// shares one budget: authenticate them (the caller is then the client).
// "" for an empty addr.
func clientOfAddr(addr string) string {
	if addr == "" {
		return ""
	}
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return "addr:" + host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return "addr:" + p.String()
	}
	return "addr:" + ip.String()
}
