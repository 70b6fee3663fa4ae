package handlers

import (
	"slices"
	"sync"
)

// Hold holds back the reports of changes (see Watch) until release is
// called; then each change made meanwhile, by any goroutine, is reported
// once: one ToolsChanged however many tools were added, replaced or
// removed, one ResourceUpdated per URI. A batch of edits, such as a
// gateway registering again the fifty tools of a backend that restarted,
// then costs the client one list_changed instead of fifty. Holds may
// overlap; the reports wait for the last release. Calling release more
// than once is harmless.
func (s *Server) Hold() (release func()) {
	w := &s.watch
	w.mu.Lock()
	w.holds++
	w.mu.Unlock()
	var once sync.Once
	return func() { once.Do(s.release) }
}

// hold keeps c for the end of the holds, unless an equal change waits
// already. The caller holds w.mu.
func (w *watchers) hold(c Change) {
	if !slices.Contains(w.held, c) {
		w.held = append(w.held, c)
	}
}

func (s *Server) release() {
	w := &s.watch
	w.mu.Lock()
	w.holds--
	var held []Change
	if w.holds == 0 {
		held, w.held = w.held, nil
	}
	w.mu.Unlock()
	for _, c := range held {
		s.changed(c)
	}
}
