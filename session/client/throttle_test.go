package client

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestThrottle: limit lines per window, then one throttling verdict, then
// drops; the next window starts fresh and reports how many were dropped.
func TestThrottle(t *testing.T) {
	now := time.Unix(0, 0)
	th := throttle{limit: 2, window: time.Second, now: func() time.Time { return now }}
	type step struct {
		v       verdict
		dropped int
	}
	var got []step
	for range 5 {
		v, d := th.admit()
		got = append(got, step{v, d})
	}
	now = now.Add(999 * time.Millisecond)
	v, d := th.admit()
	got = append(got, step{v, d})
	now = now.Add(time.Millisecond)
	v, d = th.admit()
	got = append(got, step{v, d})
	want := []step{{logLine, 0}, {logLine, 0}, {logThrottling, 0}, {dropLine, 0}, {dropLine, 0}, {dropLine, 0}, {logLine, 4}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestStderrTail: the ring keeps the last lines in order, cuts long lines,
// and skips blank ones.
func TestStderrTail(t *testing.T) {
	s := newStderrSink(3, 100, time.Hour, slog.New(slog.DiscardHandler))
	for _, l := range []string{"a", "", "b", "c", "d"} {
		s.add(l)
	}
	if got := s.tail(); len(got) != 3 || got[0] != "b" || got[2] != "d" {
		t.Errorf("tail %q", got)
	}
	long := make([]byte, 3*maxStderrLine)
	for i := range long {
		long[i] = 'x'
	}
	s.consume(strings.NewReader(string(long) + "\r\nlast"))
	got := s.tail()
	if len(got[1]) != maxStderrLine || got[2] != "last" {
		t.Errorf("long line kept as %d bytes, tail %q", len(got[1]), got[2])
	}
}
