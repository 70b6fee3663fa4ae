package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/loadgen"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/session/sse"
)

// bench -url measures a Streamable HTTP server with its own load loop: the
// stdio load generator owns a process and its pipes, which HTTP has none
// of. K clients each send one call at a time (a closed loop: the next call
// goes when the answer has come), for each K of -k; each client of the
// legacy era has a session of its own (initialize, then DELETE at the end
// of the phase), 2026-07-28 clients share the stateless endpoint.

// httpBench are the settings only bench -url has.
type httpBench struct {
	url    string
	pid    int // the server's, for its CPU time; 0: not measured
	header http.Header
}

// HTTPBenchResult is what bench -url measured.
type HTTPBenchResult struct {
	URL      string           `json:"url"`
	Server   string           `json:"server"`
	Era      string           `json:"era"`
	Version  string           `json:"version"`
	Call     string           `json:"call"`
	PhaseSec float64          `json:"phaseSec"`
	PID      int              `json:"pid,omitempty"`
	Phases   []HTTPBenchPhase `json:"phases"`
}

// HTTPBenchPhase is one K: completed calls per second over the timed part
// of the phase, the latency of those calls, and the server's CPU per call.
type HTTPBenchPhase struct {
	K            int     `json:"k"`
	Calls        int     `json:"calls"`
	ReqPerSec    float64 `json:"reqPerSec"`
	P50Us        float64 `json:"p50Us"`
	P90Us        float64 `json:"p90Us"`
	P99Us        float64 `json:"p99Us"`
	MaxUs        float64 `json:"maxUs"`
	CPUUsPerCall float64 `json:"cpuUsPerCall,omitempty"`
	// sorted are the calls' latencies, ascending, for bench -svg.
	sorted []time.Duration
}

// benchCall is the timed request, as built for each call.
type benchCall struct {
	method string          // tools/call, ping or server/discover
	tool   string          // for tools/call
	args   json.RawMessage // for tools/call
	echo   string          // the text echo must give back ("" when not echo)
	meta   json.RawMessage // 2026-07-28 _meta
	ver    string          // the protocol version header
}

func (bc benchCall) String() string {
	if bc.method == "tools/call" {
		return "tools/call " + bc.tool + " " + string(bc.args)
	}
	return bc.method
}

