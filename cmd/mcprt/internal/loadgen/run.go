// Package loadgen is the load generator behind `mcprt bench`: it drives any
// MCP server that speaks newline-delimited JSON-RPC on stdin/stdout and
// measures what a client feels (cold start, round-trip latency, pipelined
// throughput, payload throughput) and what the server costs (CPU per call
// and resident memory, read from /proc, so Linux only).
//
// Every response is checked (valid JSON, an id that was outstanding, the
// echoed text): a fast server that answers wrongly is a failure, not a
// figure.
package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// Phases that Config.Skip may name.
const (
	PhaseCold    = "cold"
	PhaseSeq     = "seq"
	PhasePipe    = "pipe"
	PhasePayload = "payload"
)

// Eras.
const (
	EraLegacy = "legacy" // initialize handshake, one negotiated revision
	EraModern = "modern" // 2026-07-28: server/discover, _meta on every request
)

// Config is one benchmark run. Zero values take the defaults noted.
type Config struct {
	// Argv is the server command; Env its environment (nil: inherited).
	Argv []string
	Env  []string
	// Era is EraLegacy (default) or EraModern; Version the revision asked
	// for (default DefaultLegacyVersion or ModernVersion). With
	// RequireVersion, a legacy server that answers initialize with another
	// revision fails the run instead of being measured in that one (a
	// modern server must always list Version).
	Era            string
	Version        string
	RequireVersion bool
	// Tool is the tool the latency and throughput phases call, with Args
	// (a JSON object). Empty Tool: echo when the server lists it, else the
	// ping method (legacy) or server/discover (modern). Ping forces that.
	Tool string
	Args json.RawMessage
	Ping bool
	// Ks are the in-flight depths of the pipelined phase (default 1,16,256).
	Ks []int
	// Duration is the length of each timed phase: the sequential run, each
	// K, each payload size (default 3s). The first fifth of each is warm-up.
	Duration time.Duration
	// ColdStarts is how many fresh processes time spawn → handshake reply
	// (default 20).
	ColdStarts int
	// Payloads are the echo text sizes of the payload phase (default 64 KiB
	// and 1 MiB).
	Payloads []int
	// Timeout fails the run when the server makes no progress for this long
	// while an answer is due (default 10s).
	Timeout time.Duration
	// Skip names phases not to run (PhaseCold, PhaseSeq, ...).
	Skip map[string]bool
	// Progress, when set, is told what is happening: once per phase with
	// live false, and about four times a second with a running figure
	// (live true).
	Progress func(msg string, live bool)
}

// Defaults of Config.
var (
	DefaultKs       = []int{1, 16, 256}
	DefaultPayloads = []int{64 << 10, 1 << 20}
)

const (
	DefaultDuration   = 3 * time.Second
	DefaultColdStarts = 20
	DefaultTimeout    = 10 * time.Second
	// idleSettle is how long the server is left alone after the handshake
	// before its idle RSS is read, so start-up garbage has been collected.
	idleSettle = 300 * time.Millisecond
	// exitGrace is how long the server may take to exit after stdin EOF.
	exitGrace = 5 * time.Second
)

