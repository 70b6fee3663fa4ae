package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// httpServer is one column of the HTTP table: how to start it for an era
// (nil: it cannot serve that era). Each prints its endpoint's URL on
// stderr once it listens, and listens on a port of its own choosing.
type httpServer struct {
	name string
	argv func(era string) []string // argv[0] relative to the build directory
}

var httpServers = []httpServer{
	{"limit", func(string) []string { return []string{"limithttp"} }},
	{"mcprt", func(string) []string { return []string{"mcprt", "serve", "-http", "127.0.0.1:0"} }},
	// go-sdk serves 2026-07-28 only statelessly, and legacy sessions only
	// statefully: one mode per era, as its documentation has it.
	{"go-sdk", func(era string) []string {
		if era == "modern" {
			return []string{"gosdkhttp", "-stateless"}
		}
		return []string{"gosdkhttp"}
	}},
	{"mcp-go", func(string) []string { return []string{"mcpgohttp"} }},
}

var eras = []string{"legacy", "modern"}

// httpResult is what mcprt bench -url -json gives, with the server's peak
// RSS and what went wrong, if anything.
type httpResult struct {
	Era        string      `json:"era"`
	Version    string      `json:"version"`
	Call       string      `json:"call"`
	Phases     []httpPhase `json:"phases"`
	PeakRSSKiB float64     `json:"-"`
	// PeakAnonKiB is the most anonymous memory (RssAnon: heap, stacks,
	// runtime; not the binary's file pages) seen while the load ran,
	// sampled every 10 ms: what the server's sessions and requests cost,
	// apart from how large its binary is.
	PeakAnonKiB float64 `json:"-"`
	Failure     string  `json:"-"`
}

type httpPhase struct {
	K            int     `json:"k"`
	ReqPerSec    float64 `json:"reqPerSec"`
	P50Us        float64 `json:"p50Us"`
	P99Us        float64 `json:"p99Us"`
	CPUUsPerCall float64 `json:"cpuUsPerCall"`
}

func (r *httpResult) phase(k int) (int, bool) {
	if r == nil {
		return 0, false
	}
	i := slices.IndexFunc(r.Phases, func(p httpPhase) bool { return p.K == k })
	return i, i >= 0
}

// proc is a running server.
type proc struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	tail []string // its last stderr lines
	done chan struct{}
}

var urlRE = regexp.MustCompile(`http://\S+/mcp`)

// startServer starts argv and waits for the URL it prints on stderr.
func startServer(argv []string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = nil
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if u := urlRE.FindString(line); u != "" {
				select {
				case urlc <- u:
				default:
				}
			}
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > 20 {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case p.url = <-urlc:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before serving: %s", argv[0], p.stderrTail())
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s printed no URL within 10s: %s", argv[0], p.stderrTail())
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) stderrTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, " | ")
}

// stop sends SIGTERM, and SIGKILL if the server is still there 15s later.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// procStatus reads a field of /proc/PID/status in KiB (VmHWM, VmRSS).
func procStatus(pid int, field string) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseFloat(f[0], 64)
				return v
			}
		}
	}
	return 0
}

// procCPU is utime+stime of pid (Linux, 10 ms ticks).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// benchURL starts the server fresh, runs mcprt bench -url against it, reads
// its peak RSS, and stops it.
func benchURL(b built, argv []string, era string, dur time.Duration, ks string) (*httpResult, []byte, error) {
	argv = append([]string{b.path(argv[0])}, argv[1:]...)
	p, err := startServer(argv)
	if err != nil {
		return nil, nil, err
	}
	defer p.stop()
	cmd := exec.Command(b.path("mcprt"), "bench", "-url", p.url, "-pid", strconv.Itoa(p.pid()),
		"-era", era, "-json", "-q", "-k", ks, "-duration", dur.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stopSampling := make(chan struct{})
	peakAnon := make(chan float64, 1)
	go func() {
		peak := 0.0
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, procStatus(p.pid(), "RssAnon"))
			select {
			case <-stopSampling:
				peakAnon <- peak
				return
			case <-tick.C:
			}
		}
	}()
	runErr := cmd.Run()
	close(stopSampling)
	anon := <-peakAnon
	var res httpResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		res = httpResult{}
		res.Failure = strings.TrimSpace(stderr.String())
		if res.Failure == "" {
			res.Failure = fmt.Sprint(runErr)
		}
		return &res, stdout.Bytes(), nil
	}
	if runErr != nil {
		res.Failure = strings.TrimSpace(stderr.String())
	}
	res.PeakRSSKiB = procStatus(p.pid(), "VmHWM")
	res.PeakAnonKiB = anon
	select {
	case <-p.done:
		res.Failure = strings.TrimSpace(res.Failure + " (server exited: " + p.stderrTail() + ")")
	default:
	}
	return &res, stdout.Bytes(), nil
}

