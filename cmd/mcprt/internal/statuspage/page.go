// Package statuspage is the page -http-status serves: a server-rendered
// HTML view of a serving mcprt (the gateway's backends, the tasks, the
// sessions) for a person, where -http-metrics is for a scraper. The page
// is html/template over a snapshot (Page, a value), with its charts drawn
// by svgchart; it has no script, and its Content-Security-Policy allows
// none, so what a backend writes (its stderr, its reasons) is shown as
// text whatever it holds. It refreshes itself every few seconds with a
// meta refresh.
package statuspage

import (
	"bytes"
	"embed"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/svgchart"
	"github.com/mcprt/mcprt/runtime/gateway"
	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

// Page is what the page shows, taken at Now.
type Page struct {
	Verb    string // "mcprt gateway" or "mcprt serve"
	Version string
	Now     time.Time
	Started time.Time
	// Backends are the gateway's, in configuration order (none for
	// serve), with their recent calls.
	Backends []Backend
	// Tasks are the tasks by state; nil when tasks are off.
	Tasks *taskrun.Counts
	// Sessions are the HTTP endpoint's counts; Busy the requests its
	// sessions refused as busy (past their in-flight and queue bounds).
	Sessions streamhttp.Stats
	Busy     uint64
	// OAuthRefusals are the requests the OAuth guard refused, by reason;
	// nil when there is no guard.
	OAuthRefusals map[string]uint64
}

// Backend is one backend of the gateway and its calls minute by minute
// (Calls.Recent).
type Backend struct {
	gateway.Status
	Minutes []Minute
}

// Uptime is how long the backend has been up (0 when it is not).
func (b Backend) Uptime(now time.Time) time.Duration {
	if b.Since.IsZero() {
		return 0
	}
	return now.Sub(b.Since)
}

// CallsPerMinute and ErrorsPerMinute are the averages over the last
// five minutes, the current one included.
func (b Backend) CallsPerMinute() float64 { return b.perMinute(func(m Minute) int { return m.Calls }) }

func (b Backend) ErrorsPerMinute() float64 {
	return b.perMinute(func(m Minute) int { return m.Errors })
}

func (b Backend) perMinute(of func(Minute) int) float64 {
	recent := b.Minutes[max(len(b.Minutes)-5, 0):]
	if len(recent) == 0 {
		return 0
	}
	n := 0
	for _, m := range recent {
		n += of(m)
	}
	return float64(n) / float64(len(recent))
}

// Chart draws the backend's latency percentiles minute by minute, as SVG.
func (b Backend) Chart() template.HTML {
	var p50, p90, p99 []svgchart.Point
	for i, m := range b.Minutes {
		if m.Calls == 0 {
			continue
		}
		x := float64(i - (len(b.Minutes) - 1)) // minutes ago, the current one 0
		p50 = append(p50, svgchart.Point{X: x, Y: ms(m.P50)})
		p90 = append(p90, svgchart.Point{X: x, Y: ms(m.P90)})
		p99 = append(p99, svgchart.Point{X: x, Y: ms(m.P99)})
	}
	if len(p50) == 0 {
		return ""
	}
	c := svgchart.Chart{Title: "latency, last " + strconv.Itoa(Minutes) + " minutes", XLabel: "minutes ago", YLabel: "ms (log)",
		Width: 420, Height: 180, LogY: true, XFrom: -(Minutes - 1), XTo: 0,
		Series: []svgchart.Series{{Name: "p50", Points: p50}, {Name: "p90", Points: p90}, {Name: "p99", Points: p99}}}
	// svgchart escapes every text it writes, and writes no script.
	return template.HTML(c.SVG())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

//go:embed page.html
var files embed.FS

// page is parsed on first use, not at start: every mcprt process would
// pay for it (0.3 ms and 1,000 allocations of its start-up, by
// GODEBUG=inittrace=1), and few serve the page.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page.html").Funcs(template.FuncMap{
		"dur": func(d time.Duration) string {
			switch {
			case d <= 0:
				return "–"
			case d < time.Minute:
				return d.Round(time.Second).String()
			}
			return d.Round(time.Minute).String()
		},
		"clock": func(t time.Time) string { return t.UTC().Format("15:04:05 UTC") },
		"rate":  func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
		"reverse": func(rs []gateway.Restart) []gateway.Restart {
			rs = slices.Clone(rs)
			slices.Reverse(rs)
			return rs
		},
		"reasons": func(m map[string]uint64) []string {
			ks := make([]string, 0, len(m))
			for k := range m {
				ks = append(ks, k)
			}
			slices.Sort(ks)
			return ks
		},
	}).ParseFS(files, "page.html"))
})

// Render writes p as the HTML page.
func Render(w io.Writer, p Page) error { return page().Execute(w, p) }

// Handler serves the page of snapshot() to GET and HEAD; the caller puts
// it behind what protects it (see mcprt's -http-status).
func Handler(snapshot func() Page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		var b bytes.Buffer
		if err := Render(&b, snapshot()); err != nil {
			http.Error(w, "Internal Server Error: the status page could not be rendered", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		// No script may run, whatever reached the page; inline styles
		// only; no frame may hold it.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method == http.MethodGet {
			w.Write(b.Bytes())
		}
	})
}
