package sessionactor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
	"unsafe"
)

const ctxHang = 5 * time.Second // only turns a hang into a failure

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestCallCtxCancel(t *testing.T) {
	t.Run("Done first", func(t *testing.T) {
		var cx callCtx
		d := cx.Done()
		if closed(d) || cx.Err() != nil {
			t.Fatalf("fresh context: closed %v, Err %v", closed(d), cx.Err())
		}
		if cx.Done() != d {
			t.Fatal("Done returned a different channel the second time")
		}
		cx.cancel()
		cx.cancel() // a second cancel does nothing
		if !closed(d) || !errors.Is(cx.Err(), context.Canceled) {
			t.Fatalf("after cancel: closed %v, Err %v", closed(d), cx.Err())
		}
	})
	t.Run("cancel first", func(t *testing.T) {
		var cx callCtx
		cx.cancel()
		if !closed(cx.Done()) || !errors.Is(cx.Err(), context.Canceled) {
			t.Fatalf("after cancel: closed %v, Err %v", closed(cx.Done()), cx.Err())
		}
		if !errors.Is(context.Cause(&cx), context.Canceled) {
			t.Fatalf("Cause = %v", context.Cause(&cx))
		}
	})
	t.Run("no deadline, no values", func(t *testing.T) {
		var cx callCtx
		if _, ok := cx.Deadline(); ok {
			t.Error("a deadline")
		}
		if v := cx.Value("k"); v != nil {
			t.Errorf("Value = %v", v)
		}
	})
}

// Contexts derived from a call's context follow it, and register with it
// rather than start a goroutine each; a child cancelled on its own leaves
// nothing registered behind.
func TestCallCtxChildren(t *testing.T) {
	var cx callCtx
	child, cancelChild := context.WithCancel(&cx)
	timed, cancelTimed := context.WithTimeout(&cx, time.Hour)
	defer cancelTimed()
	if n := registered(&cx); n != 2 {
		t.Fatalf("%d children registered, want 2", n)
	}
	cancelChild()
	if n := registered(&cx); n != 1 {
		t.Fatalf("%d children registered after one was cancelled, want 1", n)
	}
	if cx.Err() != nil {
		t.Fatal("cancelling a child cancelled the call's context")
	}
	cx.cancel()
	select {
	case <-timed.Done():
	case <-time.After(ctxHang):
		t.Fatal("child not cancelled with the call's context")
	}
	if !errors.Is(timed.Err(), context.Canceled) || !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("children's Err: %v, %v", timed.Err(), child.Err())
	}
	// A child made after the cancel is born cancelled.
	late, cancelLate := context.WithCancel(&cx)
	defer cancelLate()
	if !errors.Is(late.Err(), context.Canceled) {
		t.Fatalf("late child: %v", late.Err())
	}
}

func registered(cx *callCtx) int {
	cx.mu.Lock()
	defer cx.mu.Unlock()
	return len(cx.afters)
}

func TestCallCtxAfterFunc(t *testing.T) {
	var cx callCtx
	ran := make(chan string, 3)
	expect := func(want, when string) {
		t.Helper()
		select {
		case got := <-ran:
			if got != want {
				t.Fatalf("%s: %s ran, want %s", when, got, want)
			}
		case <-time.After(ctxHang):
			t.Fatalf("%s: %s not run", when, want)
		}
	}
	stopped := context.AfterFunc(&cx, func() { ran <- "stopped" })
	context.AfterFunc(&cx, func() { ran <- "runs" })
	if !stopped() {
		t.Fatal("stop before the cancel did not stop")
	}
	if stopped() {
		t.Fatal("a second stop reported stopping again")
	}
	// Stopping a later registration leaves the earlier one in place.
	context.AfterFunc(&cx, func() { ran <- "stopped too" })()
	cx.cancel()
	expect("runs", "after the cancel")
	context.AfterFunc(&cx, func() { ran <- "late" })
	expect("late", "registered after the cancel")
	select {
	case got := <-ran:
		t.Fatalf("%s ran too", got)
	case <-time.After(10 * time.Millisecond):
	}
}

// Under -race: Done, Err, children and cancel from many goroutines at once.
func TestCallCtxConcurrent(t *testing.T) {
	for range 100 {
		var cx callCtx
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch i % 4 {
				case 0:
					<-cx.Done()
				case 1:
					c, cancel := context.WithCancel(&cx)
					<-c.Done()
					cancel()
				case 2:
					for cx.Err() == nil {
						time.Sleep(time.Microsecond)
					}
				case 3:
					cx.cancel()
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(ctxHang):
			t.Fatal("a waiter was never released")
		}
	}
}

// stringIn reads what json.Unmarshal into a string reads, and gives the
// known value itself when the literal is one.
func TestStringIn(t *testing.T) {
	known := []string{"2026-07-28", "debug"}
	for raw, want := range map[string]struct {
		s  string
		ok bool
	}{
		`"2026-07-28"`:      {"2026-07-28", true},
		`"2026\u002d07-28"`: {"2026-07-28", true},
		`"2099-01-01"`:      {"2099-01-01", true},
		`null`:              {"", true},
		`7`:                 {"", false},
		`"unterminated`:     {"", false},
		`{"a":1}`:           {"", false},
	} {
		s, ok := stringIn([]byte(raw), known)
		if s != want.s || ok != want.ok {
			t.Errorf("stringIn(%s) = %q, %v; want %q, %v", raw, s, ok, want.s, want.ok)
		}
	}
	lit := []byte(`"debug"`)
	if s, _ := stringIn(lit, known); unsafe.StringData(s) != unsafe.StringData(known[1]) {
		t.Error("a known value was copied")
	}
}
