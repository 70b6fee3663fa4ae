// Command compare measures mcprt beside other Go MCP servers with one load
// generator, `mcprt bench`, and prints one table of ratios.
//
//	cd test/bench && go run ./cmd/compare
//
// It builds mcprt from this repository (the reference server, `mcprt
// serve`) and three peers from this module: limit (a hand-written
// encoding/json loop, the yardstick), go-sdk (the official SDK) and mcp-go.
// Then it runs `mcprt bench -json` against each in turn, round after round
// (the order rotates each round), and prints every figure as a ratio to
// limit's in the same round set: the machine's noise moves absolute times
// from run to run, ratios much less. With -rounds above 1 each figure is
// the median over the rounds.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

const usage = `Usage: go run ./cmd/compare [flags]   (from test/bench)

Builds mcprt and the peer servers (limit, go-sdk, mcp-go), runs
mcprt bench against each and prints one table: every figure as a ratio
to limit's. Progress goes to stderr, the table to stdout.

-http measures Streamable HTTP instead: mcprt serve -http and HTTP peers
(limithttp, gosdkhttp, mcpgohttp), each started fresh for each era, timed
by mcprt bench -url -pid with -k clients; then wrk on stateless
2026-07-28 echo calls against mcprt and limit (wrk installed with apt-get
when missing and run as root; skipped with a note otherwise).
-gateway measures mcprt gateway (one mcprt serve backend) beside mcprt
serve alone and beside a line relay in front of mcprt serve (the floor of
any process in the path): sequential round trip and K=256 throughput,
gateway ÷ direct.

Flags:
`

// server is one column of the table.
type server struct {
	name string
	argv []string // argv[0] relative to the build directory
}

var servers = []server{
	{"limit", []string{"limit"}},
	{"mcprt", []string{"mcprt", "serve"}},
	{"go-sdk", []string{"gosdk"}},
	{"mcp-go", []string{"mcpgo"}},
}

