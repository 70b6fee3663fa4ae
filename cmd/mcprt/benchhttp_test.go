package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// TestBenchURL: bench -url against the reference server over Streamable
// HTTP, in both eras: every K gets calls, checked answers and figures; with
// -pid (this process serves it) the server CPU column is there.
func TestBenchURL(t *testing.T) {
	t.Parallel()
	url := serveReferenceHTTP(t, streamhttp.Options{})
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			svg := filepath.Join(t.TempDir(), "latency.svg")
			code := bench([]string{"-url", url, "-era", era, "-duration", "300ms", "-k", "1,4", "-json", "-q", "-svg", svg}, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			var res HTTPBenchResult
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
			if res.Era != era || res.Server != "mcprt-reference "+version || res.Call != `tools/call echo {"text":"hi"}` || len(res.Phases) != 2 {
				t.Fatalf("result %+v", res)
			}
			for _, p := range res.Phases {
				if p.Calls == 0 || p.ReqPerSec <= 0 || p.P50Us <= 0 || p.P99Us < p.P50Us || p.MaxUs < p.P99Us {
					t.Errorf("phase %+v", p)
				}
			}
			checkLatencySVG(t, svg, "k=1", "k=4")
			stdout.Reset()
			stderr.Reset()
			code = bench([]string{"-url", url, "-era", era, "-duration", "300ms", "-k", "2", "-ping", "-pid", strconv.Itoa(os.Getpid())}, &stdout, &stderr)
			want := "timed call: ping"
			if era == "modern" {
				want = "timed call: server/discover"
			}
			if code != 0 || !strings.Contains(stdout.String(), want) || !strings.Contains(stdout.String(), "server CPU/call") {
				t.Errorf("bench -ping -pid: exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
		})
	}
	t.Run("a failing call", func(t *testing.T) {
		t.Parallel()
		var stdout, stderr bytes.Buffer
		code := bench([]string{"-url", url, "-duration", "300ms", "-k", "1", "-tool", "panic", "-q"}, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "the tool reported an error") {
			t.Errorf("bench -tool panic: exit %d\n%s", code, stderr.String())
		}
	})
}

func TestBenchURLUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-url", "http://127.0.0.1:1/mcp", "--", "x"}, "two servers"},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-cold", "3"}, "-url times the -k phases only"},
		{[]string{"-pid", "1", "--", "x"}, "-pid and -header are for -url"},
	} {
		var stdout, stderr bytes.Buffer
		if code := bench(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("bench %q: exit %d, stderr:\n%s", tc.args, code, stderr.String())
		}
	}
}

// checkLatencySVG: bench -svg wrote an SVG document with one CDF line per
// phase, each named.
func checkLatencySVG(t *testing.T, path string, phases ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("bench -svg: %v", err)
	}
	var doc struct {
		XMLName   xml.Name `xml:"svg"`
		Polylines []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
		Texts []string `xml:"text"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("bench -svg wrote no SVG document: %v\n%s", err, b)
	}
	if len(doc.Polylines) != len(phases) {
		t.Errorf("bench -svg: %d lines, want %d (%q)", len(doc.Polylines), len(phases), phases)
	}
	for _, p := range phases {
		if !slices.Contains(doc.Texts, p) {
			t.Errorf("bench -svg: no legend %q among %q", p, doc.Texts)
		}
	}
}
