package streamhttp

import (
	"sync"
	"time"
)

// idleList orders the open legacy sessions that have no request in flight
// and no open stream, by when they last became so or last heard from their
// client: its front is the session idle the longest, the one closed when
// the cap on sessions is reached and a new client initializes. Every
// operation is O(1), so that a flood of abandoned handshakes costs the same
// per handshake at the cap as below it.
//
// A session's place in it (hsession.inIdle, prevIdle, nextIdle) changes
// only with both the session's mu and the list's mu held, so the session's
// mu alone is enough to read whether it is in the list. Lock order:
// Handler.mu, then hsession.mu, then idleList.mu.
type idleList struct {
	mu          sync.Mutex
	front, back *hsession
}

// pushBack puts hs at the back (moving it there if it is in the list);
// hs.mu is held.
func (l *idleList) pushBack(hs *hsession) {
	l.mu.Lock()
	if hs.inIdle {
		l.unlink(hs)
	}
	hs.inIdle = true
	hs.prevIdle, hs.nextIdle = l.back, nil
	if l.back != nil {
		l.back.nextIdle = hs
	} else {
		l.front = hs
	}
	l.back = hs
	l.mu.Unlock()
}

// remove takes hs out of the list if it is there; hs.mu is held.
func (l *idleList) remove(hs *hsession) {
	if !hs.inIdle {
		return
	}
	l.mu.Lock()
	l.unlink(hs)
	hs.inIdle = false
	l.mu.Unlock()
}

// unlink: l.mu is held.
func (l *idleList) unlink(hs *hsession) {
	if hs.prevIdle != nil {
		hs.prevIdle.nextIdle = hs.nextIdle
	} else {
		l.front = hs.nextIdle
	}
	if hs.nextIdle != nil {
		hs.nextIdle.prevIdle = hs.prevIdle
	} else {
		l.back = hs.prevIdle
	}
	hs.prevIdle, hs.nextIdle = nil, nil
}

// first is the session idle the longest, or nil. It may have left the list
// by the time its caller locks it.
func (l *idleList) first() *hsession {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.front
}

// logLimit lets one log line through per interval and counts the ones it
// held back, so that what a flood of requests provokes is said, not
// repeated a thousand times a second.
type logLimit struct {
	every time.Duration
	mu    sync.Mutex
	next  time.Time
	held  int
}

// allow reports whether a line may be logged now, and how many were held
// back since the last one.
func (l *logLimit) allow() (ok bool, held int) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.next) {
		l.held++
		return false, 0
	}
	l.next = now.Add(l.every)
	held, l.held = l.held, 0
	return true, held
}
