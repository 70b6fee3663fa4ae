package e2e

import (
	"bufio"
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
	"syscall"
	"testing"
	"time"
)

// otlpSpan is a span as an OTLP/HTTP JSON receiver decodes it, with the
// service.name of its resource.
type otlpSpan struct {
	Service      string
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	Kind         int    `json:"kind"`
	Attributes   []struct {
		Key   string `json:"key"`
		Value struct {
			StringValue *string `json:"stringValue"`
		} `json:"value"`
	} `json:"attributes"`
	Status struct {
		Code int `json:"code"`
	} `json:"status"`
	Links []struct {
		TraceID string `json:"traceId"`
		SpanID  string `json:"spanId"`
	} `json:"links"`
}

func (s otlpSpan) attr(k string) (string, bool) {
	for _, a := range s.Attributes {
		if a.Key == k && a.Value.StringValue != nil {
			return *a.Value.StringValue, true
		}
	}
	return "", false
}

// otlpReceiver is an OTLP/HTTP JSON receiver on loopback.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []otlpSpan
	metrics []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if req.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want application/json", http.StatusUnsupportedMediaType)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		switch req.URL.Path {
		case "/v1/traces":
			var tr struct {
				ResourceSpans []struct {
					Resource struct {
						Attributes []struct {
							Key   string
							Value struct{ StringValue string }
						}
					}
					ScopeSpans []struct{ Spans []otlpSpan }
				}
			}
			if err := json.Unmarshal(body, &tr); err != nil {
				t.Errorf("receiver: %v: %s", err, body)
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rs := range tr.ResourceSpans {
				service := ""
				for _, a := range rs.Resource.Attributes {
					if a.Key == "service.name" {
						service = a.Value.StringValue
					}
				}
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						s.Service = service
						r.spans = append(r.spans, s)
					}
				}
			}
		case "/v1/metrics":
			r.metrics = append(r.metrics, string(body))
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) trace(id string) []otlpSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []otlpSpan
	for _, s := range r.spans {
		if s.TraceID == id {
			out = append(out, s)
		}
	}
	return out
}

