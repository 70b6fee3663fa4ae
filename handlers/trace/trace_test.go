package trace

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseTraceparent(t *testing.T) {
	const good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	c, err := parseTraceparent(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.TraceID.String() != "4bf92f3577b34da6a3ce929d0e0e4736" || c.SpanID.String() != "00f067aa0ba902b7" || !c.Sampled {
		t.Fatalf("got %+v", c)
	}
	if got := c.Traceparent(); got != good {
		t.Errorf("round trip: %s", got)
	}
	// A later version: its first four fields, and what follows a dash.
	if c, err := parseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes-next"); err != nil || c.Sampled {
		t.Errorf("version 01: %+v %v", c, err)
	}
	for _, bad := range []string{
		"",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", // 00 has exactly four
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
	} {
		if _, err := parseTraceparent(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseTraceparent(s)
		if err != nil {
			return
		}
		if !c.valid() {
			t.Fatalf("%q: accepted, invalid ids", s)
		}
		// What is accepted re-encodes to the same ids and flag.
		again, err := parseTraceparent(c.Traceparent())
		if err != nil || again.TraceID != c.TraceID || again.SpanID != c.SpanID || again.Sampled != c.Sampled {
			t.Fatalf("%q: round trip %+v, %v", s, again, err)
		}
		if strings.HasPrefix(s, "00-") && c.Traceparent()[:53] != s[:53] {
			t.Fatalf("%q: re-encoded as %q", s, c.Traceparent())
		}
	})
}

func TestFromMeta(t *testing.T) {
	c := FromMeta([]byte(`"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`), []byte(`"k=v"`), []byte(`"user=1"`))
	if !c.valid() || c.State != "k=v" || c.Baggage != "user=1" {
		t.Errorf("got %+v", c)
	}
	for _, bad := range [][]byte{nil, []byte(`1`), []byte(`"nope"`)} {
		if c := FromMeta(bad, []byte(`"k=v"`), nil); c.valid() || c.State != "" {
			t.Errorf("%s: %+v", bad, c)
		}
	}
}

func TestSamplers(t *testing.T) {
	tr := &Tracer{}
	root := tr.Start(SpanContext{}, false, "x", KindServer, timeZero)
	if !root.Context.Sampled || !root.Context.valid() || !root.Parent.isZero() {
		t.Fatalf("default root: %+v", root)
	}
	unsampled := SpanContext{TraceID: root.Context.TraceID, SpanID: root.Context.SpanID}
	if child := tr.Start(unsampled, true, "x", KindClient, timeZero); child.Context.Sampled || child.Context.TraceID != root.Context.TraceID || child.Parent != root.Context.SpanID || !child.Remote {
		t.Errorf("parent-based child of an unsampled parent: %+v", child)
	}
	// Ratio: about the fraction asked for, and the same verdict for the
	// same trace id everywhere.
	half := Ratio(0.5)
	n := 0
	for range 10000 {
		id := newTraceID()
		if half(SpanContext{}, id) {
			n++
		}
		if half(SpanContext{}, id) != half(SpanContext{}, id) {
			t.Fatal("ratio: two verdicts for one id")
		}
	}
	if n < 4500 || n > 5500 {
		t.Errorf("ratio 0.5 sampled %d of 10000", n)
	}
	if Ratio(0)(SpanContext{}, newTraceID()) || !Ratio(1)(SpanContext{}, newTraceID()) {
		t.Error("ratio 0 or 1")
	}
	pb := ParentBased(AlwaysOff)
	if pb(SpanContext{}, newTraceID()) || !pb(SpanContext{TraceID: newTraceID(), SpanID: newSpanID(), Sampled: true}, newTraceID()) {
		t.Error("parentbased_always_off")
	}
}

func TestDescribe(t *testing.T) {
	s := &Span{}
	Describe(s, "tools/call", []byte(`"7"`), []byte(`{"name":"add","arguments":{}}`), false)
	Outcome(s, 0, true)
	if s.Name != "tools/call add" {
		t.Errorf("name %q", s.Name)
	}
	for k, v := range map[string]string{AttrMethod: "tools/call", AttrToolName: "add", attrRequestID: "7", AttrErrorType: ErrorTool, attrOperationName: "execute_tool"} {
		if a, ok := s.attr(k); !ok || a.Str != v {
			t.Errorf("%s = %+v, want %q", k, a, v)
		}
	}
	r := &Span{}
	Describe(r, "resources/read", []byte(`1`), []byte(`{"uri":"file:///x"}`), true)
	Outcome(r, -32002, false)
	if a, _ := r.attr(AttrResourceURI); r.Name != "resources/read" || a.Str != "file:///x" {
		t.Errorf("resource: %q %+v", r.Name, a)
	}
	if a, _ := r.attr(AttrStatusCode); a.Str != "-32002" || !r.Failed {
		t.Errorf("status: %+v", r)
	}
}

func TestContext(t *testing.T) {
	c := SpanContext{TraceID: newTraceID(), SpanID: newSpanID()}
	got, ok := FromContext(WithContext(context.Background(), c))
	if !ok || got != c {
		t.Errorf("got %+v %v", got, ok)
	}
	if _, ok := FromContext(context.Background()); ok {
		t.Error("empty context has a span")
	}
}

var timeZero = time.Now()