// Result holds every figure of a run. Durations are in the unit their name
// says; a phase that did not run is absent (nil or empty).
type Result struct {
	Command  []string `json:"command"`
	Era      string   `json:"era"`
	Version  string   `json:"protocol_version"`
	Server   string   `json:"server,omitempty"` // serverInfo name and version
	Call     string   `json:"call"`             // the timed request
	PhaseSec float64  `json:"phase_seconds"`

	ColdStart  *ColdStart `json:"cold_start,omitempty"`
	IdleRSSKiB int64      `json:"idle_rss_kib,omitempty"`
	// IdleFileKiB is the part of IdleRSSKiB that is mapped file pages
	// (RssFile), mostly the executable's own: shared, clean page cache
	// that grows with the binary, not with what the server allocates.
	IdleFileKiB int64       `json:"idle_file_kib,omitempty"`
	Sequential  *Sequential `json:"sequential,omitempty"`
	Pipelined   []Pipelined `json:"pipelined,omitempty"`
	Payload     []Payload   `json:"payload,omitempty"`
	PeakRSSKiB  int64       `json:"peak_rss_kib,omitempty"`

	// ExitAfterEOF is how the server ended once its stdin was closed.
	ExitAfterEOF string   `json:"exit_after_eof,omitempty"`
	Notes        []string `json:"notes,omitempty"`
	// Failure is why the run stopped early, if it did.
	Failure string `json:"failure,omitempty"`
	// Latencies are the round trips of the phases timed one call at a
	// time (seq, each payload size), sorted, for a chart of their
	// distribution (mcprt bench -svg); not in the JSON.
	Latencies []Latencies `json:"-"`
}

// Latencies are one phase's round trips, sorted ascending.
type Latencies struct {
	Phase  string
	Sorted []time.Duration
}

// ColdStart is spawn → handshake reply over fresh processes.
type ColdStart struct {
	Runs  int     `json:"runs"`
	P50Ms float64 `json:"p50_ms"`
	MinMs float64 `json:"min_ms"`
	MaxMs float64 `json:"max_ms"`
}

// Sequential is one call at a time: round-trip percentiles.
type Sequential struct {
	Calls        int     `json:"calls"`
	P50Us        float64 `json:"p50_us"`
	P90Us        float64 `json:"p90_us"`
	P99Us        float64 `json:"p99_us"`
	MeanUs       float64 `json:"mean_us"`
	MaxUs        float64 `json:"max_us"`
	CPUUsPerCall float64 `json:"cpu_us_per_call"`
}

// Pipelined is a closed loop with K calls in flight at all times.
type Pipelined struct {
	K            int     `json:"k"`
	Calls        int64   `json:"calls"`
	ReqPerSec    float64 `json:"req_per_sec"`
	CPUUsPerCall float64 `json:"cpu_us_per_call"`
}

// Payload is sequential echo of a large text: MiB/s = size / median round
// trip (each byte goes in and comes back).
type Payload struct {
	Bytes     int     `json:"bytes"`
	Calls     int     `json:"calls"`
	RTTP50Ms  float64 `json:"rtt_p50_ms"`
	MiBPerSec float64 `json:"mib_per_sec"`
}

// Run benchmarks the server of cfg. It returns what it measured and, when
// the server failed (died, stalled, answered wrongly), that failure too; the
// Result is then partial, with Failure set.
func Run(cfg Config) (*Result, error) {
	cfg.defaults()
	r := &runner{cfg: cfg, res: &Result{
		Command: cfg.Argv, Era: cfg.Era, Version: cfg.Version, PhaseSec: cfg.Duration.Seconds(),
	}}
	err := r.run()
	if err != nil {
		r.res.Failure = err.Error()
	}
	return r.res, err
}

func (c *Config) defaults() {
	if c.Era == "" {
		c.Era = EraLegacy
	}
	if c.Version == "" {
		c.Version = DefaultLegacyVersion
		if c.Era == EraModern {
			c.Version = ModernVersion
		}
	}
	if c.Ks == nil {
		c.Ks = DefaultKs
	}
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
	}
	if c.ColdStarts <= 0 {
		c.ColdStarts = DefaultColdStarts
	}
	if c.Payloads == nil {
		c.Payloads = DefaultPayloads
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Progress == nil {
		c.Progress = func(string, bool) {}
	}
}

type runner struct {
	cfg  Config
	res  *Result
	meta []byte // _meta of every modern request; nil in the legacy era

	p      *proc
	nextID int64
	call   request
	want   expect
	echo   bool // the server lists echo: the payload phase can run

	noProc   bool     // /proc cannot be read: no CPU figures
	resp     response // scratch
	lastLive time.Time
}