func main() {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	dur := fs.Duration("duration", 2*time.Second, "length of each timed phase (mcprt bench -duration)")
	cold := fs.Int("cold", 20, "fresh processes timed for the cold start (mcprt bench -cold)")
	ks := fs.String("k", "1,16,256", "in-flight depths (mcprt bench -k)")
	payload := fs.String("payload", "64K,1M", "echo sizes (mcprt bench -payload)")
	rounds := fs.Int("rounds", 1, "rounds; each figure is the median over them")
	only := fs.String("servers", "", "comma-separated subset of limit,mcprt,go-sdk,mcp-go (limit is always run)")
	out := fs.String("out", "", "`directory` to keep each run's JSON in (default: none)")
	httpMode := fs.Bool("http", false, "measure Streamable HTTP (mcprt serve -http and HTTP peers, both eras, and wrk) instead of stdio")
	gatewayMode := fs.Bool("gateway", false, "measure mcprt gateway's hop (gateway ÷ direct) instead of the stdio table")
	wrkConns := fs.Int("wrk-c", 256, "with -http, wrk's connections")
	cpuprofile := fs.String("cpuprofile", "", "with -http, write mcprt serve's CPU profile of each era into `directory` (mcprt-legacy.pprof, mcprt-modern.pprof)")
	fs.Parse(os.Args[1:])
	if *rounds < 1 || fs.NArg() > 0 || *cpuprofile != "" && !*httpMode {
		fs.Usage()
		os.Exit(2)
	}
	if *only != "" {
		want := strings.Split(*only, ",")
		servers = slices.DeleteFunc(servers, func(s server) bool {
			return s.name != "limit" && !slices.Contains(want, s.name)
		})
		httpServers = slices.DeleteFunc(httpServers, func(s httpServer) bool {
			return s.name != "limit" && !slices.Contains(want, s.name)
		})
	}
	err := func() error {
		b, err := build(*out)
		if err != nil {
			return err
		}
		defer os.RemoveAll(b.bin)
		if *httpMode {
			if err := runHTTP(b, *dur, *ks, *rounds, *out, *wrkConns, *cpuprofile); err != nil {
				return err
			}
		}
		if *gatewayMode {
			if *httpMode {
				fmt.Println()
			}
			if err := runGateway(b, *dur, *rounds, *out); err != nil {
				return err
			}
		}
		if *httpMode || *gatewayMode {
			return nil
		}
		return run(b, *dur, *cold, *ks, *payload, *rounds, *out)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// built is where build put the binaries, and the repository they came from.
type built struct {
	root, benchDir, bin string
}

func (b built) path(name string) string { return filepath.Join(b.bin, name) }

// build builds mcprt and every server of ./servers into a temporary
// directory (the caller removes it), and makes out when it is given.
func build(out string) (built, error) {
	var b built
	var err error
	if b.benchDir, err = moduleDir("github.com/mcprt/mcprt/test/bench"); err != nil {
		return b, err
	}
	if b.root, err = moduleDir("github.com/mcprt/mcprt"); err != nil {
		return b, err
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return b, err
		}
	}
	if b.bin, err = os.MkdirTemp("", "mcprt-compare-"); err != nil {
		return b, err
	}
	fmt.Fprintln(os.Stderr, "compare: building mcprt and the peers")
	if err := goCmd(b.root, "build", "-o", b.path("mcprt"), "./cmd/mcprt"); err != nil {
		os.RemoveAll(b.bin)
		return b, fmt.Errorf("building mcprt: %w", err)
	}
	if err := goCmd(b.benchDir, "build", "-o", b.bin+string(filepath.Separator), "./servers/..."); err != nil {
		os.RemoveAll(b.bin)
		return b, fmt.Errorf("building the peers: %w", err)
	}
	return b, nil
}

func run(b built, dur time.Duration, cold int, ks, payload string, rounds int, out string) error {
	root, bin := b.root, b.bin
	flags := []string{"-json", "-q", "-duration", dur.String(), "-cold", strconv.Itoa(cold), "-k", ks, "-payload", payload}
	results := map[string][]*result{}
	started := time.Now()
	for r := range rounds {
		for i := range servers {
			s := servers[(i+r)%len(servers)]
			fmt.Fprintf(os.Stderr, "compare: round %d/%d: %s\n", r+1, rounds, s.name)
			argv := append([]string{filepath.Join(bin, s.argv[0])}, s.argv[1:]...)
			res, raw, err := bench(filepath.Join(bin, "mcprt"), flags, argv)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if res.Failure != "" {
				fmt.Fprintf(os.Stderr, "compare: %s failed: %s\n", s.name, res.Failure)
			}
			if out != "" {
				name := filepath.Join(out, fmt.Sprintf("%s-round%d.json", s.name, r+1))
				if err := os.WriteFile(name, raw, 0o644); err != nil {
					return err
				}
			}
			results[s.name] = append(results[s.name], res)
		}
	}

	fmt.Printf("mcprt %s, %s, %s/%s, %d CPUs; %d round(s), %v per phase, %d cold starts; %.0f s in all\n\n",
		commit(root), goruntime.Version(), goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU(),
		rounds, dur, cold, time.Since(started).Seconds())
	printTable(os.Stdout, results)
	return nil
}

// bench runs `mcprt bench` against argv and decodes its JSON. A server that
// fails the run still gives what was measured, with Failure set.
func bench(mcprt string, flags, argv []string) (*result, []byte, error) {
	args := append(append([]string{"bench"}, flags...), "--")
	cmd := exec.Command(mcprt, append(args, argv...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res result
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		return nil, nil, fmt.Errorf("mcprt bench: %v; %s", err, strings.TrimSpace(stderr.String()))
	}
	return &res, stdout.Bytes(), nil
}

// result is the part of mcprt bench's JSON that the table uses.
type result struct {
	Server    string `json:"server"`
	ColdStart *struct {
		P50Ms float64 `json:"p50_ms"`
	} `json:"cold_start"`
	IdleRSSKiB float64 `json:"idle_rss_kib"`
	Sequential *struct {
		P50Us float64 `json:"p50_us"`
		P99Us float64 `json:"p99_us"`
	} `json:"sequential"`
	Pipelined []struct {
		K            int     `json:"k"`
		ReqPerSec    float64 `json:"req_per_sec"`
		CPUUsPerCall float64 `json:"cpu_us_per_call"`
	} `json:"pipelined"`
	Payload []struct {
		Bytes     int     `json:"bytes"`
		MiBPerSec float64 `json:"mib_per_sec"`
	} `json:"payload"`
	PeakRSSKiB   float64 `json:"peak_rss_kib"`
	ExitAfterEOF string  `json:"exit_after_eof"`
	Failure      string  `json:"failure"`
}

// row is one figure: how to read it from a result, its unit, and whether
// more is better.
type row struct {
	label  string
	unit   string
	higher bool
	get    func(*result) (float64, bool)
}

func rows(sample *result) []row {
	rs := []row{
		{"cold start → initialize reply, p50", "ms", false, func(r *result) (float64, bool) {
			return get(r.ColdStart != nil, func() float64 { return r.ColdStart.P50Ms })
		}},
		{"idle RSS after initialize", "MiB", false, func(r *result) (float64, bool) { return r.IdleRSSKiB / 1024, r.IdleRSSKiB > 0 }},
		{"sequential echo round trip, p50", "µs", false, func(r *result) (float64, bool) {
			return get(r.Sequential != nil, func() float64 { return r.Sequential.P50Us })
		}},
		{"sequential echo round trip, p99", "µs", false, func(r *result) (float64, bool) {
			return get(r.Sequential != nil, func() float64 { return r.Sequential.P99Us })
		}},
	}
	for i, p := range sample.Pipelined {
		rs = append(rs, row{fmt.Sprintf("pipelined echo, K=%d in flight", p.K), "req/s", true, func(r *result) (float64, bool) {
			return get(i < len(r.Pipelined), func() float64 { return r.Pipelined[i].ReqPerSec })
		}})
	}
	for i, p := range sample.Pipelined {
		rs = append(rs, row{fmt.Sprintf("server CPU per call, K=%d", p.K), "µs", false, func(r *result) (float64, bool) {
			return get(i < len(r.Pipelined), func() float64 { return r.Pipelined[i].CPUUsPerCall })
		}})
	}
	for i, p := range sample.Payload {
		rs = append(rs, row{"echo of " + sizeName(p.Bytes), "MiB/s", true, func(r *result) (float64, bool) {
			return get(i < len(r.Payload), func() float64 { return r.Payload[i].MiBPerSec })
		}})
	}
	return append(rs, row{"peak RSS", "MiB", false, func(r *result) (float64, bool) { return r.PeakRSSKiB / 1024, r.PeakRSSKiB > 0 }})
}

func get(ok bool, f func() float64) (float64, bool) {
	if !ok {
		return 0, false
	}
	return f(), true
}

// median of a figure over the rounds that measured it.
func median(rs []*result, get func(*result) (float64, bool)) (float64, bool) {
	var vs []float64
	for _, r := range rs {
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

// printTable writes the Markdown table: limit's figure, then each other
// server's as a ratio to it (with mcprt's own figure beside its ratio).
func printTable(w io.Writer, results map[string][]*result) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprint(bw, "| figure | better | limit |")
	for _, s := range servers[1:] {
		fmt.Fprintf(bw, " %s ÷ limit |", s.name)
	}
	fmt.Fprint(bw, "\n|---|:-:|---:|")
	for range servers[1:] {
		fmt.Fprint(bw, "---:|")
	}
	fmt.Fprintln(bw)
	for _, rw := range rows(results["limit"][0]) {
		base, ok := median(results["limit"], rw.get)
		better := "lower"
		if rw.higher {
			better = "higher"
		}
		fmt.Fprintf(bw, "| %s | %s |", rw.label, better)
		if ok {
			fmt.Fprintf(bw, " %s %s |", num(base), rw.unit)
		} else {
			fmt.Fprint(bw, " — |")
		}
		for _, s := range servers[1:] {
			v, vok := median(results[s.name], rw.get)
			switch {
			case !vok || !ok:
				fmt.Fprint(bw, " — |")
			case s.name == "mcprt":
				fmt.Fprintf(bw, " **%s×** (%s) |", ratio(v/base), num(v))
			default:
				fmt.Fprintf(bw, " %s× |", ratio(v/base))
			}
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprint(bw, "| after stdin EOF | | ")
	for i, s := range servers {
		var exits []string
		for _, r := range results[s.name] {
			e := r.ExitAfterEOF
			if r.Failure != "" {
				e = "FAILED: " + r.Failure
			}
			if !slices.Contains(exits, e) {
				exits = append(exits, e)
			}
		}
		if i > 0 {
			fmt.Fprint(bw, " ")
		}
		fmt.Fprintf(bw, "%s |", strings.Join(exits, "; "))
	}
	fmt.Fprintln(bw)
}

func ratio(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 0.1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func num(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// moduleDir finds the directory of the module named path: the working
// directory or one of its parents.
func moduleDir(path string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(b) == path {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("module %s not found in the working directory or above it: run this from test/bench", path)
		}
		dir = parent
	}
}

func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// goCmd runs the go command in dir.
func goCmd(dir string, args ...string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(goruntime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// commit names the repository's commit, with "+changes" when the work
// tree differs from it.
func commit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "(no git commit)"
	}
	c := strings.TrimSpace(string(out))
	if err := exec.Command("git", "-C", root, "diff", "--quiet", "HEAD", "--", ".").Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			c += "+changes"
		}
	}
	return c
}
