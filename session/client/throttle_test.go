package client

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestThrottle: limit lines per window, then one throttling verdict, then
// drops; the next window starts fresh and reports how many were dropped.
func TestThrottle(t *testing.T) {
	now := time.Unix(0, 0)
	th := Throttle{Limit: 2, Window: time.Second, Now: func() time.Time { return now }}
	type step struct {
		v       Verdict
		dropped int
	}
	var got []step
	for range 5 {
		v, d := th.Admit()
		got = append(got, step{v, d})
	}
	now = now.Add(999 * time.Millisecond)
	v, d := th.Admit()
	got = append(got, step{v, d})
	now = now.Add(time.Millisecond)
	v, d = th.Admit()
	got = append(got, step{v, d})
	want := []step{{PassLine, 0}, {PassLine, 0}, {SayThrottled, 0}, {DropLine, 0}, {DropLine, 0}, {DropLine, 0}, {PassLine, 4}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestStderrHeadAndTail: the sink keeps the first and the last lines in
// order, says how many were left out between them, cuts long lines (never
// inside a UTF-8 sequence) and skips blank ones.
func TestStderrHeadAndTail(t *testing.T) {
	s := newStderrSink(2, 100, time.Hour, slog.New(slog.DiscardHandler), nil)
	s.add("first")
	if got := s.lines(); !slices.Equal(got, []string{"first"}) {
		t.Errorf("one line: %q", got)
	}
	for _, l := range []string{"", "second", "third", "fourth"} {
		s.add(l)
	}
	// Four lines fit in a head of two and a tail of two: nothing omitted.
	if got, want := s.lines(), []string{"first", "second", "third", "fourth"}; !slices.Equal(got, want) {
		t.Errorf("four lines: %q, want %q", got, want)
	}
	s.add("fifth")
	if got, want := s.lines(), []string{"first", "second", "… 1 line omitted …", "fourth", "fifth"}; !slices.Equal(got, want) {
		t.Errorf("five lines: %q, want %q", got, want)
	}
	for i := range 100 {
		s.add(fmt.Sprint("usage line ", i))
	}
	if got, want := s.lines(), []string{"first", "second", "… 101 lines omitted …", "usage line 98", "usage line 99"}; !slices.Equal(got, want) {
		t.Errorf("105 lines: %q, want %q", got, want)
	}

	s = newStderrSink(3, 100, time.Hour, slog.New(slog.DiscardHandler), nil)
	long := strings.Repeat("x", maxStderrLine-1) + "é" + strings.Repeat("y", maxStderrLine)
	s.consume(strings.NewReader("a\n\n" + long + "\r\nlast"))
	got := s.lines()
	if len(got) != 3 || got[0] != "a" || got[1] != strings.Repeat("x", maxStderrLine-1) || got[2] != "last" {
		t.Errorf("long line: %d lines, the long one kept as %d bytes", len(got), len(got[1]))
	}
}

// TestStderrPassedOn: with OnStderr every line reaches it in order, as
// written, none throttled and none logged; the ends are still kept.
func TestStderrPassedOn(t *testing.T) {
	h := &countingHandler{}
	var passed []string
	s := newStderrSink(1, 2, time.Hour, slog.New(h), func(l string) { passed = append(passed, l) })
	var in strings.Builder
	var want []string
	for i := range 50 {
		l := fmt.Sprintf(`time=x level=INFO msg="line %d" path=\\srv`, i)
		in.WriteString(l + "\n")
		want = append(want, l)
	}
	long := strings.Repeat("z", 10*maxStderrLine)
	in.WriteString(long + "\n")
	want = append(want, long)
	s.consume(strings.NewReader(in.String()))
	if !slices.Equal(passed, want) {
		t.Errorf("passed on %d lines, want %d in order", len(passed), len(want))
	}
	if h.n.Load() != 0 {
		t.Errorf("%d records logged; OnStderr replaces the log", h.n.Load())
	}
	if got := s.lines(); len(got) != 3 || got[0] != want[0] || got[1] != "… 49 lines omitted …" || got[2] != long[:maxStderrLine] {
		t.Errorf("kept %q", got)
	}
}

type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(context.Context, slog.Record) error {
	h.n.Add(1)
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }
