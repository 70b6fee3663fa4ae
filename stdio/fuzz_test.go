package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// fuzzChunks is a reader that hands out its data in the sizes chunks
// dictates (cycling, each byte plus one), then ends with err.
type fuzzChunks struct {
	data   []byte
	chunks []byte
	i      int
	err    error
}

func (r *fuzzChunks) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := len(r.data)
	if len(r.chunks) > 0 {
		n = 1 + int(r.chunks[r.i%len(r.chunks)])
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// fuzzExpect is what readLines must emit for input, worked out the obvious
// way: split on '\n', drop one '\r' before each '\n', skip blank lines, and
// report lines over maxLine by their size.
func fuzzExpect(input []byte, maxLine int, final string) []string {
	var out []string
	lines := bytes.Split(input, []byte("\n"))
	for i, l := range lines {
		last := i == len(lines)-1
		if last && len(l) == 0 {
			break // the input ended with '\n' (or was empty)
		}
		if !last {
			l = bytes.TrimSuffix(l, []byte("\r"))
		}
		switch {
		case len(l) > maxLine:
			out = append(out, fmt.Sprintf("too long: %d", len(l)))
		case len(bytes.Trim(l, " \t\r")) == 0:
		default:
			out = append(out, "line: "+string(l))
		}
	}
	return append(out, final)
}

// FuzzReadLines feeds arbitrary bytes, after padding (so lines and CRLFs
// straddle the 64 KiB buffer), in arbitrary chunks, under arbitrary caps.
// readLines must never panic and must emit exactly the lines the input
// holds: none with a '\n', sizes that add up, a head that is the line's
// start, and one final eof (or readError), or nothing after emit says stop.
func FuzzReadLines(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), uint16(0), []byte{1}, uint32(0), false, uint8(0))
	f.Add([]byte("\r\n{\"id\":1}\n"), uint16(32767), []byte{7, 0, 3}, uint32(0), false, uint8(0))
	f.Add([]byte("xyz\r"), uint16(0), []byte{}, uint32(3), true, uint8(0))
	f.Add([]byte("long line\nshort\n \t\r\n\n"), uint16(32768), []byte{255}, uint32(5), false, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, pad uint16, chunks []byte, capSeed uint32, fail bool, stopAfter uint8) {
		// Up to 128 KiB of padding, in lines of 'x's so that a line can
		// cross the buffer, then the fuzzer's bytes.
		input := bytes.Repeat([]byte("x"), 2*int(pad))
		input = append(input, data...)
		maxLine := 0
		if capSeed != 0 {
			maxLine = int(capSeed % (200 << 10))
		}
		effMax := maxLine
		if effMax <= 0 {
			effMax = DefaultMaxLine
		}
		final := "eof"
		var rerr error = io.EOF
		if fail {
			rerr, final = errors.New("boom"), "error: boom"
		}
		want := fuzzExpect(input, effMax, final)

		var got []string
		calls := 0
		readLines(&fuzzChunks{data: input, chunks: chunks, err: rerr}, maxLine, func(msg any) bool {
			calls++
			if stopAfter != 0 && calls > int(stopAfter) {
				t.Fatalf("emit called again (%T) after it returned false", msg)
			}
			switch m := msg.(type) {
			case *lineMsg:
				if bytes.IndexByte(m.Data, '\n') >= 0 {
					t.Fatalf("line holds a newline: %q", m.Data)
				}
				got = append(got, "line: "+string(m.Data))
			case *LineTooLong:
				if m.Max != effMax || m.Size <= m.Max {
					t.Fatalf("LineTooLong{Size %d, Max %d} under the cap %d", m.Size, m.Max, effMax)
				}
				if len(m.Head) > headKeep || len(m.Head) < min(headKeep, m.Max) {
					t.Fatalf("head of %d bytes for a line of %d over a cap of %d", len(m.Head), m.Size, m.Max)
				}
				if !bytes.Contains(input, m.Head) {
					t.Fatalf("head %.40q is not from the input", m.Head)
				}
				got = append(got, fmt.Sprintf("too long: %d", m.Size))
			case *eof:
				got = append(got, "eof")
			case *readError:
				got = append(got, "error: "+m.Err.Error())
			default:
				t.Fatalf("unexpected message %T", msg)
			}
			return stopAfter == 0 || calls < int(stopAfter)
		})
		if stopAfter != 0 && len(want) > int(stopAfter) {
			want = want[:stopAfter]
		}
		if len(got) != len(want) {
			t.Fatalf("got %d messages, want %d\ngot  %.300q\nwant %.300q", len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("message %d: got %.200q, want %.200q", i, got[i], want[i])
			}
		}
	})
}
