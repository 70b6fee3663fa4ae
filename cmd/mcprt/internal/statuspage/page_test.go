package statuspage

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/runtime/gateway"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

// TestPageEscapesWhatBackendsWrite: a backend's stderr, its reasons and
// even its name reach the page as text, never as markup, and the page
// says each backend's state.
func TestPageEscapesWhatBackendsWrite(t *testing.T) {
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	var calls Calls
	for i := range 100 {
		calls.Record("b<i>", now.Add(-time.Duration(i)*time.Second), time.Duration(i+1)*time.Millisecond, i%10 == 0)
	}
	p := Page{Verb: "gateway", Version: "test", Now: now, Started: now.Add(-time.Hour),
		Backends: []Backend{
			{Status: gateway.Status{Name: "good", State: gateway.Up, PID: 42, Protocol: "2025-11-25", Since: now.Add(-time.Minute), Tools: 3}},
			{Status: gateway.Status{Name: "gh", State: gateway.Up, Auth: gateway.AuthUser, Callers: 1,
				RecentCallers: []gateway.CallerStatus{{Principal: "sub:<alice>", LastUsed: now}}}},
			{Status: gateway.Status{Name: "b<i>", State: gateway.Restarting, Restarts: 1, MaxRestarts: 5, RestartWindow: time.Minute,
				RecentRestarts: []gateway.Restart{{At: now.Add(-10 * time.Second), Cause: "exited", Reason: `exit 1: <img src=x onerror=alert(1)>`}},
				Stderr:         []string{`<script>alert("pwned")</script>`, "plain line"}},
				Minutes: calls.Recent("b<i>", now)},
		},
		Tasks:         &taskrun.Counts{Working: 2, Completed: 5},
		OAuthRefusals: map[string]uint64{"invalid_token": 3},
	}
	var b bytes.Buffer
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, bad := range []string{"<script>", "<img", "<i>", "<alice>"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q as markup:\n%s", bad, html)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;",
		`data-backend="good" data-state="up"`, `data-backend="b&lt;i&gt;" data-state="restarting"`, "<svg", "invalid_token", "1 of 5 within 1m0s",
		`data-auth="user">user (callers: 1)`, `data-principal="sub:&lt;alice&gt;" data-auth="user"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q:\n%s", want, html)
		}
	}
}

// TestCallsPercentiles: the minutes hold the calls recorded in them, and
// their percentiles are within the histogram's factor of the truth.
func TestCallsPercentiles(t *testing.T) {
	now := time.Date(2026, 11, 28, 5, 0, 30, 0, time.UTC)
	var c Calls
	for i := 1; i <= 1000; i++ {
		c.Record("b", now, time.Duration(i)*time.Millisecond, i > 990)
	}
	c.Record("b", now.Add(-2*time.Minute), time.Millisecond, false)
	c.Record("b", now.Add(-time.Hour), time.Millisecond, false) // long gone
	ms := c.Recent("b", now)
	if len(ms) != Minutes {
		t.Fatalf("%d minutes", len(ms))
	}
	last, earlier := ms[len(ms)-1], ms[len(ms)-3]
	if last.Calls != 1000 || last.Errors != 10 || earlier.Calls != 1 {
		t.Fatalf("last %+v, two before %+v", last, earlier)
	}
	total := 0
	for _, m := range ms {
		total += m.Calls
	}
	if total != 1001 {
		t.Errorf("calls over the window: %d, want 1001", total)
	}
	for _, q := range []struct {
		got, want time.Duration
	}{{last.P50, 500 * time.Millisecond}, {last.P90, 900 * time.Millisecond}, {last.P99, 990 * time.Millisecond}} {
		if q.got < q.want || q.got > q.want*142/100 {
			t.Errorf("percentile %v, want within √2 above %v", q.got, q.want)
		}
	}
}

// TestHandlerHeaders: the page forbids scripts and frames, and answers
// GET and HEAD only.
func TestHandlerHeaders(t *testing.T) {
	h := Handler(func() Page { return Page{Verb: "serve", Now: time.Now(), Started: time.Now()} })
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/status", nil))
	if w.Code != 200 || !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'none'") ||
		w.Header().Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(w.Body.String(), "Tasks are off") {
		t.Errorf("GET: %d %v\n%s", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/status", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}
}

// BenchmarkCallsRecord: what -http-status adds to each forwarded call.
func BenchmarkCallsRecord(b *testing.B) {
	var c Calls
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Record("backend", now, time.Duration(i%5000)*time.Microsecond, i%50 == 0)
	}
}

// BenchmarkRender: one status page of four backends with a full window.
func BenchmarkRender(b *testing.B) {
	now := time.Now()
	var c Calls
	for i := range 10000 {
		c.Record("b", now.Add(-time.Duration(i)*100*time.Millisecond), time.Duration(i%5000)*time.Microsecond, false)
	}
	p := Page{Verb: "mcprt gateway", Now: now, Started: now.Add(-time.Hour)}
	for range 4 {
		p.Backends = append(p.Backends, Backend{Status: gateway.Status{Name: "b", State: gateway.Up, Stderr: []string{"a line", "another"}}, Minutes: c.Recent("b", now)})
	}
	b.ReportAllocs()
	for b.Loop() {
		var w bytes.Buffer
		if err := Render(&w, p); err != nil {
			b.Fatal(err)
		}
	}
}
