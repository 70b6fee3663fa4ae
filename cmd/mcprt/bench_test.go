package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/loadgen"
	"github.com/mcprt/mcprt/cmd/mcprt/internal/loadgen/loadgentest"
)

// benchHang only turns a hang into a failure; no test asserts on time.
const benchHang = 2 * time.Minute

// buildBench builds mcprt into dir, with the race detector when the tests
// have it, so the child processes are checked too.
func buildBench(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "mcprt")
	args := []string{"build", "-o", path}
	if benchRaceEnabled() {
		args = append(args, "-race")
	}
	out, err := exec.Command(benchGoTool(), append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("building mcprt: %v\n%s", err, out)
	}
	return path
}

// builtVersion is the version the mcprt at bin says it is: what
// "mcprt version" prints between "mcprt " and the " (go…, os/arch)" tail.
func builtVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	line := strings.TrimSpace(string(out))
	v, ok := strings.CutPrefix(line, "mcprt ")
	if i := strings.LastIndex(v, " ("); ok && i > 0 {
		return v[:i]
	}
	t.Fatalf("%s version printed %q, want \"mcprt VERSION (GOVERSION, OS/ARCH)\"", bin, line)
	return ""
}

func benchRaceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

// benchGoTool finds the go command: go test puts GOROOT/bin first on PATH.
func benchGoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}

// runBench runs the built mcprt with args and returns its stdout, stderr
// and exit status.
func runBench(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(benchHang):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("mcprt %s hung; stderr:\n%s", strings.Join(args, " "), errb.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestBenchBinary runs the built mcprt bench: against mcprt serve, with
// short phases, checking that every figure is there and plausible; and
// against a server that dies mid-run.
func TestBenchBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcprt and spawns servers")
	}
	bin := buildBench(t, t.TempDir())
	// The version the child reports is the one its own build recorded:
	// go build stamps a pseudo-version from the clone's commit, go test
	// does not, so the test binary's idea of the version differs from
	// the built binary's on a machine with a fresh build cache. Ask the
	// binary rather than assume.
	want := "mcprt-reference " + builtVersion(t, bin)
	for _, era := range []string{loadgen.EraLegacy, loadgen.EraModern} {
		t.Run("serve/"+era, func(t *testing.T) {
			stdout, stderr, code := runBench(t, bin, nil, "bench", "-json", "-era", era, "-duration", "200ms", "-cold", "3", "--", bin, "serve")
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			}
			var res loadgen.Result
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("stdout is not the JSON result: %v\n%s", err, stdout)
			}
			positive := func(name string, v float64) {
				t.Helper()
				if !(v > 0) {
					t.Errorf("%s = %v, want > 0", name, v)
				}
			}
			// CPU comes from /proc in 10 ms ticks: over a 160 ms window on
			// a loaded machine a server can be charged none. Zero is a
			// reading; a negative or NaN one is a bug.
			cpu := func(name string, v float64) {
				t.Helper()
				if !(v >= 0) {
					t.Errorf("%s = %v, want >= 0", name, v)
				}
			}
			if res.Server != want || res.Call != `tools/call echo {"text":"hi"}` || res.Era != era {
				t.Errorf("server %q, call %q, era %q; want server %q, call %q, era %q",
					res.Server, res.Call, res.Era, want, `tools/call echo {"text":"hi"}`, era)
			}
			if c := res.ColdStart; c == nil || c.Runs != 3 {
				t.Fatalf("cold start: %+v", c)
			} else {
				positive("cold p50", c.P50Ms)
				if c.MinMs > c.P50Ms || c.P50Ms > c.MaxMs {
					t.Errorf("cold start min/p50/max out of order: %+v", c)
				}
			}
			positive("idle RSS", float64(res.IdleRSSKiB))
			positive("peak RSS", float64(res.PeakRSSKiB))
			if res.PeakRSSKiB < res.IdleRSSKiB {
				t.Errorf("peak RSS %d < idle RSS %d", res.PeakRSSKiB, res.IdleRSSKiB)
			}
			if s := res.Sequential; s == nil {
				t.Fatal("no sequential figures")
			} else {
				positive("sequential calls", float64(s.Calls))
				positive("sequential p50", s.P50Us)
				cpu("sequential CPU per call", s.CPUUsPerCall)
				if s.P50Us > s.P90Us || s.P90Us > s.P99Us || s.P99Us > s.MaxUs {
					t.Errorf("percentiles out of order: %+v", s)
				}
			}
			if len(res.Pipelined) != 3 {
				t.Fatalf("pipelined: %+v", res.Pipelined)
			}
			for i, k := range []int{1, 16, 256} {
				p := res.Pipelined[i]
				if p.K != k {
					t.Errorf("pipelined[%d].K = %d, want %d", i, p.K, k)
				}
				positive("pipelined calls", float64(p.Calls))
				positive("pipelined req/s", p.ReqPerSec)
				cpu("pipelined CPU per call", p.CPUUsPerCall)
			}
			if len(res.Payload) != 2 || res.Payload[0].Bytes != 64<<10 || res.Payload[1].Bytes != 1<<20 {
				t.Fatalf("payload: %+v", res.Payload)
			}
			for _, p := range res.Payload {
				positive("payload MiB/s", p.MiBPerSec)
				positive("payload RTT", p.RTTP50Ms)
			}
			if res.ExitAfterEOF != "exit 0" || res.Failure != "" {
				t.Errorf("exit after EOF %q, failure %q", res.ExitAfterEOF, res.Failure)
			}
			if !strings.Contains(stderr, "mcprt bench: pipelined") {
				t.Errorf("no progress on stderr:\n%s", stderr)
			}
		})
	}
	t.Run("serve/auto", func(t *testing.T) {
		// mcprt serve speaks 2026-07-28: -era auto finds it before the run.
		svg := filepath.Join(t.TempDir(), "latency.svg")
		stdout, stderr, code := runBench(t, bin, nil, "bench", "-json", "-era", "auto", "-duration", "100ms", "-skip", "cold,pipe,payload", "-svg", svg, "--", bin, "serve")
		var res loadgen.Result
		if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res.Era != loadgen.EraModern || res.Version != "2026-07-28" || res.Sequential == nil {
			t.Errorf("exit %d, era %q, version %q; stderr:\n%s\nstdout:\n%s", code, res.Era, res.Version, stderr, stdout)
		}
		checkLatencySVG(t, svg, "seq")
	})
	t.Run("dying server", func(t *testing.T) { testBenchDyingServer(t, bin) })
}