func runHTTP(b built, dur time.Duration, ks string, rounds int, out string, wrkConns int, cpuprofile string) error {
	kList, err := parseKs(ks)
	if err != nil {
		return err
	}
	if cpuprofile != "" {
		if cpuprofile, err = filepath.Abs(cpuprofile); err != nil {
			return err
		}
		if err := os.MkdirAll(cpuprofile, 0o755); err != nil {
			return err
		}
	}
	started := time.Now()
	results := map[string][]*httpResult{} // by era + "/" + server
	for r := range rounds {
		for _, era := range eras {
			for i := range httpServers {
				s := httpServers[(i+r)%len(httpServers)]
				argv := s.argv(era)
				if argv == nil {
					continue
				}
				if s.name == "mcprt" && cpuprofile != "" {
					argv = append(slices.Clone(argv), "-cpuprofile", filepath.Join(cpuprofile, "mcprt-"+era+".pprof"))
				}
				fmt.Fprintf(os.Stderr, "compare: round %d/%d: %s era: %s\n", r+1, rounds, era, s.name)
				res, raw, err := benchURL(b, argv, era, dur, ks)
				if err != nil {
					res = &httpResult{Failure: err.Error()}
				}
				if res.Failure != "" {
					fmt.Fprintf(os.Stderr, "compare: %s (%s) failed: %s\n", s.name, era, res.Failure)
				}
				if out != "" && raw != nil {
					name := filepath.Join(out, fmt.Sprintf("http-%s-%s-round%d.json", era, s.name, r+1))
					if err := os.WriteFile(name, raw, 0o644); err != nil {
						return err
					}
				}
				results[era+"/"+s.name] = append(results[era+"/"+s.name], res)
			}
		}
	}

	fmt.Printf("mcprt %s, %s, %s/%s, %d CPUs; Streamable HTTP, mcprt bench -url -pid, %d round(s), %v per K, fresh server per era; %.0f s\n\n",
		commit(b.root), goruntime.Version(), goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU(),
		rounds, dur, time.Since(started).Seconds())
	printHTTPTable(os.Stdout, results, kList)
	fmt.Println()
	return runWrk(b, dur, wrkConns)
}

func parseKs(ks string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(ks, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("-k %q: want depths, comma-separated", ks)
		}
		out = append(out, k)
	}
	return out, nil
}

type httpRow struct {
	label  string
	unit   string
	higher bool
	get    func(*httpResult) (float64, bool)
}