func (r *runner) run() error {
	if r.cfg.Era == EraModern {
		r.meta = metaObject(r.cfg.Version)
	}
	if !r.cfg.Skip[PhaseCold] {
		if err := r.coldStarts(); err != nil {
			return fmt.Errorf("cold start: %w", err)
		}
	}
	r.cfg.Progress("starting the server", false)
	p, err := spawn(r.cfg.Argv, r.cfg.Env, r.cfg.Timeout)
	if err != nil {
		return err
	}
	r.p = p
	defer func() {
		if r.res.ExitAfterEOF == "" {
			p.kill()
		}
	}()
	if _, err := r.handshake(p, true); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if err := r.chooseCall(); err != nil {
		return err
	}
	time.Sleep(idleSettle)
	if err := r.alive(); err != nil {
		return err
	}
	r.res.IdleRSSKiB, _ = p.statusKiB("VmRSS")
	r.res.IdleFileKiB, _ = p.statusKiB("RssFile")

	if !r.cfg.Skip[PhaseSeq] {
		if err := r.sequential(); err != nil {
			return fmt.Errorf("sequential: %w", err)
		}
	}
	if !r.cfg.Skip[PhasePipe] {
		for _, k := range r.cfg.Ks {
			if err := r.pipelined(k); err != nil {
				return fmt.Errorf("pipelined K=%d: %w", k, err)
			}
		}
	}
	if !r.cfg.Skip[PhasePayload] && len(r.cfg.Payloads) > 0 {
		if !r.echo {
			r.res.Notes = append(r.res.Notes, "payload phase skipped: the server lists no echo tool")
		}
		for _, size := range r.cfg.Payloads {
			if !r.echo {
				break
			}
			if err := r.payload(size); err != nil {
				return fmt.Errorf("payload %s: %w", SizeName(size), err)
			}
		}
	}
	if err := r.alive(); err != nil {
		return err
	}
	r.res.PeakRSSKiB, _ = p.statusKiB("VmHWM")
	r.cfg.Progress("closing stdin", false)
	r.res.ExitAfterEOF = p.finish(exitGrace)
	return nil
}

// cpu is the server's CPU time so far, or 0 where /proc cannot say (then
// the CPU figures are 0 and a note says why).
func (r *runner) cpu() time.Duration {
	d, err := r.p.cpu()
	if err != nil {
		if !r.noProc {
			r.noProc = true
			r.res.Notes = append(r.res.Notes, "server CPU not measured: "+err.Error())
		}
		return 0
	}
	return d
}

// alive fails when the server exited between two exchanges.
func (r *runner) alive() error {
	select {
	case <-r.p.exited:
		return fmt.Errorf("the server exited (%s)%s", r.p.describeExit(), r.p.stderrHint())
	default:
		return nil
	}
}

// live reports a running figure at most four times a second.
func (r *runner) live(now time.Time, format string, a ...any) {
	if now.Sub(r.lastLive) >= 250*time.Millisecond {
		r.lastLive = now
		r.cfg.Progress(fmt.Sprintf(format, a...), true)
	}
}

func (r *runner) id() int64 {
	r.nextID++
	return r.nextID
}

// coldStarts times spawn → handshake reply on fresh processes.
func (r *runner) coldStarts() error {
	n := r.cfg.ColdStarts
	r.cfg.Progress(fmt.Sprintf("cold start: %d fresh processes", n), false)
	var ds []time.Duration
	for i := range n {
		p, err := spawn(r.cfg.Argv, r.cfg.Env, r.cfg.Timeout)
		if err != nil {
			return err
		}
		d, err := r.handshake(p, false)
		if err != nil {
			p.kill()
			return err
		}
		// Reap it before the next spawn so runs do not overlap.
		p.finish(time.Second)
		ds = append(ds, d)
		r.live(time.Now(), "cold start: %d/%d, last %.2f ms", i+1, n, ms(d))
	}
	slices.Sort(ds)
	r.res.ColdStart = &ColdStart{Runs: n, P50Ms: round(ms(ds[len(ds)/2])), MinMs: round(ms(ds[0])), MaxMs: round(ms(ds[len(ds)-1]))}
	return nil
}