// body is the request with id.
func (bc benchCall) body(id int64) []byte {
	params := map[string]json.RawMessage{}
	if bc.method == "tools/call" {
		params["name"] = mustJSON(bc.tool)
		params["arguments"] = bc.args
	}
	if bc.meta != nil {
		params["_meta"] = bc.meta
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": bc.method, "params": params})
	return b
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// benchHTTP runs bench -url and prints its results.
func benchHTTP(hb httpBench, cfg loadgen.Config, asJSON, quiet bool, svgPath string, stdout, stderr io.Writer, progress *progress) int {
	start := time.Now()
	res, err := runHTTPBench(context.Background(), hb, cfg)
	progress.clear()
	if res != nil {
		var werr error
		if asJSON {
			b, _ := json.MarshalIndent(res, "", "  ")
			_, werr = stdout.Write(append(b, '\n'))
		} else {
			werr = writeHTTPTable(stdout, res)
		}
		if werr == nil && svgPath != "" {
			var ls []loadgen.Latencies
			for _, ph := range res.Phases {
				ls = append(ls, loadgen.Latencies{Phase: fmt.Sprintf("k=%d", ph.K), Sorted: ph.sorted})
			}
			werr = writeLatencySVG(svgPath, res.URL, ls)
		}
		if werr != nil {
			fmt.Fprintf(stderr, "mcprt bench: writing the results: %v\n", werr)
			return 1
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcprt bench: FAILED after %.1f s: %v\n", time.Since(start).Seconds(), err)
		return 1
	}
	if !quiet {
		fmt.Fprintf(stderr, "mcprt bench: done in %.1f s\n", time.Since(start).Seconds())
	}
	return 0
}

// runHTTPBench settles the era and the call with the client package, then
// times each K. What was measured before a failure is returned with it.
func runHTTPBench(ctx context.Context, hb httpBench, cfg loadgen.Config) (*HTTPBenchResult, error) {
	say := func(msg string) {
		if cfg.Progress != nil {
			cfg.Progress(msg, false)
		}
	}
	say("connecting to " + hb.url)
	era, _ := map[string]client.Era{"auto": client.EraAuto, "legacy": client.EraLegacy, "modern": client.EraModern}[cfg.Era]
	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	c, err := client.ConnectURL(cctx, hb.url, &client.Options{Era: era, Version: cfg.Version, Header: hb.header,
		ClientInfo: mcp.Implementation{Name: "mcprt-bench", Version: version}, Timeout: cfg.Timeout,
		Logger: slog.New(slog.DiscardHandler), CloseGrace: time.Second})
	if err != nil {
		return nil, err
	}
	res := &HTTPBenchResult{URL: hb.url, Era: c.Era().String(), Version: c.ProtocolVersion(),
		Server:   strings.TrimSpace(c.ServerInfo().Name + " " + c.ServerInfo().Version),
		PhaseSec: cfg.Duration.Seconds(), PID: hb.pid}
	bc := benchCall{ver: c.ProtocolVersion()}
	switch {
	case cfg.Ping:
	case cfg.Tool != "":
		bc.method, bc.tool, bc.args = "tools/call", cfg.Tool, cfg.Args
		if bc.args == nil {
			bc.args = json.RawMessage(`{}`)
		}
	default:
		tools, err := c.ListTools(cctx)
		if err != nil {
			c.Close()
			return nil, err
		}
		if slices.ContainsFunc(tools, func(t mcp.Tool) bool { return t.Name == "echo" }) {
			bc.method, bc.tool, bc.args, bc.echo = "tools/call", "echo", json.RawMessage(`{"text":"hi"}`), "hi"
		}
	}
	if bc.method == "" {
		bc.method = "ping"
	}
	if c.Era() == client.EraModern {
		if bc.method == "ping" {
			bc.method = "server/discover" // 2026-07-28 has no ping
		}
		bc.meta = mustJSON(map[string]any{
			"io.modelcontextprotocol/protocolVersion":    bc.ver,
			"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "mcprt-bench", "version": version},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		})
	}
	res.Call = bc.String()
	_ = c.Close()

	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxK
	hc := &http.Client{Transport: t}
	defer t.CloseIdleConnections()
	for _, k := range cfg.Ks {
		say(fmt.Sprintf("K=%d clients, %v", k, cfg.Duration))
		ph, err := benchPhase(ctx, hc, hb, bc, k, cfg)
		if err != nil {
			return res, fmt.Errorf("K=%d: %w", k, err)
		}
		res.Phases = append(res.Phases, *ph)
	}
	return res, nil
}

// benchWorker is one of the K clients.
type benchWorker struct {
	hc      *http.Client
	hb      httpBench
	bc      benchCall
	timeout time.Duration
	session string
	nextID  int64
	lat     []time.Duration // calls that ended inside the timed window
}

func benchPhase(ctx context.Context, hc *http.Client, hb httpBench, bc benchCall, k int, cfg loadgen.Config) (*HTTPBenchPhase, error) {
	workers := make([]*benchWorker, k)
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	var wg sync.WaitGroup
	for i := range workers {
		workers[i] = &benchWorker{hc: hc, hb: hb, bc: bc, timeout: cfg.Timeout}
		if bc.meta == nil {
			wg.Go(func() {
				if err := workers[i].initialize(ctx); err != nil {
					fail(fmt.Errorf("opening a session: %w", err))
				}
			})
		}
	}
	wg.Wait()
	defer func() {
		// Sessions are ended, whatever happened; bounded by -timeout each.
		var ends sync.WaitGroup
		for _, w := range workers {
			if w.session != "" {
				ends.Go(func() { w.end(ctx) })
			}
		}
		ends.Wait()
	}()
	if firstErr != nil {
		return nil, firstErr
	}

	var stop atomic.Bool
	var windowStart, windowEnd atomic.Int64 // UnixNano; 0 until set
	var done atomic.Int64                   // calls that ended inside the window
	for _, w := range workers {
		wg.Go(func() {
			for !stop.Load() {
				t0 := time.Now()
				if err := w.call(ctx); err != nil {
					fail(err)
					stop.Store(true)
					return
				}
				t1 := time.Now()
				// Throughput counts the calls that ended in the window,
				// latency those that ran wholly inside it.
				if ws := windowStart.Load(); ws != 0 && t1.UnixNano() >= ws {
					if we := windowEnd.Load(); we == 0 || t1.UnixNano() <= we {
						done.Add(1)
						if t0.UnixNano() >= ws {
							w.lat = append(w.lat, t1.Sub(t0))
						}
					}
				}
			}
		})
	}
	warm := cfg.Duration / 5
	sleepUnless := func(d time.Duration) {
		deadline := time.Now().Add(d)
		for !stop.Load() && time.Now().Before(deadline) {
			time.Sleep(min(10*time.Millisecond, time.Until(deadline)))
		}
	}
	sleepUnless(warm)
	cpu0, cpuErr := procCPU(hb.pid)
	t0 := time.Now()
	windowStart.Store(t0.UnixNano())
	sleepUnless(cfg.Duration - warm)
	t1 := time.Now()
	windowEnd.Store(t1.UnixNano())
	cpu1, cpuErr1 := procCPU(hb.pid)
	stop.Store(true)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	var lat []time.Duration
	for _, w := range workers {
		lat = append(lat, w.lat...)
	}
	if len(lat) == 0 {
		return nil, errors.New("no call completed inside the timed window (raise -duration)")
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(int(p*float64(len(lat))), len(lat)-1)]) / float64(time.Microsecond)
	}
	ph := &HTTPBenchPhase{K: k, Calls: len(lat), ReqPerSec: float64(done.Load()) / t1.Sub(t0).Seconds(),
		P50Us: pct(0.50), P90Us: pct(0.90), P99Us: pct(0.99), MaxUs: float64(lat[len(lat)-1]) / float64(time.Microsecond), sorted: lat}
	if hb.pid != 0 && cpuErr == nil && cpuErr1 == nil {
		ph.CPUUsPerCall = float64(cpu1-cpu0) / float64(time.Microsecond) / float64(len(lat))
	}
	return ph, nil
}

// post sends one message and returns the answer's JSON-RPC messages (one
// for a JSON body, each event's for an SSE stream) and its headers.
func (w *benchWorker) post(ctx context.Context, body []byte, method, name string) ([][]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.hb.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range w.hb.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if w.bc.meta != nil {
		req.Header.Set("Mcp-Protocol-Version", w.bc.ver)
		if method != "" {
			req.Header.Set("Mcp-Method", method)
		}
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else {
		if w.session != "" {
			req.Header.Set("Mcp-Session-Id", w.session)
		}
		if method != "initialize" {
			req.Header.Set("Mcp-Protocol-Version", w.bc.ver)
		}
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, resp.Header, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		return [][]byte{b}, resp.Header, err
	}
	var msgs [][]byte
	r := sse.NewReader(resp.Body, 64<<20)
	for {
		data, err := r.Next()
		if errors.Is(err, io.EOF) {
			return msgs, resp.Header, nil
		}
		if err != nil {
			return msgs, resp.Header, err
		}
		msgs = append(msgs, data)
	}
}

// answer finds the response with id among msgs and checks it.
func answer(msgs [][]byte, id int64) (json.RawMessage, error) {
	for _, m := range msgs {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(m, &r) != nil || string(r.ID) != strconv.FormatInt(id, 10) {
			continue
		}
		if r.Error != nil {
			return nil, fmt.Errorf("error response: %s", r.Error)
		}
		return r.Result, nil
	}
	return nil, fmt.Errorf("no response with id %d in the answer", id)
}

func (w *benchWorker) initialize(ctx context.Context) error {
	w.nextID++
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": w.nextID, "method": "initialize", "params": map[string]any{
		"protocolVersion": w.bc.ver, "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "mcprt-bench", "version": version}}})
	msgs, hdr, err := w.post(ctx, body, "initialize", "")
	if err != nil {
		return err
	}
	if _, err := answer(msgs, w.nextID); err != nil {
		return err
	}
	w.session = hdr.Get("Mcp-Session-Id")
	_, _, err = w.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "", "")
	return err
}

// end ends the worker's session (DELETE).
func (w *benchWorker) end(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, w.hb.url, nil)
	if err != nil {
		return
	}
	for k, vs := range w.hb.header {
		req.Header[k] = vs
	}
	req.Header.Set("Mcp-Session-Id", w.session)
	if resp, err := w.hc.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// call makes the timed call once and checks its answer: a result, no
// isError, and for echo the text sent.
func (w *benchWorker) call(ctx context.Context) error {
	w.nextID++
	msgs, _, err := w.post(ctx, w.bc.body(w.nextID), w.bc.method, w.bc.tool)
	if err != nil {
		return fmt.Errorf("%s: %w", w.bc, err)
	}
	res, err := answer(msgs, w.nextID)
	if err != nil {
		return fmt.Errorf("%s: %w", w.bc, err)
	}
	if w.bc.method != "tools/call" {
		return nil
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("%s: result %s: %w", w.bc, res, err)
	}
	if r.IsError {
		return fmt.Errorf("%s: the tool reported an error: %s", w.bc, res)
	}
	if w.bc.echo != "" && (len(r.Content) != 1 || r.Content[0].Text != w.bc.echo) {
		return fmt.Errorf("%s: echo answered %s", w.bc, res)
	}
	return nil
}

// procCPU is ProcCPU, with 0 and no error when no pid was given.
func procCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, nil
	}
	return loadgen.ProcCPU(pid)
}

func writeHTTPTable(w io.Writer, res *HTTPBenchResult) error {
	fmt.Fprintf(w, "%s at %s, %s era (%s); timed call: %s\n", cmp.Or(res.Server, "server"), res.URL, res.Era, res.Version, res.Call)
	how := "each client its own session"
	if res.Era == "modern" {
		how = "stateless"
	}
	fmt.Fprintf(w, "%gs per K, first fifth warm-up; K clients, one call at a time each (%s)\n\n", res.PhaseSec, how)
	rows := [][]string{{"K", "req/s", "p50", "p90", "p99", "max", "calls"}}
	if res.PID != 0 {
		rows[0] = append(rows[0], "server CPU/call")
	}
	ms := func(us float64) string { return strconv.FormatFloat(us/1000, 'f', 2, 64) + " ms" }
	for _, p := range res.Phases {
		r := []string{strconv.Itoa(p.K), strconv.FormatFloat(p.ReqPerSec, 'f', 0, 64), ms(p.P50Us), ms(p.P90Us), ms(p.P99Us), ms(p.MaxUs), strconv.Itoa(p.Calls)}
		if res.PID != 0 {
			r = append(r, strconv.FormatFloat(p.CPUUsPerCall, 'f', 1, 64)+" µs")
		}
		rows = append(rows, r)
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			b.WriteString(c)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