func httpRows(era string, ks []int) []httpRow {
	name := map[string]string{"legacy": "legacy", "modern": "2026-07-28"}[era]
	var rs []httpRow
	for _, k := range ks {
		ph := func(f func(i int, r *httpResult) float64) func(*httpResult) (float64, bool) {
			return func(r *httpResult) (float64, bool) {
				i, ok := r.phase(k)
				if !ok {
					return 0, false
				}
				return f(i, r), true
			}
		}
		rs = append(rs,
			httpRow{fmt.Sprintf("%s, K=%d: req/s", name, k), "", true, ph(func(i int, r *httpResult) float64 { return r.Phases[i].ReqPerSec })},
			httpRow{fmt.Sprintf("%s, K=%d: p50", name, k), "µs", false, ph(func(i int, r *httpResult) float64 { return r.Phases[i].P50Us })},
			httpRow{fmt.Sprintf("%s, K=%d: p99", name, k), "µs", false, ph(func(i int, r *httpResult) float64 { return r.Phases[i].P99Us })},
			httpRow{fmt.Sprintf("%s, K=%d: server CPU/request", name, k), "µs", false, ph(func(i int, r *httpResult) float64 { return r.Phases[i].CPUUsPerCall })},
		)
	}
	return append(rs, httpRow{name + ": peak RSS (VmHWM)", "MiB", false, func(r *httpResult) (float64, bool) {
		if r == nil {
			return 0, false
		}
		return r.PeakRSSKiB / 1024, r.PeakRSSKiB > 0
	}}, httpRow{name + ": peak anonymous memory (RssAnon)", "MiB", false, func(r *httpResult) (float64, bool) {
		if r == nil {
			return 0, false
		}
		return r.PeakAnonKiB / 1024, r.PeakAnonKiB > 0
	}})
}

// medianHTTP of a figure over the rounds that measured it without failing.
func medianHTTP(rs []*httpResult, get func(*httpResult) (float64, bool)) (float64, bool) {
	var vs []float64
	for _, r := range rs {
		if r.Failure != "" {
			continue
		}
		if v, ok := get(r); ok && v > 0 {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2, true
	}
	return vs[len(vs)/2], true
}

// printHTTPTable writes the table (each server's figure as a ratio to
// limit's, and the figure in parentheses), then checks issue 17's goals.
func printHTTPTable(w io.Writer, results map[string][]*httpResult, ks []int) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprint(bw, "| figure | better | limit |")
	for _, s := range httpServers[1:] {
		fmt.Fprintf(bw, " %s ÷ limit |", s.name)
	}
	fmt.Fprint(bw, "\n|---|:-:|---:|")
	for range httpServers[1:] {
		fmt.Fprint(bw, "---:|")
	}
	fmt.Fprintln(bw)
	var behind []string // rows where mcprt is behind an SDK
	goals := map[string]string{}
	for _, era := range eras {
		for _, rw := range httpRows(era, ks) {
			base, ok := medianHTTP(results[era+"/limit"], rw.get)
			better := "lower"
			if rw.higher {
				better = "higher"
			}
			fmt.Fprintf(bw, "| %s | %s |", rw.label, better)
			if ok {
				fmt.Fprintf(bw, " %s |", strings.TrimSpace(num(base)+" "+rw.unit))
			} else {
				fmt.Fprint(bw, " — |")
			}
			mine, mok := medianHTTP(results[era+"/mcprt"], rw.get)
			for _, s := range httpServers[1:] {
				v, vok := medianHTTP(results[era+"/"+s.name], rw.get)
				switch {
				case !vok || !ok:
					fmt.Fprint(bw, " — |")
				case s.name == "mcprt":
					fmt.Fprintf(bw, " **%s×** (%s) |", ratio(v/base), num(v))
				default:
					fmt.Fprintf(bw, " %s× (%s) |", ratio(v/base), num(v))
				}
				if s.name != "mcprt" && vok && mok && (rw.higher && mine < v || !rw.higher && mine > v) {
					behind = append(behind, fmt.Sprintf("%s (%s)", rw.label, s.name))
				}
			}
			fmt.Fprintln(bw)
			if ok && mok && len(ks) > 0 {
				last := fmt.Sprintf("K=%d: ", ks[len(ks)-1])
				switch {
				case strings.Contains(rw.label, last+"req/s"):
					goals[era+" req/s"] = verdict(mine/base, 0.8, true)
				case strings.Contains(rw.label, last+"server CPU"):
					goals[era+" cpu"] = verdict(mine/base, 1.3, false)
				}
			}
		}
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "Latencies and CPU in µs, RSS in MiB; the figures in parentheses are each server's own.")
	if len(ks) > 0 {
		k := ks[len(ks)-1]
		for _, era := range eras {
			fmt.Fprintf(bw, "Goal, %s, K=%d: mcprt throughput ≥ 0.8× limit's: %s; CPU per request ≤ 1.3× limit's: %s.\n",
				era, k, orDash(goals[era+" req/s"]), orDash(goals[era+" cpu"]))
		}
	}
	if len(behind) == 0 {
		fmt.Fprintln(bw, "Goal, mcprt ahead of both SDKs in every row: met.")
	} else {
		fmt.Fprintf(bw, "Goal, mcprt ahead of both SDKs in every row: missed in %d: %s.\n", len(behind), strings.Join(behind, "; "))
	}
	for _, era := range eras {
		for _, s := range httpServers {
			for _, r := range results[era+"/"+s.name] {
				if r.Failure != "" {
					fmt.Fprintf(bw, "%s, %s: FAILED: %s\n", s.name, era, r.Failure)
				}
			}
		}
	}
}