// handshake opens the session: initialize + notifications/initialized, or
// server/discover in the modern era. It returns the time from spawn to the
// reply and, when record is set, keeps what the server said about itself.
func (r *runner) handshake(p *proc, record bool) (time.Duration, error) {
	var req request
	if r.meta != nil {
		req = newRequest("server/discover", nil, r.meta)
	} else {
		params, _ := json.Marshal(map[string]any{
			"protocolVersion": r.cfg.Version,
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]string{"name": clientName, "version": "1.0.0"},
		})
		req = newRequest("initialize", params, nil)
	}
	if err := p.send(req.append(nil, 0)); err != nil {
		return 0, err
	}
	rs, err := r.await(p, 0)
	if err != nil {
		return 0, err
	}
	d := time.Since(p.started)
	if rs.errObj != nil || rs.result == nil || rs.result[0] != '{' {
		return d, fmt.Errorf("bad reply: %s", describe(rs))
	}
	var res struct {
		ProtocolVersion   string                     `json:"protocolVersion"`
		ServerInfo        *serverInfo                `json:"serverInfo"`
		SupportedVersions []string                   `json:"supportedVersions"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(rs.result, &res); err != nil {
		return d, fmt.Errorf("bad reply: %v", err)
	}
	if r.meta != nil {
		if !slices.Contains(res.SupportedVersions, r.cfg.Version) {
			return d, fmt.Errorf("server/discover lists %v, not %s", res.SupportedVersions, r.cfg.Version)
		}
		var info serverInfo
		if json.Unmarshal(res.Meta["io.modelcontextprotocol/serverInfo"], &info) == nil {
			res.ServerInfo = &info
		}
		res.ProtocolVersion = r.cfg.Version
	} else {
		if res.ProtocolVersion == "" {
			return d, errors.New("the initialize result has no protocolVersion")
		}
		if r.cfg.RequireVersion && res.ProtocolVersion != r.cfg.Version {
			return d, fmt.Errorf("the server answered protocol version %q; %s was required", res.ProtocolVersion, r.cfg.Version)
		}
		if err := p.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
			return d, err
		}
	}
	if record {
		r.res.Version = res.ProtocolVersion
		if res.ServerInfo != nil {
			r.res.Server = res.ServerInfo.Name + " " + res.ServerInfo.Version
		}
	}
	return d, nil
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// await reads until the response to id, skipping the server's own
// requests and notifications. Anything else is a failure: in the phases
// that use await only id can be outstanding.
func (r *runner) await(p *proc, id int64) (*response, error) {
	rs := &r.resp
	for {
		line, err := p.lr.next()
		if err != nil {
			return nil, p.ioError("waiting for a response", err)
		}
		if err := parseResponse(line, rs); err != nil {
			return nil, fmt.Errorf("unreadable line from the server (%v): %q", err, clip(string(line), 120))
		}
		switch {
		case rs.method:
			continue
		case !rs.idOK || rs.id != id:
			return nil, fmt.Errorf("a response with id %s while only %d was outstanding: %s", rs.rawID, id, clip(string(line), 200))
		}
		return rs, nil
	}
}

func describe(rs *response) string {
	if rs.errObj != nil {
		msg, _ := jsonrpc.Unquote(rs.errMsg)
		return fmt.Sprintf("JSON-RPC error %d %q", rs.errCode, clip(msg, 200))
	}
	return clip(string(rs.result), 200)
}

// chooseCall picks the timed request: the configured tool, else echo when
// listed, else ping (server/discover in the modern era).
func (r *runner) chooseCall() error {
	tools, err := r.listTools()
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	r.echo = slices.Contains(tools, "echo")
	tool := r.cfg.Tool
	if tool == "" && r.echo && !r.cfg.Ping {
		tool = "echo"
	}
	if tool == "" {
		method := "ping"
		if r.meta != nil {
			method = "server/discover" // ping is gone in 2026-07-28
		}
		r.call = newRequest(method, nil, r.meta)
		r.res.Call = method
		return nil
	}
	if !slices.Contains(tools, tool) {
		return fmt.Errorf("the server lists no tool %q (it has %v)", tool, tools)
	}
	args := []byte(r.cfg.Args)
	if args == nil {
		args = []byte(`{}`)
		if tool == "echo" {
			args = []byte(`{"text":"hi"}`)
		}
	}
	if tool == "echo" {
		var a struct {
			Text *string `json:"text"`
		}
		if json.Unmarshal(args, &a) == nil && a.Text != nil {
			r.want.text, _ = json.Marshal(*a.Text)
		}
	}
	r.call = newRequest("tools/call", toolCallParams(tool, args), r.meta)
	r.res.Call = "tools/call " + tool + " " + string(args)
	return nil
}

func (r *runner) listTools() ([]string, error) {
	var names []string
	cursor := ""
	for range 100 {
		var params []byte
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		id := r.id()
		if err := r.p.send(newRequest("tools/list", params, r.meta).append(nil, id)); err != nil {
			return nil, err
		}
		rs, err := r.await(r.p, id)
		if err != nil {
			return nil, err
		}
		if rs.errObj != nil {
			if rs.errCode == -32601 { // no tools capability
				return nil, nil
			}
			return nil, errors.New(describe(rs))
		}
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(rs.result, &page); err != nil {
			return nil, err
		}
		for _, t := range page.Tools {
			names = append(names, t.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			return names, nil
		}
	}
	return names, nil
}

// window splits a phase into warm-up (the first fifth, not counted: workers
// are started, caches and the heap grow) and the measured rest.
func (r *runner) window(start time.Time) (measureFrom, end time.Time) {
	return start.Add(r.cfg.Duration / 5), start.Add(r.cfg.Duration)
}

// sequential times one call at a time for the phase duration.
func (r *runner) sequential() error {
	r.cfg.Progress(fmt.Sprintf("sequential %s for %v", r.res.Call, r.cfg.Duration), false)
	p := r.p
	buf := make([]byte, 0, 1024)
	rtts := make([]time.Duration, 0, 1<<16)
	start := time.Now()
	from, end := r.window(start)
	measuring := false
	var cpu0 time.Duration
	for {
		id := r.id()
		buf = r.call.append(buf[:0], id)
		t0 := time.Now()
		if err := p.send(buf); err != nil {
			return err
		}
		rs, err := r.await(p, id)
		now := time.Now()
		if err != nil {
			return err
		}
		if err := r.want.check(rs); err != nil {
			return fmt.Errorf("id %d: %w", id, err)
		}
		if measuring {
			rtts = append(rtts, now.Sub(t0))
		} else if !now.Before(from) {
			measuring = true
			cpu0 = r.cpu()
		}
		if !now.Before(end) && len(rtts) > 0 {
			break
		}
		if measuring {
			r.live(now, "sequential: %d calls, last %.1f µs", len(rtts), us(now.Sub(t0)))
		} else {
			r.live(now, "sequential: warming up, last %.1f µs", us(now.Sub(t0)))
		}
	}
	cpu1 := r.cpu()
	var sum time.Duration
	for _, d := range rtts {
		sum += d
	}
	slices.Sort(rtts)
	n := len(rtts)
	r.res.Latencies = append(r.res.Latencies, Latencies{Phase: PhaseSeq, Sorted: rtts})
	r.res.Sequential = &Sequential{
		Calls:        n,
		P50Us:        round(us(pct(rtts, 50))),
		P90Us:        round(us(pct(rtts, 90))),
		P99Us:        round(us(pct(rtts, 99))),
		MeanUs:       round(us(sum / time.Duration(n))),
		MaxUs:        round(us(rtts[n-1])),
		CPUUsPerCall: round(us(cpu1-cpu0) / float64(n)),
	}
	return nil
}

// pct is the nearest-rank percentile of sorted.
func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

// inlineLimit bounds the requests that may be outstanding when the reading
// goroutine also writes: they must fit in the server's stdin pipe (64 KiB
// on Linux) with room to spare, or a server blocked writing its answers and
// a client blocked writing more requests would wait for each other forever.
const inlineLimit = 32 << 10

// batch asks the writer goroutine for n requests with ids from first.
type batch struct{ first, n int64 }

// pipelined keeps k calls in flight for the phase duration: each batch of
// answers that has arrived is replaced by as many new requests, in one
// write.
func (r *runner) pipelined(k int) error {
	r.cfg.Progress(fmt.Sprintf("pipelined %s, K=%d, for %v", r.res.Call, k, r.cfg.Duration), false)
	p := r.p
	maxReq := len(r.call.append(nil, 1<<50))
	outstanding := make(map[int64]struct{}, 2*k)
	buf := make([]byte, 0, min(k*maxReq, 1<<20))
	write := func(first, n int64) error {
		buf = buf[:0]
		for id := first; id < first+n; id++ {
			buf = r.call.append(buf, id)
		}
		return p.send(buf)
	}

	// Small enough: the reader writes too, as a single-threaded client
	// does. Otherwise a writer goroutine takes the writes.
	var (
		batches chan batch
		wdone   chan error
	)
	if k*maxReq > inlineLimit {
		batches = make(chan batch, k)
		wdone = make(chan error, 1)
		wbuf := make([]byte, 0, min(k*maxReq, 1<<20))
		go func() {
			var err error
			for b := range batches {
				if err != nil {
					continue // keep draining so the reader never blocks
				}
				// Coalesce what queued up meanwhile into one write.
				first, n := b.first, b.n
			more:
				for {
					select {
					case nb, ok := <-batches:
						if !ok {
							break more
						}
						n += nb.n // ids are handed out in order
					default:
						break more
					}
				}
				wbuf = wbuf[:0]
				for id := first; id < first+n; id++ {
					wbuf = r.call.append(wbuf, id)
				}
				err = p.send(wbuf)
			}
			wdone <- err
		}()
	}
	issue := func(n int64) error {
		first := r.nextID + 1
		r.nextID += n
		for id := first; id < first+n; id++ {
			outstanding[id] = struct{}{}
		}
		if batches != nil {
			batches <- batch{first, n}
			return nil
		}
		return write(first, n)
	}
	stopWriter := func() error {
		if batches == nil {
			return nil
		}
		close(batches)
		return <-wdone
	}

	var (
		done, done0    int64
		cpu0, cpu1     time.Duration
		t0, t1         time.Time
		measuring, end bool
		rs             = &r.resp
	)
	start := time.Now()
	from, stop := r.window(start)
	fail := func(err error) error {
		if werr := stopWriter(); werr != nil {
			return werr
		}
		return err
	}
	if err := issue(int64(k)); err != nil {
		return fail(err)
	}
	for len(outstanding) > 0 {
		var n int64
		for n == 0 || p.lr.ready() {
			line, err := p.lr.next()
			if err != nil {
				return fail(p.ioError(fmt.Sprintf("waiting for %d responses", len(outstanding)), err))
			}
			if err := parseResponse(line, rs); err != nil {
				return fail(fmt.Errorf("unreadable line from the server (%v): %q", err, clip(string(line), 120)))
			}
			if rs.method {
				continue
			}
			if _, ok := outstanding[rs.id]; !rs.idOK || !ok {
				return fail(fmt.Errorf("a response with id %s, which is not outstanding: %s", rs.rawID, clip(string(line), 200)))
			}
			delete(outstanding, rs.id)
			if err := r.want.check(rs); err != nil {
				return fail(fmt.Errorf("id %d: %w", rs.id, err))
			}
			n++
		}
		done += n
		now := time.Now()
		switch {
		case !measuring && !now.Before(from):
			measuring, t0, done0 = true, now, done
			cpu0 = r.cpu()
		case measuring && !end && !now.Before(stop):
			end, t1 = true, now
			cpu1 = r.cpu()
		}
		if !end {
			if err := issue(n); err != nil {
				return fail(err)
			}
			if measuring && done > done0 {
				r.live(now, "pipelined K=%d: %.0f req/s", k, float64(done-done0)/now.Sub(t0).Seconds())
			}
		}
	}
	if err := stopWriter(); err != nil {
		return err
	}
	calls := done - done0
	// Calls completed between the two samples; the CPU between them went
	// to those calls give or take the K in flight at either edge.
	if calls == 0 {
		return errors.New("no call completed in the measured window")
	}
	r.res.Pipelined = append(r.res.Pipelined, Pipelined{
		K:            k,
		Calls:        calls,
		ReqPerSec:    float64(int64(float64(calls) / t1.Sub(t0).Seconds())),
		CPUUsPerCall: round(us(cpu1-cpu0) / float64(calls)),
	})
	return nil
}

// payload echoes a size-byte text sequentially for the phase duration, at
// least three times.
func (r *runner) payload(size int) error {
	r.cfg.Progress(fmt.Sprintf("payload: echo of %s for %v", SizeName(size), r.cfg.Duration), false)
	p := r.p
	text := randomText(size)
	want := expect{text: append(append([]byte{'"'}, text...), '"')}
	args := append(append([]byte(`{"text":`), want.text...), '}')
	q := newRequest("tools/call", toolCallParams("echo", args), r.meta)
	buf := make([]byte, 0, size+len(q.suffix)+32)
	var rtts []time.Duration
	warm := 0 // calls that ended during warm-up
	start := time.Now()
	from, end := r.window(start)
	for {
		id := r.id()
		buf = q.append(buf[:0], id)
		t0 := time.Now()
		if err := p.send(buf); err != nil {
			return err
		}
		rs, err := r.await(p, id)
		now := time.Now()
		if err != nil {
			return err
		}
		if err := want.check(rs); err != nil {
			return fmt.Errorf("id %d: %w", id, err)
		}
		rtts = append(rtts, now.Sub(t0))
		if now.Before(from) {
			warm++
		}
		if !now.Before(end) && len(rtts) >= 3 {
			break
		}
		r.live(now, "payload %s: %d calls, last %.2f ms", SizeName(size), len(rtts), ms(now.Sub(t0)))
	}
	// A server too slow for the phase keeps its warm-up calls: three
	// round trips are the least a median is taken of.
	if len(rtts)-warm >= 3 {
		rtts = rtts[warm:]
	}
	slices.Sort(rtts)
	med := rtts[len(rtts)/2]
	r.res.Latencies = append(r.res.Latencies, Latencies{Phase: PhasePayload + " " + SizeName(size), Sorted: rtts})
	r.res.Payload = append(r.res.Payload, Payload{
		Bytes:     size,
		Calls:     len(rtts),
		RTTP50Ms:  round(ms(med)),
		MiBPerSec: round(float64(size) / (1 << 20) / med.Seconds()),
	})
	return nil
}

// randomText is size letters and digits: nothing a server needs to escape,
// and nothing a compressing transport could shrink.
func randomText(size int) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rng := rand.New(rand.NewPCG(uint64(size), 1))
	b := make([]byte, size)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return b
}

// SizeName writes a byte count as people do: 64 KiB, 1 MiB, 100 B.
func SizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// round keeps three decimals: enough for any figure here, and JSON without
// noise digits.
func round(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
