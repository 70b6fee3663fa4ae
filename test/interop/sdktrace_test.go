package interop

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// span is what the test reads of an OTLP/HTTP JSON span.
type span struct {
	Service      string
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	Kind         int    `json:"kind"`
}

// collector is an OTLP/HTTP JSON receiver of spans.
type collector struct {
	*httptest.Server
	mu    sync.Mutex
	spans []span
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/v1/traces" {
			var req struct {
				ResourceSpans []struct {
					Resource struct {
						Attributes []struct {
							Key   string
							Value struct{ StringValue string }
						}
					}
					ScopeSpans []struct{ Spans []span }
				}
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Errorf("collector: %v: %s", err, body)
			}
			c.mu.Lock()
			for _, rs := range req.ResourceSpans {
				service := ""
				for _, a := range rs.Resource.Attributes {
					if a.Key == "service.name" {
						service = a.Value.StringValue
					}
				}
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						s.Service = service
						c.spans = append(c.spans, s)
					}
				}
			}
			c.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) trace(id string) []span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []span
	for _, s := range c.spans {
		if s.TraceID == id {
			out = append(out, s)
		}
	}
	return out
}

// TestSDKClientTraceThroughGateway: the official SDK's client, whose
// caller has a trace going, puts its W3C traceparent in the request's
// _meta (CallToolParams.Meta: what the SDK offers for it) and calls a tool
// through `mcprt gateway` to `mcprt serve`. An OTLP collector receives
// mcprt's three spans in the caller's trace, unbroken: the gateway's
// server span a child of the caller's span, its client span a child of
// that, and the backend's server span a child of the client span.
func TestSDKClientTraceThroughGateway(t *testing.T) {
	needBinaries(t)
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "")
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"ref": map[string]any{"command": mcprtBin, "args": []string{"serve"}, "env": map[string]string{"LOG_LEVEL": "warn"}},
	}})
	config := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, mcprtBin, "gateway", "-config", config, "-http", "127.0.0.1:0")

	// The caller's span: ids as any tracer makes them, sampled.
	var traceID [16]byte
	var spanID [8]byte
	rand.Read(traceID[:])
	rand.Read(spanID[:])
	tid, sid := hex.EncodeToString(traceID[:]), hex.EncodeToString(spanID[:])
	traceparent := "00-" + tid + "-" + sid + "-01"

	versions := mcp.SupportedProtocolVersions()
	s := connectSDKHTTP(t, url, versions[len(versions)-1])
	res, err := s.cs.CallTool(testCtx(t), &mcp.CallToolParams{
		Meta:      mcp.Meta{"traceparent": traceparent},
		Name:      "ref__echo",
		Arguments: map[string]any{"text": "traced"},
	})
	if err != nil || res.IsError {
		t.Fatalf("tools/call ref__echo: %v %+v", err, res)
	}
	if got := textOf(t, res); got != "traced" {
		t.Fatalf("echo: %q", got)
	}

	// The gateway's two spans and the backend's one arrive within a few
	// export intervals (50 ms).
	var spans []span
	for deadline := time.Now().Add(hangTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if spans = col.trace(tid); len(spans) >= 3 {
			break
		}
	}
	var gwServer, gwClient, backend *span
	for i := range spans {
		sp := &spans[i]
		switch {
		case sp.Kind == 2 && sp.Service == "mcprt-gateway":
			gwServer = sp
		case sp.Kind == 3 && sp.Service == "mcprt-gateway":
			gwClient = sp
		case sp.Kind == 2 && sp.Service == "mcprt":
			backend = sp
		}
	}
	if gwServer == nil || gwClient == nil || backend == nil {
		t.Fatalf("want the gateway's server and client spans and the backend's server span in trace %s; got %+v", tid, spans)
	}
	if gwServer.ParentSpanID != sid || gwServer.Name != "tools/call ref__echo" {
		t.Errorf("gateway server span %+v: want parent %s (the SDK caller's), name tools/call ref__echo", *gwServer, sid)
	}
	if gwClient.ParentSpanID != gwServer.SpanID || gwClient.Name != "tools/call echo" {
		t.Errorf("gateway client span %+v: want parent %s, name tools/call echo", *gwClient, gwServer.SpanID)
	}
	if backend.ParentSpanID != gwClient.SpanID || backend.Name != "tools/call echo" {
		t.Errorf("backend server span %+v: want parent %s", *backend, gwClient.SpanID)
	}
}
