package runtime

import (
	"bytes"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"
)

// TestLogStackReadable: a record with a stack, in text, is its line (the
// stack attribute pointing below) then one frame a line, indented; the
// logger's own attributes and groups are kept; JSON keeps the stack as
// one string.
func TestLogStackReadable(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(newLogHandler(&buf, logOptions{})).With("component", "test").WithGroup("g")
	l.Info("plain", "n", 1)
	l.Error("child exited", "reason", "panic: boom", stackKey, string(debug.Stack()))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("log:\n%s", buf.String())
	}
	if !strings.Contains(lines[0], "msg=plain component=test g.n=1") {
		t.Errorf("plain record: %s", lines[0])
	}
	if !strings.Contains(lines[1], `msg="child exited" component=test g.reason="panic: boom" g.stack="(below, one frame a line)"`) {
		t.Errorf("record with a stack: %s", lines[1])
	}
	if lines[2] != "    goroutine "+strings.Fields(lines[2])[1]+" [running]:" {
		t.Errorf("stack's first line: %q", lines[2])
	}
	found := false
	for _, l := range lines[3:] {
		if !strings.HasPrefix(l, "    ") || strings.Contains(l, "\\n") || strings.Contains(l, "+0x") {
			t.Errorf("stack line %q", l)
		}
		found = found || strings.Contains(l, "runtime.TestLogStackReadable at ") && strings.Contains(l, "logstack_test.go:")
	}
	if !found {
		t.Errorf("no line for this test's frame:\n%s", buf.String())
	}

	buf.Reset()
	slog.New(newLogHandler(&buf, logOptions{JSON: true})).Error("x", stackKey, "goroutine 1 [running]:\nmain.main()\n\t/x.go:1 +0x1\n")
	if strings.Count(buf.String(), "\n") != 1 || !strings.Contains(buf.String(), `"stack":"goroutine 1`) {
		t.Errorf("JSON: %s", buf.String())
	}
}

func TestStackLines(t *testing.T) {
	stack := "goroutine 7 [running]:\nmain.(*T).m(0xc000, {0x1, 0x2})\n\t/src/t.go:12 +0x25\npanic({0xa0cd00?, 0xb3ee80?})\n\t/go/panic.go:860 +0x13a\ncreated by main.start in goroutine 1\n\t/src/s.go:3 +0x9\n"
	want := []string{"goroutine 7 [running]:", "main.(*T).m at /src/t.go:12", "panic at /go/panic.go:860", "created by main.start in goroutine 1 at /src/s.go:3"}
	got := stackLines(stack)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
