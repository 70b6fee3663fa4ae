package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// collect runs readLines over r and renders every emitted message as a
// short string, so a whole run compares as one slice.
func collect(r io.Reader, maxLine int) []string {
	var got []string
	readLines(r, maxLine, func(msg any) bool {
		got = append(got, render(msg))
		return true
	})
	return got
}

func render(msg any) string {
	switch m := msg.(type) {
	case *lineMsg:
		return "line:" + string(m.Data)
	case *LineTooLong:
		return fmt.Sprintf("toolong:%d/%d:%q", m.Size, m.Max, m.Head)
	case *eof:
		return "eof"
	case *readError:
		return "err:" + m.Err.Error()
	}
	return fmt.Sprintf("unexpected %T", msg)
}

var errBoom = errors.New("boom")

// errAfter returns data, then err (not eof).
func errAfter(data string, err error) io.Reader {
	return io.MultiReader(strings.NewReader(data), iotest.ErrReader(err))
}

func TestReadLines(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		maxLine int
		want    []string
	}{
		{"empty", "", 0, []string{"eof"}},
		{"one line", "{}\n", 0, []string{"line:{}", "eof"}},
		{"several lines", "a\nb\nc\n", 0, []string{"line:a", "line:b", "line:c", "eof"}},
		{"crlf", "a\r\nb\r\n", 0, []string{"line:a", "line:b", "eof"}},
		{"only one trailing cr dropped", "a\r\r\n", 0, []string{"line:a\r", "eof"}},
		{"cr inside a line kept", "a\rb\n", 0, []string{"line:a\rb", "eof"}},
		{"blank lines skipped", "\n\n a \n\n", 0, []string{"line: a ", "eof"}},
		{"whitespace-only lines skipped", " \t \n\r\n\t\r\n \nx\n", 0, []string{"line:x", "eof"}},
		{"last line without newline", "a\nb", 0, []string{"line:a", "line:b", "eof"}},
		{"last blank line without newline", "a\n  ", 0, []string{"line:a", "eof"}},
		{"at the cap", "12345\n", 5, []string{"line:12345", "eof"}},
		{"at the cap with crlf", "12345\r\n", 5, []string{"line:12345", "eof"}},
		{"over the cap", "123456\nok\n", 5, []string{`toolong:6/5:"123456"`, "line:ok", "eof"}},
		{"over the cap with crlf", "123456\r\nok\n", 5, []string{`toolong:6/5:"123456"`, "line:ok", "eof"}},
		{"over the cap at eof", "ok\n123456", 5, []string{"line:ok", `toolong:6/5:"123456"`, "eof"}},
		{"read error", "", 0, []string{"err:boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]func(io.Reader) io.Reader{
				"plain":   func(r io.Reader) io.Reader { return r },
				"onebyte": iotest.OneByteReader,
				"half":    iotest.HalfReader,
				"dataerr": iotest.DataErrReader,
			}
			for rname, wrap := range readers {
				var r io.Reader = strings.NewReader(tt.in)
				if tt.name == "read error" {
					r = iotest.ErrReader(errBoom)
				}
				got := collect(wrap(r), tt.maxLine)
				if !slicesEqual(got, tt.want) {
					t.Errorf("%s: got %q\nwant %q", rname, got, tt.want)
				}
			}
		})
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadLinesReadErrorAfterData: lines before the failure are delivered,
// then readError, and nothing after it.
func TestReadLinesReadErrorAfterData(t *testing.T) {
	got := collect(errAfter("a\nb\n", errBoom), 0)
	want := []string{"line:a", "line:b", "err:boom"}
	if !slicesEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestReadLinesLongLines: lines far beyond bufio's 64 KiB buffer arrive
// whole, whatever the read sizes.
func TestReadLinesLongLines(t *testing.T) {
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	mid := bytes.Repeat([]byte("x"), 64<<10) // exactly one buffer
	var in bytes.Buffer
	in.Write(big)
	in.WriteString("\n")
	in.WriteString("small\n")
	in.Write(mid)
	in.WriteString("\r\n")
	in.Write(mid[:64<<10-1]) // buffer minus one, then "\r\n": the '\r' ends the buffer
	in.WriteString("\r\n")
	in.Write(big)
	wants := [][]byte{big, []byte("small"), mid, mid[:64<<10-1], big}
	for rname, wrap := range map[string]func(io.Reader) io.Reader{
		"plain": func(r io.Reader) io.Reader { return r },
		"half":  iotest.HalfReader,
	} {
		var got [][]byte
		sawEOF := false
		readLines(wrap(bytes.NewReader(in.Bytes())), 4<<20, func(msg any) bool {
			switch m := msg.(type) {
			case *lineMsg:
				got = append(got, m.Data)
			case *eof:
				sawEOF = true
			default:
				t.Errorf("%s: unexpected %s", rname, render(msg))
			}
			return true
		})
		if !sawEOF || len(got) != len(wants) {
			t.Fatalf("%s: got %d lines (eof %v), want %d", rname, len(got), sawEOF, len(wants))
		}
		for i := range wants {
			if !bytes.Equal(got[i], wants[i]) {
				t.Errorf("%s: line %d: got %d bytes, want %d (first diff matters)", rname, i, len(got[i]), len(wants[i]))
			}
		}
	}
}

// TestReadLinesLongLineSizes: long lines of changing sizes (larger than the
// last, smaller, the same plus a little, at the cap) arrive whole, and none
// is handed over in a buffer more than twice its size, whatever size the
// reader expected from the line before.
func TestReadLinesLongLineSizes(t *testing.T) {
	const maxLine = 3<<20 + 5
	sizes := []int{200 << 10, 1 << 20, 70 << 10, 3 << 20, 64 << 10, 64<<10 + 1, 1 << 20, 1<<20 + 10, 100, maxLine, maxLine + 1, 1 << 20}
	var in bytes.Buffer
	var wants []string
	for i, n := range sizes {
		line := bytes.Repeat([]byte{'a' + byte(i)}, n)
		line[0], line[n-1] = '<', '>'
		in.Write(line)
		if i%2 == 0 {
			in.WriteString("\r\n")
		} else {
			in.WriteString("\n")
		}
		if n > maxLine {
			wants = append(wants, fmt.Sprintf("toolong:%d", n))
		} else {
			wants = append(wants, fmt.Sprintf("line:%d:%c", n, 'a'+byte(i)))
		}
	}
	wants = append(wants, "eof")
	for rname, wrap := range map[string]func(io.Reader) io.Reader{
		"plain": func(r io.Reader) io.Reader { return r },
		"half":  iotest.HalfReader,
	} {
		var got []string
		readLines(wrap(bytes.NewReader(in.Bytes())), maxLine, func(msg any) bool {
			switch m := msg.(type) {
			case *lineMsg:
				d := m.Data
				if d[0] != '<' || d[len(d)-1] != '>' || bytes.Count(d, d[1:2]) != len(d)-2 {
					t.Errorf("%s: line of %d bytes is not what was sent", rname, len(d))
				}
				if len(d) > 64<<10 && cap(d) > 2*len(d) {
					t.Errorf("%s: line of %d bytes held in a buffer of %d", rname, len(d), cap(d))
				}
				got = append(got, fmt.Sprintf("line:%d:%c", len(d), d[1]))
			case *LineTooLong:
				got = append(got, fmt.Sprintf("toolong:%d", m.Size))
			default:
				got = append(got, render(msg))
			}
			return true
		})
		if !slicesEqual(got, wants) {
			t.Errorf("%s: got %q, want %q", rname, got, wants)
		}
	}
}

// TestReadLinesOverCap: a line over the cap is discarded to its newline and
// reported with its size and first 4096 bytes; the next line still arrives.
func TestReadLinesOverCap(t *testing.T) {
	const maxLine = 100 << 10
	long := make([]byte, 300<<10) // spans several buffers
	for i := range long {
		long[i] = '0' + byte(i%10)
	}
	for _, tc := range []struct {
		name string
		line []byte
	}{
		{"several buffers", long},
		{"one byte over, across a buffer", long[:maxLine+1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(append(append([]byte(nil), tc.line...), "\r\n"...), `{"id":1}`+"\n"...)
			var got []any
			readLines(iotest.HalfReader(bytes.NewReader(in)), maxLine, func(msg any) bool {
				got = append(got, msg)
				return true
			})
			if len(got) != 3 {
				t.Fatalf("got %d messages, want 3", len(got))
			}
			tl, ok := got[0].(*LineTooLong)
			if !ok {
				t.Fatalf("first message %s, want LineTooLong", render(got[0]))
			}
			if tl.Size != len(tc.line) || tl.Max != maxLine {
				t.Errorf("Size/Max = %d/%d, want %d/%d", tl.Size, tl.Max, len(tc.line), maxLine)
			}
			if !bytes.Equal(tl.Head, tc.line[:4096]) {
				t.Errorf("Head: got %d bytes %.20q..., want the line's first 4096", len(tl.Head), tl.Head)
			}
			if l, ok := got[1].(*lineMsg); !ok || string(l.Data) != `{"id":1}` {
				t.Errorf("second message %s, want the next line", render(got[1]))
			}
			if _, ok := got[2].(*eof); !ok {
				t.Errorf("third message %s, want eof", render(got[2]))
			}
		})
	}
}

// TestReadLinesOverCapShortHead: the head of a line shorter than 4096
// bytes is the whole line.
func TestReadLinesOverCapShortHead(t *testing.T) {
	got := collect(strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"x"}`+"\n"), 10)
	want := []string{`toolong:37/10:"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\"}"`, "eof"}
	if !slicesEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestReadLinesOwnsData: each lineMsg's Data is the receiver's: later reads
// do not overwrite it.
func TestReadLinesOwnsData(t *testing.T) {
	var lines []*lineMsg
	readLines(strings.NewReader("aaaa\nbbbb\ncccc\n"), 0, func(msg any) bool {
		if l, ok := msg.(*lineMsg); ok {
			lines = append(lines, l)
		}
		return true
	})
	for i, want := range []string{"aaaa", "bbbb", "cccc"} {
		if string(lines[i].Data) != want {
			t.Errorf("line %d = %q, want %q", i, lines[i].Data, want)
		}
	}
}

// TestReadLinesStop: emit returning false stops reading at once, with no
// final message and no further read.
func TestReadLinesStop(t *testing.T) {
	r := &countingReader{r: strings.NewReader("a\nb\nc\n")}
	var got []string
	readLines(iotest.OneByteReader(r), 0, func(msg any) bool {
		got = append(got, render(msg))
		return false
	})
	if !slicesEqual(got, []string{"line:a"}) {
		t.Fatalf("got %q, want just the first line", got)
	}
	if r.n != 2 {
		t.Errorf("read %d bytes, want 2 (no read after emit said stop)", r.n)
	}
	// Stop on a LineTooLong too.
	got = nil
	readLines(strings.NewReader("123456\nok\n"), 5, func(msg any) bool {
		got = append(got, render(msg))
		return false
	})
	if len(got) != 1 || !strings.HasPrefix(got[0], "toolong:") {
		t.Fatalf("got %q, want one LineTooLong", got)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestReadLinesCRAtBufferEnd: when the '\r' of "\r\n" is the last byte of
// bufio's 64 KiB buffer, it is still part of the line ending: a line of
// exactly the cap is delivered, and a line over it reports its Size without
// the '\r'.
func TestReadLinesCRAtBufferEnd(t *testing.T) {
	const buf = 64 << 10
	line := bytes.Repeat([]byte("y"), buf-1) // line + '\r' fill the buffer exactly
	in := append(append([]byte(nil), line...), "\r\nnext\n"...)

	var got []string
	readLines(bytes.NewReader(in), len(line), func(msg any) bool {
		if l, ok := msg.(*lineMsg); ok && bytes.Equal(l.Data, line) {
			got = append(got, "line:<the long line>")
		} else {
			got = append(got, render(msg)[:min(len(render(msg)), 40)])
		}
		return true
	})
	if want := []string{"line:<the long line>", "line:next", "eof"}; !slicesEqual(got, want) {
		t.Errorf("cap = line length: got %q, want %q", got, want)
	}

	got = nil
	readLines(bytes.NewReader(in), 1000, func(msg any) bool {
		if tl, ok := msg.(*LineTooLong); ok {
			got = append(got, fmt.Sprintf("toolong:%d", tl.Size))
		} else {
			got = append(got, render(msg))
		}
		return true
	})
	if want := []string{fmt.Sprintf("toolong:%d", len(line)), "line:next", "eof"}; !slicesEqual(got, want) {
		t.Errorf("over the cap: got %q, want %q", got, want)
	}
}

// BenchmarkReadLinesAlternating: long lines whose sizes keep changing, so
// that the size the reader expects is wrong every time: 1 MiB after
// 100 KiB (grown from the hint) and 100 KiB after 1 MiB (copied out of a
// buffer sized for 1 MiB). One op is one pair of lines. BenchmarkReadLines
// (bench_test.go) has lines of one size, the steady case.
func BenchmarkReadLinesAlternating(b *testing.B) {
	var pair []byte
	for _, n := range []int{1 << 20, 100 << 10} {
		pair = append(append(pair, bytes.Repeat([]byte("a"), n)...), '\n')
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(pair)))
	r := &repeatReader{data: pair, n: b.N}
	lines := 0
	b.ResetTimer()
	readLines(r, 0, func(msg any) bool {
		if _, ok := msg.(*lineMsg); ok {
			lines++
		}
		return true
	})
	b.StopTimer()
	if lines != 2*b.N {
		b.Fatalf("%d lines, want %d", lines, 2*b.N)
	}
}

// repeatReader reads data n times, at most 64 KiB per Read, as a pipe does.
type repeatReader struct {
	data []byte
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	c := copy(p[:min(len(p), 64<<10)], r.data[r.off:])
	if r.off += c; r.off == len(r.data) {
		r.off, r.n = 0, r.n-1
	}
	return c, nil
}

// TestScanLinesErrors: ScanLines returns nil at eof and when told to stop,
// and the read error otherwise, after the lines before it.
func TestScanLinesErrors(t *testing.T) {
	var got []string
	onLine := func(b []byte) bool { got = append(got, string(b)); return true }
	onTooLong := func(l LineTooLong) bool { got = append(got, "toolong"); return true }
	if err := ScanLines(strings.NewReader("a\r\n123456\nb"), 5, onLine, onTooLong); err != nil {
		t.Fatalf("at eof: %v, want nil", err)
	}
	if !slicesEqual(got, []string{"a", "toolong", "b"}) {
		t.Fatalf("got %q", got)
	}
	got = nil
	if err := ScanLines(errAfter("a\n", errBoom), 0, onLine, onTooLong); !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want %v", err, errBoom)
	}
	if err := ScanLines(strings.NewReader("a\nb\n"), 0, func([]byte) bool { return false }, onTooLong); err != nil {
		t.Fatalf("stopped: %v, want nil", err)
	}
}
