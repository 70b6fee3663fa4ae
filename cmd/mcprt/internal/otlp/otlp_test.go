package otlp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/trace"
)

// receiver is an OTLP/HTTP JSON receiver: it decodes what it is sent.
type receiver struct {
	mu      sync.Mutex
	traces  []tracesRequest
	metrics []json.RawMessage
	headers []http.Header
}

type tracesRequest struct {
	ResourceSpans []struct {
		Resource struct {
			Attributes []kv `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Scope struct{ Name, Version string } `json:"scope"`
			Spans []struct {
				TraceID, SpanID, ParentSpanID, Name string
				Kind                                int
				Flags                               uint32
				StartTimeUnixNano, EndTimeUnixNano  string
				Attributes                          []kv
				Status                              struct{ Code int }
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type kv struct {
	Key   string
	Value struct {
		StringValue *string
		IntValue    *string
	}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, req.Header.Clone())
	switch req.URL.Path {
	case "/v1/traces":
		var t tracesRequest
		dec := json.NewDecoder(strings.NewReader(string(body)))
		if err := dec.Decode(&t); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		r.traces = append(r.traces, t)
	case "/v1/metrics":
		r.metrics = append(r.metrics, body)
	default:
		http.NotFound(w, req)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	c, err := ConfigFromEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://127.0.0.1:4318/",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/custom",
		"OTEL_EXPORTER_OTLP_HEADERS":         "api-key=s%20ecret,x=1",
		"OTEL_RESOURCE_ATTRIBUTES":           "deployment.environment=test,service.name=ignored",
		"OTEL_SERVICE_NAME":                  "gw",
		"OTEL_TRACES_SAMPLER":                "traceidratio",
		"OTEL_TRACES_SAMPLER_ARG":            "0",
	}), "mcprt")
	if err != nil {
		t.Fatal(err)
	}
	if c.TracesURL != "http://127.0.0.1:9/custom" || c.MetricsURL != "http://127.0.0.1:4318/v1/metrics" {
		t.Errorf("urls %q %q", c.TracesURL, c.MetricsURL)
	}
	if c.Headers["api-key"] != "s ecret" || c.Headers["x"] != "1" {
		t.Errorf("headers %v", c.Headers)
	}
	if len(c.Resource) != 2 || c.Resource[0].Str != "test" || c.Resource[1].Key != "service.name" || c.Resource[1].Str != "gw" {
		t.Errorf("resource %v", c.Resource)
	}
	if c.Sampler(trace.SpanContext{}, trace.TraceID{1}) {
		t.Error("traceidratio 0 sampled")
	}
	if c, _ := ConfigFromEnv(env(nil), "mcprt"); c.Enabled() {
		t.Error("enabled with no endpoint")
	}
	if c, _ := ConfigFromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}), "mcprt"); c.Enabled() {
		t.Error("enabled though disabled")
	}
	for _, bad := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_TRACES_SAMPLER": "sometimes"},
		{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
		{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
		{"OTEL_BSP_SCHEDULE_DELAY": "soon"},
	} {
		if _, err := ConfigFromEnv(env(bad), "mcprt"); err == nil {
			t.Errorf("%v: accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("error tells a value: %v", err)
		}
	}
}

func testConfig(url string) Config {
	return Config{TracesURL: url + "/v1/traces", MetricsURL: url + "/v1/metrics", Headers: map[string]string{"Api-Key": "k"},
		Resource: []trace.Attr{trace.String("service.name", "test")}, Timeout: 5 * time.Second,
		MaxQueue: 100, BatchSize: 10, Delay: 20 * time.Millisecond, MetricInterval: time.Hour}
}

func TestExportSpansAndMetrics(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	d := NewDurations()
	x := New(testConfig(srv.URL), d, "v1", nil)
	tr := &trace.Tracer{Exporter: x, OnEnd: d.Record}
	x.Start()
	now := time.Now()
	server := tr.Start(trace.SpanContext{}, false, "tools/call", trace.KindServer, now)
	trace.Describe(server, "tools/call", []byte("1"), []byte(`{"name":"add"}`), false)
	trace.Outcome(server, 0, true)
	client := tr.Start(server.Context, false, "tools/call", trace.KindClient, now)
	trace.Describe(client, "tools/call", nil, []byte(`{"name":"add"}`), false)
	client.Attrs = append(client.Attrs, trace.Attr{Key: "n", Int: 3, IsInt: true})
	tr.End(client, now.Add(30*time.Millisecond))
	tr.End(server, now.Add(40*time.Millisecond))
	x.Close()

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var names []string
	var spans int
	for _, req := range rcv.traces {
		for _, rs := range req.ResourceSpans {
			if v := rs.Resource.Attributes[0].Value.StringValue; v == nil || *v != "test" {
				t.Errorf("resource %+v", rs.Resource)
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans++
					names = append(names, s.Name)
					if len(s.TraceID) != 32 || s.TraceID != server.Context.TraceID.String() {
						t.Errorf("trace id %q", s.TraceID)
					}
					switch s.Kind {
					case 2:
						if s.ParentSpanID != "" || s.Status.Code != 2 {
							t.Errorf("server span %+v", s)
						}
					case 3:
						if s.ParentSpanID != server.Context.SpanID.String() {
							t.Errorf("client parent %q", s.ParentSpanID)
						}
						if a := s.Attributes[len(s.Attributes)-1]; a.Value.IntValue == nil || *a.Value.IntValue != "3" {
							t.Errorf("int attribute %+v", a)
						}
					}
				}
			}
		}
	}
	if spans != 2 {
		t.Errorf("%d spans: %v", spans, names)
	}
	if len(rcv.metrics) != 1 || !strings.Contains(string(rcv.metrics[0]), `"name":"mcp.server.operation.duration"`) || !strings.Contains(string(rcv.metrics[0]), `"name":"mcp.client.operation.duration"`) {
		t.Errorf("metrics: %s", rcv.metrics)
	}
	if !json.Valid(rcv.metrics[0]) {
		t.Error("metrics: not JSON")
	}
	if rcv.headers[0].Get("Api-Key") != "k" || rcv.headers[0].Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", rcv.headers[0])
	}
	var prom strings.Builder
	d.WritePrometheus(&prom)
	for _, want := range []string{
		`# TYPE mcp_server_operation_duration_seconds histogram`,
		`mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="add",error_type="tool_error",le="0.02"} 0`,
		`mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="add",error_type="tool_error",le="0.05"} 1`,
		`mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="add",error_type="tool_error"} 1`,
		`mcp_client_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="add",le="+Inf"} 1`,
	} {
		if !strings.Contains(prom.String(), want) {
			t.Errorf("prometheus lacks %s:\n%s", want, prom.String())
		}
	}
}

// TestCollectorDown: a receiver that never answers blocks no span's end
// and grows nothing past the queue; Close returns within its bound.
func TestCollectorDown(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	cfg := testConfig(srv.URL)
	cfg.Timeout = 300 * time.Millisecond
	x := New(cfg, nil, "v1", nil)
	tr := &trace.Tracer{Exporter: x}
	x.Start()
	for range 10 * cfg.MaxQueue {
		s := tr.Start(trace.SpanContext{}, false, "ping", trace.KindServer, time.Now())
		tr.End(s, time.Now())
	}
	if len(x.queue) > cfg.MaxQueue {
		t.Fatal("queue past its bound")
	}
	done := make(chan struct{})
	go func() { x.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	if x.Dropped() == 0 || x.sentCount() != 0 {
		t.Errorf("dropped %d, sent %d", x.Dropped(), x.sentCount())
	}
}

// TestSessionDurations: ended sessions land in the conventions' session
// histograms, keyed by error.type, mcp.protocol.version and
// network.transport, on the Prometheus page and in the OTLP export.
func TestSessionDurations(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	d := NewDurations()
	x := New(testConfig(srv.URL), d, "v1", nil)
	tr := &trace.Tracer{Exporter: x, OnEnd: d.Record, OnSessionEnd: d.RecordSession}
	x.Start()
	now := time.Now()
	tr.EndSession(trace.SessionEnd{Start: now, End: now.Add(3 * time.Second), ProtocolVersion: "2025-06-18", Transport: "pipe"})
	tr.EndSession(trace.SessionEnd{Start: now, End: now.Add(90 * time.Second), ProtocolVersion: "2025-06-18", Transport: "pipe"})
	tr.EndSession(trace.SessionEnd{Client: true, Start: now, End: now.Add(time.Millisecond), ProtocolVersion: "2025-11-25", Transport: "tcp", ErrorType: "server_exited"})
	(*trace.Tracer)(nil).EndSession(trace.SessionEnd{}) // off: nothing, no panic
	x.Close()

	var prom strings.Builder
	d.WritePrometheus(&prom)
	for _, want := range []string{
		`# TYPE mcp_server_session_duration_seconds histogram`,
		`mcp_server_session_duration_seconds_bucket{mcp_protocol_version="2025-06-18",network_transport="pipe",le="2"} 0`,
		`mcp_server_session_duration_seconds_bucket{mcp_protocol_version="2025-06-18",network_transport="pipe",le="5"} 1`,
		`mcp_server_session_duration_seconds_bucket{mcp_protocol_version="2025-06-18",network_transport="pipe",le="120"} 2`,
		`mcp_server_session_duration_seconds_sum{mcp_protocol_version="2025-06-18",network_transport="pipe"} 93`,
		`mcp_server_session_duration_seconds_count{mcp_protocol_version="2025-06-18",network_transport="pipe"} 2`,
		`# TYPE mcp_client_session_duration_seconds histogram`,
		`mcp_client_session_duration_seconds_bucket{error_type="server_exited",mcp_protocol_version="2025-11-25",network_transport="tcp",le="0.01"} 1`,
	} {
		if !strings.Contains(prom.String(), want) {
			t.Errorf("prometheus lacks %s:\n%s", want, prom.String())
		}
	}
	if strings.Contains(prom.String(), "operation_duration") {
		t.Errorf("no operation was recorded:\n%s", prom.String())
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.metrics) != 1 || !json.Valid(rcv.metrics[0]) {
		t.Fatalf("metrics: %s", rcv.metrics)
	}
	var req struct {
		ResourceMetrics []struct {
			ScopeMetrics []struct {
				Metrics []struct {
					Name, Unit string
					Histogram  struct {
						DataPoints []struct{ Count string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(rcv.metrics[0], &req); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range req.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		got[m.Name] = m.Unit + " " + m.Histogram.DataPoints[0].Count
	}
	if got[serverSessionDuration] != "s 2" || got[clientSessionDuration] != "s 1" || len(got) != 2 {
		t.Errorf("OTLP metrics %v", got)
	}
}