// TestBenchHelperServer is not a test: it is the fake server when the test
// binary runs itself as a child.
func TestBenchHelperServer(t *testing.T) {
	loadgentest.ServeIfChild()
	t.Skip("only runs as a child process")
}

// testBenchDyingServer: a server that exits in the middle of the run makes
// bench fail with status 1, still printing what it measured.
func testBenchDyingServer(t *testing.T, bin string) {
	env := append(os.Environ(), loadgentest.EnvVar+"=die-after=100")
	stdout, stderr, code := runBench(t, bin, env, "bench", "-cold", "0", "-duration", "10s", "--", os.Args[0], "-test.run=^TestBenchHelperServer$")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"idle RSS", "FAILED: sequential: waiting for a response: the server exited (exit 3)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "mcprt bench: FAILED") {
		t.Errorf("stderr lacks the failure:\n%s", stderr)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, 2, "no server command"},
		{[]string{"-k", "0", "--", "x"}, 2, "-k 0"},
		{[]string{"-k", "a", "--", "x"}, 2, "-k \"a\""},
		{[]string{"-era", "future", "--", "x"}, 2, "-era"},
		{[]string{"-protocol", "2030-01-01", "--", "x"}, 2, `-protocol "2030-01-01"`},
		{[]string{"-era", "modern", "-protocol", "2025-06-18", "--", "x"}, 2, "not of the modern era"},
		{[]string{"-args", "[1]", "--", "x"}, 2, "JSON object"},
		{[]string{"-payload", "1G", "--", "x"}, 2, "-payload"},
		{[]string{"-skip", "warp", "--", "x"}, 2, "-skip"},
		{[]string{"-ping", "-tool", "echo", "--", "x"}, 2, "-ping"},
		{[]string{"-duration", "0s", "--", "x"}, 2, "-duration"},
		{[]string{"-nope", "--", "x"}, 2, "flag provided but not defined"},
	} {
		var stdout, stderr bytes.Buffer
		if code := bench(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("bench %q: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("bench %q wrote to stdout: %q", tc.args, stdout.String())
		}
	}
}