// TestTraceThroughGateway: a client's trace context, in _meta, runs
// through mcprt gateway to its backends unbroken, in both eras and
// across era bridging: the gateway's server span is the client's child,
// its client span the server span's, and the backend's (mcprt serve)
// server span the client span's; the npm server, which makes no span,
// receives the gateway's context in _meta. Every span reaches an OTLP
// receiver, named and attributed by the conventions.
func TestTraceThroughGateway(t *testing.T) {
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "")
	f := newGateway(t)
	servers := map[string]any{"ref": f.serve("ref", nil)}
	npmDir := os.Getenv(npmServersEnv)
	npmIn := filepath.Join(f.dir, "npm-stdin.log")
	if npmDir != "" {
		// The npm server's stdin, teed: what the gateway sent it.
		bin := filepath.Join(npmDir, "node_modules", ".bin", "mcp-server-everything")
		servers["npm"] = map[string]any{"command": f.script("npm", fmt.Sprintf("tee -a %q | exec %q stdio\n", npmIn, bin)),
			"env": map[string]string{"MCPRT_GWMARK": f.marker + "-npm"}}
	}
	c := f.start(f.config(servers), Options{})
	c.Initialize("2025-06-18")

	const clientSpan = "00f067aa0ba902b7"
	traceparent := func(tid string) map[string]any {
		return map[string]any{"traceparent": "00-" + tid + "-" + clientSpan + "-01", "tracestate": "vendor=1"}
	}
	legacyTrace, modernTrace := "4bf92f3577b34da6a3ce929d0e0e4736", "5bf92f3577b34da6a3ce929d0e0e4737"
	// A legacy client (2025-06-18) to mcprt serve, which the gateway
	// speaks 2026-07-28 to; and a 2026-07-28 client to the npm server,
	// which speaks 2025-11-25.
	wantResult(t, c.Call("tools/call", withMeta(toolsCall("ref__echo", map[string]any{"text": "hi"}), traceparent(legacyTrace))))
	modern := meta()
	for k, v := range traceparent(modernTrace) {
		modern[k] = v
	}
	if npmDir != "" {
		wantResult(t, c.Call("tools/call", withMeta(toolsCall("npm__echo", map[string]any{"message": "hi"}), modern)))
	} else {
		wantResult(t, c.Call("tools/call", withMeta(toolsCall("ref__echo", map[string]any{"text": "hi"}), modern)))
		t.Logf("%s unset: the 2026-07-28 call goes to mcprt serve, and no npm server is checked", npmServersEnv)
	}
	// Closing stdin ends the gateway and its backends, each flushing its
	// spans on the way out.
	c.CloseStdin()
	if _, ok := c.WaitExit(exitTimeout); !ok {
		t.Fatal("gateway did not exit")
	}

	check := func(tid string, backendServes bool, tool, backendTool string) {
		t.Helper()
		var spans []otlpSpan
		want := 2
		if backendServes {
			want = 3
		}
		deadline := time.Now().Add(10 * time.Second)
		for spans = rcv.trace(tid); len(spans) < want && time.Now().Before(deadline); spans = rcv.trace(tid) {
			time.Sleep(20 * time.Millisecond)
		}
		if len(spans) != want {
			t.Fatalf("trace %s: %d spans, want %d: %+v", tid, len(spans), want, spans)
		}
		var gwServer, gwClient, backend *otlpSpan
		for i := range spans {
			s := &spans[i]
			switch {
			case s.Service == "mcprt-gateway" && s.Kind == 2:
				gwServer = s
			case s.Service == "mcprt-gateway" && s.Kind == 3:
				gwClient = s
			case s.Service == "mcprt" && s.Kind == 2:
				backend = s
			}
		}
		if gwServer == nil || gwClient == nil || (backendServes && backend == nil) {
			t.Fatalf("trace %s: spans %+v", tid, spans)
		}
		// One unbroken chain: client → gateway server → gateway client → backend.
		if gwServer.ParentSpanID != clientSpan {
			t.Errorf("gateway server span's parent %q, want the client's %s", gwServer.ParentSpanID, clientSpan)
		}
		if gwClient.ParentSpanID != gwServer.SpanID {
			t.Errorf("gateway client span's parent %q, want the server span %s", gwClient.ParentSpanID, gwServer.SpanID)
		}
		if backendServes && backend.ParentSpanID != gwClient.SpanID {
			t.Errorf("backend span's parent %q, want the gateway's client span %s", backend.ParentSpanID, gwClient.SpanID)
		}
		for _, sp := range []struct {
			s     *otlpSpan
			name  string
			attrs map[string]string
		}{
			{gwServer, "tools/call " + tool, map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": tool, "gen_ai.operation.name": "execute_tool", "network.transport": "pipe"}},
			{gwClient, "tools/call " + backendTool, map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": backendTool, "network.transport": "pipe"}},
			{backend, "tools/call " + backendTool, map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": backendTool, "network.transport": "pipe", "mcp.protocol.version": modernVersion}},
		} {
			if sp.s == nil {
				continue
			}
			if sp.s.Name != sp.name {
				t.Errorf("span %q, want %q", sp.s.Name, sp.name)
			}
			for k, v := range sp.attrs {
				if got, _ := sp.s.attr(k); got != v {
					t.Errorf("%s: %s = %q, want %q", sp.name, k, got, v)
				}
			}
			if _, ok := sp.s.attr("error.type"); ok || sp.s.Status.Code != 0 {
				t.Errorf("%s: an error: %+v", sp.name, sp.s)
			}
		}
		if id, ok := gwServer.attr("jsonrpc.request.id"); !ok || id == "" {
			t.Errorf("gateway server span has no jsonrpc.request.id")
		}
	}
	check(legacyTrace, true, "ref__echo", "echo")
	if npmDir == "" {
		check(modernTrace, true, "ref__echo", "echo")
		return
	}
	check(modernTrace, false, "npm__echo", "echo")
	// The npm server got the gateway's client span as its parent.
	gwClient := ""
	for _, s := range rcv.trace(modernTrace) {
		if s.Kind == 3 {
			gwClient = s.SpanID
		}
	}
	in, err := os.ReadFile(npmIn)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	sc := bufio.NewScanner(strings.NewReader(string(in)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			Method string
			Params struct {
				Meta map[string]any `json:"_meta"`
			}
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method != "tools/call" {
			continue
		}
		found = true
		want := "00-" + modernTrace + "-" + gwClient + "-01"
		if m.Params.Meta["traceparent"] != want || m.Params.Meta["tracestate"] != "vendor=1" {
			t.Errorf("npm server's _meta %v, want traceparent %s and the client's tracestate", m.Params.Meta, want)
		}
	}
	if !found {
		t.Errorf("the npm server received no tools/call: %s", in)
	}
}

// TestTraceTaskLinked: a call made a task is a span of the caller's trace;
// the task's work is a span of its own trace, linked to that call, and
// the audit line of the call carries the task's id.
func TestTraceTaskLinked(t *testing.T) {
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	audit := filepath.Join(t.TempDir(), "audit.log")
	c := Start(t, Options{Args: []string{"-tasks", "-audit", audit}})
	c.Initialize("2025-11-25")
	const tid = "6bf92f3577b34da6a3ce929d0e0e4738"
	m := c.Call("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 1}, "task": map[string]any{},
		"_meta": map[string]any{"traceparent": "00-" + tid + "-00f067aa0ba902b7-01"}})
	tk := readTask(t, m.Result)
	if res := c.Call("tasks/result", map[string]any{"taskId": tk.TaskID}); res.Error != nil {
		t.Fatalf("tasks/result: %s", res)
	}
	c.CloseStdin()
	if _, ok := c.WaitExit(exitTimeout); !ok {
		t.Fatal("serve did not exit")
	}
	var call otlpSpan
	for _, s := range rcv.trace(tid) {
		if s.Name == "tools/call sleep" {
			call = s
		}
	}
	if call.SpanID == "" {
		t.Fatalf("no span of the call in %+v", rcv.trace(tid))
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var work *otlpSpan
	for i, s := range rcv.spans {
		if s.Name == "tools/call sleep (task)" {
			work = &rcv.spans[i]
		}
	}
	if work == nil {
		t.Fatalf("no span of the task's work: %+v", rcv.spans)
	}
	if work.Kind != 1 || work.TraceID == tid || len(work.Links) != 1 || work.Links[0].TraceID != tid || work.Links[0].SpanID != call.SpanID {
		t.Errorf("task work span %+v, want kind 1, its own trace, linked to %s", work, call.SpanID)
	}
	if id, _ := work.attr("mcp.task.id"); id != tk.TaskID {
		t.Errorf("mcp.task.id %q, want %q", id, tk.TaskID)
	}
	var taskLine *auditLine
	for _, l := range readAudit(t, audit) {
		if l.Tool == "sleep" {
			taskLine = &l
		}
	}
	if taskLine == nil || taskLine.TaskID != tk.TaskID {
		t.Errorf("audit line of the call: %+v, want task id %s", taskLine, tk.TaskID)
	}
}

// TestHTTPMetricsDurations: the gateway's -http-metrics page has the
// conventions' histograms, as Prometheus renders their names: the calls
// it served (network.transport tcp) and those it sent to its backend.
func TestHTTPMetricsDurations(t *testing.T) {
	f := newGateway(t)
	gw := f.startGatewayHTTP(f.config(map[string]any{"good": f.serve("good", nil)}), "-http-metrics", "/metrics")
	if out, err := exec.Command(binPath, "call", "-url", gw.url, "good__echo", `{"text":"hi"}`).CombinedOutput(); err != nil {
		t.Fatalf("call: %v\n%s", err, out)
	}
	code, body := get(t, "GET", strings.TrimSuffix(gw.url, "/mcp")+"/metrics", "")
	for _, want := range []string{
		"# TYPE mcp_server_operation_duration_seconds histogram\n",
		`mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="good__echo",mcp_protocol_version="` + modernVersion + `",network_transport="tcp",le="+Inf"} 1`,
		`mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="good__echo",mcp_protocol_version="` + modernVersion + `",network_transport="tcp"} 1`,
		"# TYPE mcp_client_operation_duration_seconds histogram\n",
		`mcp_client_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="echo",`,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("want %q in %d:\n%s", want, code, body)
		}
	}
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("gateway exit %d", code)
	}
}
