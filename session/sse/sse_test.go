package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestReader: the event-stream format as servers write it: any line
// ending, comments, multi-line data, other event types, retry, and events
// cut off by the end of the stream.
func TestReader(t *testing.T) {
	stream := ": keep-alive\r\n\r\n" +
		"id: 1\ndata:\n\n" + // a priming event: no data
		"event: message\r\ndata: {\"a\":1}\r\n\r\n" +
		"data: {\"b\":\rdata: 2}\r\r" + // lone CRs; two data lines joined by LF
		"event: other\ndata: {\"skip\":1}\n\n" +
		"retry: 2500\ndata:{\"c\":3}\n\n" +
		"data: {\"cut\":1}\n" // no blank line: dropped
	for name, r := range map[string]io.Reader{
		"whole":      strings.NewReader(stream),
		"byte-wise":  iotest.OneByteReader(strings.NewReader(stream)),
		"half-reads": iotest.HalfReader(strings.NewReader(stream)),
	} {
		t.Run(name, func(t *testing.T) {
			sr := NewReader(r, 1<<10)
			var got []string
			for {
				data, err := sr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(data))
			}
			want := []string{`{"a":1}`, "{\"b\":\n2}", `{"c":3}`}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("events %q, want %q", got, want)
			}
			if sr.Retry != 2500*time.Millisecond || sr.LastID != "1" {
				t.Errorf("retry %v, last id %q", sr.Retry, sr.LastID)
			}
		})
	}
	sr := NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50)
	if _, err := sr.Next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("an over-long event: %v", err)
	}
	sr = NewReader(strings.NewReader(strings.Repeat("data: 0123456789\n", 10)+"\n"), 50)
	if _, err := sr.Next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("an event over-long by its lines: %v", err)
	}
}

// TestStrict: what a checker of servers refuses, and what it still reads.
func TestStrict(t *testing.T) {
	for _, tc := range []struct {
		in     string
		events []string
		err    string
	}{
		{"event: message\ndata: {}\n\n: keep-alive\n\n", []string{"{}"}, ""},
		{"data: a\r\ndata: b\r\n\r\n", []string{"a\nb"}, ""},
		{"id: 1\ndata:\n\n", nil, ""}, // 2025-11-25's priming event: nothing to read
		{"retry: 5\n\n", nil, ""},
		{"data: {}\n", nil, "middle of an event"},
		{"data: {}", nil, "middle of a line"},
		{"data: \xff\n\n", nil, "not UTF-8"},
	} {
		r := NewReader(strings.NewReader(tc.in), 1<<10)
		r.Strict = true
		var got []string
		var err error
		for {
			var data []byte
			if data, err = r.Next(); err != nil {
				break
			}
			got = append(got, string(data))
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		if strings.Join(got, "|") != strings.Join(tc.events, "|") || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: events %q, err %v; want %q, %q", tc.in, got, err, tc.events, tc.err)
		}
	}
}