// -era and -protocol mean what they mean on every verb: -protocol implies
// its era and is required of the server; auto is left for a probe.
func TestBenchProtocolFlags(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		era, version string
		require      bool
	}{
		{nil, loadgen.EraLegacy, "", false},
		{[]string{"-era", "modern"}, loadgen.EraModern, "", false},
		{[]string{"-protocol", "2026-07-28"}, loadgen.EraModern, "2026-07-28", true},
		{[]string{"-era", "legacy", "-protocol", "2024-11-05"}, loadgen.EraLegacy, "2024-11-05", true},
		{[]string{"-era", "auto", "-protocol", "2025-11-25"}, loadgen.EraLegacy, "2025-11-25", true},
		{[]string{"-era", "auto"}, "auto", "", false},
	} {
		var stdout, stderr bytes.Buffer
		cfg, _, _, _, err := benchFlags(append(tc.args, "--", "x"), &stdout, &stderr)
		if err != nil || cfg.Era != tc.era || cfg.Version != tc.version || cfg.RequireVersion != tc.require {
			t.Errorf("bench %q: era %q version %q require %v, err %v; want %q %q %v",
				tc.args, cfg.Era, cfg.Version, cfg.RequireVersion, err, tc.era, tc.version, tc.require)
		}
	}
}

// Every flag is explained in --help, and the phases too.
func TestBenchHelpExplainsEveryFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := bench([]string{"-help"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	help := stdout.String()
	for _, name := range []string{"-era", "-protocol", "-tool", "-args", "-ping", "-k", "-duration", "-cold", "-payload", "-skip", "-timeout", "-json", "-q"} {
		if !strings.Contains(help, "  "+name+" ") && !strings.Contains(help, "  "+name+"\n") && !strings.Contains(help, "  "+name+"\t") {
			t.Errorf("--help does not explain %s:\n%s", name, help)
		}
	}
	for _, phase := range []string{"cold", "idle", "seq", "pipe", "payload", "peak"} {
		if !strings.Contains(help, "  "+phase+" ") {
			t.Errorf("--help does not describe phase %s", phase)
		}
	}
}

// Progress: plain lines per phase for logs; on a terminal one rewritten
// line, live figures included, never longer than a narrow terminal.
func TestBenchProgress(t *testing.T) {
	var plain bytes.Buffer
	p := newProgress(&plain, false)
	p.show("phase one", false)
	p.show("12 req/s", true)
	p.clear()
	if got := plain.String(); got != "mcprt bench: phase one\n" {
		t.Errorf("plain progress %q", got)
	}

	var tty bytes.Buffer
	p = &progress{w: &tty, tty: true}
	p.show(strings.Repeat("x", 200), false)
	p.show("12 req/s", true)
	p.clear()
	lines := strings.Split(tty.String(), "\r")
	if len(lines) != 4 || lines[0] != "" || lines[3] != "\x1b[K" {
		t.Fatalf("terminal progress %q", tty.String())
	}
	if n := len([]rune(strings.TrimSuffix(lines[1], "\x1b[K"))); n > 79 {
		t.Errorf("a terminal line of %d characters", n)
	}
	if lines[2] != "mcprt bench: 12 req/s\x1b[K" {
		t.Errorf("live line %q", lines[2])
	}

	var quiet bytes.Buffer
	p = newProgress(&quiet, true)
	p.show("phase", false)
	p.clear()
	if quiet.Len() != 0 {
		t.Errorf("-q progress %q", quiet.String())
	}
}
