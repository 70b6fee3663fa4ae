package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/runtime/gateway"
)

// Label values are escaped as Prometheus's text format asks: a tool or
// backend name with a quote, a backslash or a line break cannot break the
// line or the label.
func TestMetricsLabels(t *testing.T) {
	if got, want := labels("backend", "a\"b\\c\nd", "tool", "t"), `{backend="a\"b\\c\nd",tool="t"}`; got != want {
		t.Errorf("labels: %s, want %s", got, want)
	}
}

func TestCallStats(t *testing.T) {
	var s callStats
	s.record(gateway.CallRecord{Backend: "b", Tool: "t", Took: time.Second})
	s.record(gateway.CallRecord{Backend: "b", Tool: "t", Took: time.Second})
	s.record(gateway.CallRecord{Backend: "b", Tool: "t", IsError: true})
	s.record(gateway.CallRecord{Backend: "b", Tool: "t", Err: errors.New("x")})
	for k, want := range map[callKey]callStat{
		{"b", "t", "ok"}: {2, 2}, {"b", "t", "is_error"}: {1, 0}, {"b", "t", "error"}: {1, 0},
	} {
		if got := s.m[k]; got == nil || *got != want {
			t.Errorf("%v: %+v, want %+v", k, got, want)
		}
	}
	var b strings.Builder
	processMetrics(time.Now())(&b)
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		// name{labels} value: the value after the last space, the labels'
		// values quoted (they may hold spaces).
		if i := strings.LastIndexByte(line, ' '); !strings.HasPrefix(line, "# ") && (i < 0 || strings.ContainsAny(line[i+1:], `"{} `)) {
			t.Errorf("not a sample line: %q", line)
		}
	}
}
