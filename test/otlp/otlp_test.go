// Package otlp checks that what mcprt exports over OTLP/HTTP JSON decodes
// with the official OTLP protobuf definitions (go.opentelemetry.io/proto/otlp)
// through protojson, strictly: no unknown field, every enum, int64 and
// double spelt as the definitions and the OTLP/JSON specification say.
// It lives in a nested module so that the main go.mod stays free of them.
package otlp

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcprt-otlp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "mcprt")
	// Built in the main module, whose go.mod and go.sum are mcprt's own.
	cmd := exec.Command("go", "build", "-o", binPath, "./cmd/mcprt")
	cmd.Dir = "../.."
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building mcprt:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hexIDsToBase64 rewrites the ids OTLP/JSON spells in hex (traceId,
// spanId, parentSpanId: the specification's one departure from the
// protobuf JSON mapping, which has bytes in base64) so that protojson
// reads them; a value that is not hex is left as it is, for protojson to
// refuse.
func hexIDsToBase64(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				if b, err := hex.DecodeString(s); err == nil {
					x[k] = base64.StdEncoding.EncodeToString(b)
				}
				continue
			}
			x[k] = hexIDsToBase64(e)
		}
	case []any:
		for i := range x {
			x[i] = hexIDsToBase64(x[i])
		}
	}
	return v
}

type receiver struct {
	mu      sync.Mutex
	traces  []*colltrace.ExportTraceServiceRequest
	metrics []*collmetrics.ExportMetricsServiceRequest
	errs    []error
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var generic any
	err := json.Unmarshal(body, &generic)
	if err == nil {
		body, err = json.Marshal(hexIDsToBase64(generic))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	strict := protojson.UnmarshalOptions{} // unknown fields are errors
	switch req.URL.Path {
	case "/v1/traces":
		m := &colltrace.ExportTraceServiceRequest{}
		if err == nil {
			err = strict.Unmarshal(body, m)
		}
		r.traces = append(r.traces, m)
	case "/v1/metrics":
		m := &collmetrics.ExportMetricsServiceRequest{}
		if err == nil {
			err = strict.Unmarshal(body, m)
		}
		r.metrics = append(r.metrics, m)
	}
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %w: %s", req.URL.Path, err, body))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, "{}")
}

// TestGatewayExportDecodes: a call through mcprt gateway to mcprt serve;
// every export request, spans and histograms, of both processes decodes
// with the official definitions, and says what was done.
func TestGatewayExportDecodes(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"ref":{"command":"`+binPath+`","args":["serve"]}}}`), 0o600)
	cmd := exec.Command(binPath, "call", "ref__echo", "text=hi", "--", binPath, "gateway", "-config", cfg)
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL, "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=test")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "hi") {
		t.Fatalf("mcprt call: %v\n%s", err, out)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	for _, err := range rcv.errs {
		t.Error(err)
	}
	kinds := map[string]tracepb.Span_SpanKind{}
	var traceID []byte
	for _, req := range rcv.traces {
		for _, rs := range req.ResourceSpans {
			service := ""
			for _, a := range rs.Resource.Attributes {
				if a.Key == "service.name" {
					service = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				if ss.Scope.GetName() != "mcprt" {
					t.Errorf("scope %v", ss.Scope)
				}
				for _, s := range ss.Spans {
					if len(s.TraceId) != 16 || len(s.SpanId) != 8 || s.EndTimeUnixNano < s.StartTimeUnixNano || s.StartTimeUnixNano == 0 {
						t.Errorf("span %v", s)
					}
					if !strings.HasPrefix(s.Name, "tools/call ") {
						continue // the gateway's lists, on the way
					}
					if traceID == nil {
						traceID = s.TraceId
					} else if string(traceID) != string(s.TraceId) {
						t.Errorf("span %s of another trace", s.Name)
					}
					kinds[service+" "+s.Name] = s.Kind
				}
			}
		}
	}
	want := map[string]tracepb.Span_SpanKind{
		"mcprt-gateway tools/call ref__echo": tracepb.Span_SPAN_KIND_SERVER,
		"mcprt-gateway tools/call echo":      tracepb.Span_SPAN_KIND_CLIENT,
		"mcprt tools/call echo":              tracepb.Span_SPAN_KIND_SERVER,
	}
	for k, v := range want {
		if kinds[k] != v {
			t.Errorf("%s: kind %v, want %v (spans: %v)", k, kinds[k], v, kinds)
		}
	}
	histograms := map[string]uint64{}
	for _, req := range rcv.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					h := m.GetHistogram()
					if h == nil || m.Unit != "s" {
						t.Errorf("metric %v", m)
						continue
					}
					for _, p := range h.DataPoints {
						if len(p.BucketCounts) != len(p.ExplicitBounds)+1 {
							t.Errorf("%s: %d buckets for %d bounds", m.Name, len(p.BucketCounts), len(p.ExplicitBounds))
						}
						histograms[m.Name] += p.Count
					}
				}
			}
		}
	}
	if histograms["mcp.server.operation.duration"] == 0 || histograms["mcp.client.operation.duration"] == 0 {
		t.Errorf("histograms: %v", histograms)
	}
}
