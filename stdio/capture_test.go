//go:build unix

package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// These tests capture a scratch descriptor, not fd 1, so they can run inside
// the test binary; the fd 1 tests re-exec it (capture_stdout_test.go).

// captureHang only turns a hang into a failure (2 shared cores, -race).
const captureHang = 30 * time.Second

type delivery struct {
	data    string
	partial bool
}

// recorder collects deliveries and lets a test wait for a condition.
type recorder struct {
	mu   sync.Mutex
	cond *sync.Cond
	got  []delivery
	gate chan struct{} // when set, deliveries wait for it to close
}

func newRecorder() *recorder {
	r := &recorder{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) deliver(line []byte, partial bool) {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	r.got = append(r.got, delivery{string(line), partial})
	r.cond.Broadcast()
	r.mu.Unlock()
}

func (r *recorder) all() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// waitLen waits until at least n deliveries arrived; the timeout only turns
// a hang into a failure.
func (r *recorder) waitLen(t *testing.T, n int) []delivery {
	t.Helper()
	timer := time.AfterFunc(captureHang, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(captureHang)
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d deliveries, have %d: %+v", n, len(r.got), r.got)
		}
		r.cond.Wait()
	}
	return append([]delivery(nil), r.got...)
}

// scratch returns a file whose descriptor a test may capture; it starts
// out pointing at a fresh temporary file.
func scratch(t *testing.T) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "fd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func startCapture(t *testing.T, f *os.File, r *recorder, opts CaptureOptions) *Capture {
	t.Helper()
	c, err := captureFD(int(f.Fd()), r.deliver, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

func write(t *testing.T, f *os.File, s string) {
	t.Helper()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestCaptureIdleFlushesPartialLine(t *testing.T) {
	f, r := scratch(t), newRecorder()
	c := startCapture(t, f, r, CaptureOptions{Idle: 20 * time.Millisecond})

	write(t, f, "Password: ")
	// Arrives only through the idle flush: nothing else is written.
	got := r.waitLen(t, 1)
	if got[0] != (delivery{"Password: ", true}) {
		t.Fatalf("first delivery %+v, want the prompt, partial", got[0])
	}
	write(t, f, "ok\n")
	got = r.waitLen(t, 2)
	if got[1] != (delivery{"ok", false}) {
		t.Fatalf("second delivery %+v, want the rest of the line", got[1])
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := len(r.all()); n != 2 {
		t.Fatalf("%d deliveries, want 2", n)
	}
}

// TestCaptureIdleOnlyWhenThePipeIsEmpty: a line longer than one read is
// not cut as idle when its rest is already in the pipe. With a 1 ns Idle
// every deadline has passed by the next read, as one that passed while
// the reader was not scheduled on a loaded machine (where TestPrintFlood
// once found a line cut in two); the poller then reports a timeout
// without reading what waits.
func TestCaptureIdleOnlyWhenThePipeIsEmpty(t *testing.T) {
	f, r := scratch(t), newRecorder()
	c := startCapture(t, f, r, CaptureOptions{Idle: time.Nanosecond})
	line := strings.Repeat("x", 3*captureMinRead)
	for range 20 {
		write(t, f, line+"\n") // one write: the whole line is in the pipe before it is read
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for i, d := range r.all() {
		if d != (delivery{line, false}) {
			t.Fatalf("delivery %d is %d bytes (partial %v), want the whole %d-byte line", i, len(d.data), d.partial, len(line))
		}
	}
	if n := len(r.all()); n != 20 {
		t.Fatalf("%d deliveries, want 20", n)
	}
}

func TestCaptureChunksLongLines(t *testing.T) {
	f, r := scratch(t), newRecorder()
	const chunk = 64
	c := startCapture(t, f, r, CaptureOptions{Chunk: chunk, Idle: time.Hour})

	ascii := strings.Repeat("0123456789", 100) // 1000 bytes
	multi := strings.Repeat("é€😀x", 50)        // 1-4 byte runes, misaligned with chunk
	exact := strings.Repeat("e", chunk)        // exactly one chunk: not cut
	write(t, f, ascii+"\n"+multi+"\r\n"+exact+"\n")
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}

	var lines []string
	var cur strings.Builder
	for _, d := range r.all() {
		if len(d.data) > chunk {
			t.Errorf("delivery of %d bytes, chunk is %d", len(d.data), chunk)
		}
		if !utf8.ValidString(d.data) {
			t.Errorf("delivery %q splits a UTF-8 sequence", d.data)
		}
		cur.WriteString(d.data)
		if !d.partial {
			lines = append(lines, cur.String())
			cur.Reset()
		}
	}
	want := []string{ascii, multi, exact}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Fatalf("reassembled lines differ:\n got %q\nwant %q", lines, want)
	}
}

func TestCaptureStopDeliversEverything(t *testing.T) {
	f, r := scratch(t), newRecorder()
	// No idle flush and no chunking can help: only Stop's drain delivers.
	c := startCapture(t, f, r, CaptureOptions{Idle: time.Hour})
	var want []delivery
	var out bytes.Buffer
	for i := range 5000 {
		fmt.Fprintf(&out, "line %d\n", i)
		want = append(want, delivery{fmt.Sprintf("line %d", i), false})
	}
	out.WriteString("no newline at the end")
	want = append(want, delivery{"no newline at the end", false})
	write(t, f, out.String())
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	got := r.all()
	if len(got) != len(want) {
		t.Fatalf("%d deliveries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delivery %d is %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := c.stats(); s.Lines != int64(len(want)) || s.DroppedLines != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestCaptureKeepsEmptyLinesAndDropsCR(t *testing.T) {
	f, r := scratch(t), newRecorder()
	c := startCapture(t, f, r, CaptureOptions{})
	write(t, f, "a\r\n\n\r\nb\rc\n")
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	want := []delivery{{"a", false}, {"", false}, {"", false}, {"b\rc", false}}
	if got := r.all(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestCaptureStopRestoresDescriptor(t *testing.T) {
	f, r := scratch(t), newRecorder()
	write(t, f, "before\n")
	c := startCapture(t, f, r, CaptureOptions{})
	write(t, f, "captured\n")
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	write(t, f, "after\n")
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "before\nafter\n" {
		t.Fatalf("file holds %q; the capture must not leak into it, and Stop must point the descriptor back", data)
	}
	if got := r.all(); fmt.Sprint(got) != fmt.Sprint([]delivery{{"captured", false}}) {
		t.Fatalf("got %+v", got)
	}
	// Stop is idempotent and does not touch the descriptor again.
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestCaptureDropsRatherThanBlockWriters(t *testing.T) {
	f, r := scratch(t), newRecorder()
	r.gate = make(chan struct{}) // a callback stuck until released
	var mu sync.Mutex
	var reported int64
	c := startCapture(t, f, r, CaptureOptions{
		Queue:    4,
		MaxStall: 20 * time.Millisecond,
		Dropped: func(lines, _ int64) {
			mu.Lock()
			reported += lines
			mu.Unlock()
		},
	})

	// Far more than the pipe holds: without dropping, these writes would
	// block until the callback is released, which is after they finish.
	const lines = 40000
	line := strings.Repeat("x", 99) + "\n"
	wrote := make(chan error, 1)
	go func() {
		var err error
		for range lines {
			if _, err = f.WriteString(line); err != nil {
				break
			}
		}
		wrote <- err
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(captureHang):
		close(r.gate)
		t.Fatal("writer blocked by a stuck callback")
	}
	close(r.gate)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	s := c.stats()
	if s.DroppedLines == 0 {
		t.Fatalf("nothing dropped: %+v", s)
	}
	if s.Lines+s.DroppedLines != lines || s.Lines != int64(len(r.all())) {
		t.Fatalf("delivered %d + dropped %d != written %d", s.Lines, s.DroppedLines, lines)
	}
	if s.DroppedBytes != s.DroppedLines*99 {
		t.Fatalf("dropped bytes %d for %d lines", s.DroppedBytes, s.DroppedLines)
	}
	mu.Lock()
	defer mu.Unlock()
	if reported != s.DroppedLines {
		t.Fatalf("Dropped reported %d lines, stats say %d", reported, s.DroppedLines)
	}
}

func TestCaptureNeverDropsWhenToldToBlock(t *testing.T) {
	f, r := scratch(t), newRecorder()
	r.gate = make(chan struct{})
	c := startCapture(t, f, r, CaptureOptions{Queue: 1, MaxStall: -1})
	for i := range 2000 { // fits in the pipe: the writes complete
		write(t, f, fmt.Sprintf("%d\n", i))
	}
	time.Sleep(100 * time.Millisecond) // room for a wrong stall timer to fire
	close(r.gate)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if s := c.stats(); s.Lines != 2000 || s.DroppedLines != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestCaptureStopBoundedWhenPipeHeldElsewhere(t *testing.T) {
	f, r := scratch(t), newRecorder()
	c := startCapture(t, f, r, CaptureOptions{StopWait: 50 * time.Millisecond, Idle: time.Hour})
	// Stands for a child that inherited the descriptor and lives on.
	held, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(held)
	write(t, f, "from us\n")
	if _, err := syscall.Write(held, []byte("from the holder, unfinished")); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- c.Stop() }()
	select {
	case err := <-stopped:
		if !errors.Is(err, errCaptureHeld) {
			t.Fatalf("Stop: %v, want ErrCaptureHeld", err)
		}
	case <-time.After(captureHang):
		t.Fatal("Stop hangs while another process holds the pipe")
	}
	want := []delivery{{"from us", false}, {"from the holder, unfinished", false}}
	if got := r.all(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestRuneCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want int
	}{
		{"abcdef", 3, 3},
		{"ab€def", 3, 2}, // € is 3 bytes at 2..4
		{"ab€def", 4, 2},
		{"ab€def", 5, 5}, // cut after €
		{"a😀b", 2, 1},    // 4-byte rune at 1..4
		{"a😀b", 4, 1},
		{"\x80\x80\x80\x80\x80", 3, 3}, // invalid: cut where asked
		{"a\xe2\x82b", 3, 3},           // truncated sequence followed by ASCII
	} {
		if got := runeCut([]byte(tc.in), tc.n); got != tc.want {
			t.Errorf("runeCut(%q, %d) = %d, want %d", tc.in, tc.n, got, tc.want)
		}
	}
}
