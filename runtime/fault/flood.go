package fault

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// The session flood (Campaign.Flood): legacy initialize handshakes that are
// never used again nor deleted, as a crowd of clients that crashed, or an
// attacker, leaves them. A server bounds its sessions to bound its memory;
// the bound must not lock new clients out. What is checked:
//
//   - every handshake is served (200 and an Mcp-Session-Id) or refused as
//     busy (503 and -32000), nothing else;
//   - after them a new client is served at once: initialize, then a ping
//     in its session;
//   - every session in use before the flood (a campaign client's, its GET
//     stream open) still answers: a server that makes room may close idle
//     sessions only.

// floodWorkers send the flood's handshakes at once.
const floodWorkers = 8

// flood runs the session flood after the plan's requests are sent, while
// the hung calls are in flight.
func (h *hrun) flood(ctx context.Context) {
	n := h.cfg.Flood
	switch {
	case n == 0:
		return
	case h.meta != nil:
		h.note("session flood: skipped (2026-07-28 has no sessions)")
		return
	case !h.sessions:
		h.note("session flood: skipped (the server gave no Mcp-Session-Id)")
		return
	}
	h.rep.Faults["flood"] = n
	var inUse []*hclient
	for _, c := range h.clients {
		if c.getDone == nil {
			continue
		}
		select {
		case <-c.getDone: // no GET stream: the session may be idle
		default:
			inUse = append(inUse, c)
		}
	}

	fc := newHClient(-1)
	defer fc.tr.CloseIdleConnections()
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"flood","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcprt-fault-flood","version":"1"}}}`, h.cfg.ProtocolVersion)
	var (
		served, refused atomic.Int64
		mu              sync.Mutex
		sids            []string // to DELETE at the end, for a server not the campaign's
		wg              sync.WaitGroup
		next            atomic.Int64
	)
	for range floodWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n || ctx.Err() != nil {
					return
				}
				who := "flood initialize " + strconv.Itoa(i)
				rp := h.do(ctx, post{c: fc, body: body, what: who})
				var last *outMsg
				if len(rp.msgs) > 0 {
					last = rp.msgs[len(rp.msgs)-1]
				}
				sid := rp.hdr.Get("Mcp-Session-Id")
				switch {
				case rp.err == nil && rp.status == http.StatusOK && sid != "" && last != nil && last.kind == outResponse && !last.isError:
					served.Add(1)
					if h.tg == nil {
						mu.Lock()
						sids = append(sids, sid)
						mu.Unlock()
					}
				case busy(rp):
					refused.Add(1)
				case ctx.Err() != nil:
					return
				default:
					h.mu.Lock()
					h.violate("%s: %s, want 200 and a session, or 503 and -32000 (busy)%s", who, rp.describe(), rp.firstRaw())
					h.mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	h.rep.FloodServed, h.rep.FloodRefused = int(served.Load()), int(refused.Load())

	// A new client, served at once.
	nc := newHClient(-2)
	defer nc.tr.CloseIdleConnections()
	after := fmt.Sprintf("after %d abandoned handshakes", n)
	params := fmt.Appendf(nil, `{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcprt-fault","version":"1"}}`, h.cfg.ProtocolVersion)
	m, rp, err := h.control(ctx, nc, "fault-flood-init", "initialize", params)
	switch {
	case err != nil:
		h.floodViolation("a new client %s: %v", after, err)
	case m.isError:
		h.floodViolation("a new client %s was refused (%s): abandoned sessions lock new clients out", after, rp.describe())
	default:
		nc.session = rp.hdr.Get("Mcp-Session-Id")
		if m, _, err := h.control(ctx, nc, "fault-flood-ping", "ping", nil); err != nil || m.isError {
			h.floodViolation("a new client %s: its ping failed (%v)", after, err)
		} else {
			h.rep.FloodNewClient = true
		}
		if nc.session != "" {
			h.deleteSession(nc, "DELETE of the new client's session "+after, false)
		}
	}

	// The sessions in use are still there.
	for _, c := range inUse {
		id := "fault-flood-alive-" + strconv.Itoa(c.n)
		m, rp, err := h.control(ctx, c, id, "ping", nil)
		switch {
		case rp != nil && rp.status == http.StatusNotFound:
			h.floodViolation("client %d's session, in use (its GET stream open), was closed %s (404)", c.n, after)
		case err != nil || m.isError:
			h.floodViolation("client %d's session %s: its ping failed (%v)", c.n, after, err)
		}
	}

	// A server the campaign did not start is left as it was found.
	for _, sid := range sids {
		p := post{c: fc, method: http.MethodDelete, session: &sid, what: "DELETE of a flood session", quiet: true}
		h.do(ctx, p)
	}
}

func (h *hrun) floodViolation(format string, args ...any) {
	h.mu.Lock()
	h.violate("session flood: "+format, args...)
	h.mu.Unlock()
}