func verdict(r, goal float64, higher bool) string {
	if higher && r >= goal || !higher && r <= goal {
		return fmt.Sprintf("%s×, met", ratio(r))
	}
	return fmt.Sprintf("%s×, MISSED", ratio(r))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// wrkResult is one wrk run.
type wrkResult struct {
	reqPerSec  float64
	requests   float64
	non2xx     float64
	sockErrors string
	cpuUs      float64 // server CPU per request over the whole run
	rssMiB     float64
	err        error
}

// runWrk times stateless 2026-07-28 echo calls with wrk against limit and
// mcprt, one after the other, each started fresh.
func runWrk(b built, dur time.Duration, conns int) error {
	script := filepath.Join(b.benchDir, "wrk", "echo-2026-07-28.lua")
	threads := min(2, goruntime.NumCPU())
	fmt.Printf("wrk -t%d -c%d -d%v -s wrk/echo-2026-07-28.lua (stateless 2026-07-28 tools/call echo; servers started fresh):\n\n",
		threads, conns, dur)
	wrk, note := findWrk()
	if wrk == "" {
		fmt.Printf("wrk: skipped: %s\n", note)
		return nil
	}
	names := []string{"limit", "mcprt"}
	res := map[string]*wrkResult{}
	for _, name := range names {
		i := slices.IndexFunc(httpServers, func(s httpServer) bool { return s.name == name })
		if i < 0 {
			continue
		}
		fmt.Fprintf(os.Stderr, "compare: wrk: %s\n", name)
		res[name] = wrkOne(b, httpServers[i].argv("modern"), wrk, script, threads, conns, dur)
	}
	lim, my := res["limit"], res["mcprt"]
	if lim == nil || my == nil {
		return nil
	}
	for _, n := range names {
		if r := res[n]; r.err != nil {
			fmt.Printf("wrk against %s: FAILED: %v\n", n, r.err)
		}
	}
	if lim.err != nil || my.err != nil {
		return nil
	}
	fmt.Println("| wrk figure | better | limit | mcprt ÷ limit |")
	fmt.Println("|---|:-:|---:|---:|")
	fmt.Printf("| req/s | higher | %s | **%s×** (%s) |\n", num(lim.reqPerSec), ratio(my.reqPerSec/lim.reqPerSec), num(my.reqPerSec))
	fmt.Printf("| server CPU/request | lower | %s µs | **%s×** (%s) |\n", num(lim.cpuUs), ratio(my.cpuUs/lim.cpuUs), num(my.cpuUs))
	fmt.Printf("| peak RSS (VmHWM) | lower | %s MiB | **%s×** (%s) |\n", num(lim.rssMiB), ratio(my.rssMiB/lim.rssMiB), num(my.rssMiB))
	fmt.Printf("| requests; non-2xx | | %.0f; %.0f | %.0f; %.0f |\n", lim.requests, lim.non2xx, my.requests, my.non2xx)
	if lim.sockErrors != "" || my.sockErrors != "" {
		fmt.Printf("\nwrk socket errors: limit: %s; mcprt: %s\n", orDash(lim.sockErrors), orDash(my.sockErrors))
	}
	return nil
}

// findWrk looks wrk up, and installs Debian's with apt-get when it is
// missing and we are root. note says why it is missing.
func findWrk() (path, note string) {
	if p, err := exec.LookPath("wrk"); err == nil {
		return p, ""
	}
	if os.Geteuid() != 0 {
		return "", "wrk is not installed (apt-get install wrk) and this is not root"
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", "wrk is not installed and there is no apt-get"
	}
	fmt.Fprintln(os.Stderr, "compare: installing wrk with apt-get")
	install := func() error {
		cmd := exec.Command("apt-get", "install", "-y", "wrk")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.Run()
	}
	if install() != nil {
		update := exec.Command("apt-get", "update")
		update.Stdout, update.Stderr = os.Stderr, os.Stderr
		_ = update.Run()
		if err := install(); err != nil {
			return "", "apt-get install wrk failed: " + err.Error()
		}
	}
	if p, err := exec.LookPath("wrk"); err == nil {
		return p, ""
	}
	return "", "wrk not found after apt-get install wrk"
}

var (
	reqPerSecRE = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	requestsRE  = regexp.MustCompile(`(\d+) requests in`)
	non2xxRE    = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	sockErrRE   = regexp.MustCompile(`Socket errors:\s*(.*)`)
)

func wrkOne(b built, argv []string, wrk, script string, threads, conns int, dur time.Duration) *wrkResult {
	argv = append([]string{b.path(argv[0])}, argv[1:]...)
	p, err := startServer(argv)
	if err != nil {
		return &wrkResult{err: err}
	}
	defer p.stop()
	if err := checkEcho(p.url); err != nil {
		return &wrkResult{err: fmt.Errorf("the request wrk sends is not answered right: %w", err)}
	}
	cpu0 := procCPU(p.pid())
	cmd := exec.Command(wrk, "-t"+strconv.Itoa(threads), "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(max(1, int(dur.Seconds())))+"s",
		"-s", script, p.url)
	outb, err := cmd.CombinedOutput()
	cpu1 := procCPU(p.pid())
	res := &wrkResult{rssMiB: procStatus(p.pid(), "VmHWM") / 1024}
	if err != nil {
		res.err = fmt.Errorf("wrk: %v: %s", err, bytes.TrimSpace(outb))
		return res
	}
	o := string(outb)
	fmt.Fprint(os.Stderr, o)
	m := reqPerSecRE.FindStringSubmatch(o)
	n := requestsRE.FindStringSubmatch(o)
	if m == nil || n == nil {
		res.err = fmt.Errorf("wrk's output has no Requests/sec: %s", o)
		return res
	}
	res.reqPerSec, _ = strconv.ParseFloat(m[1], 64)
	res.requests, _ = strconv.ParseFloat(n[1], 64)
	if m := non2xxRE.FindStringSubmatch(o); m != nil {
		res.non2xx, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := sockErrRE.FindStringSubmatch(o); m != nil {
		res.sockErrors = strings.TrimSpace(m[1])
	}
	if res.requests > 0 {
		res.cpuUs = float64(cpu1-cpu0) / float64(time.Microsecond) / res.requests
	}
	return res
}

// checkEcho sends wrk's request once and checks the answer.
func checkEcho(url string) error {
	body0 := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body0))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body))
	}
	// A JSON body, or the data of one SSE event.
	if i := bytes.Index(body, []byte("data:")); i >= 0 {
		body = body[i+len("data:"):]
		if j := bytes.IndexByte(body, '\n'); j >= 0 {
			body = body[:j]
		}
	}
	var r struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(body), &r); err != nil {
		return fmt.Errorf("%w: %s", err, body)
	}
	if len(r.Result.Content) != 1 || r.Result.Content[0].Text != "hi" {
		return errors.New("echo answered " + string(body))
	}
	return nil
}
