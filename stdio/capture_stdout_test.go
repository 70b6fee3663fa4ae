//go:build unix

package stdio

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests in this file take the real fd 1, so each runs its scenario in
// a fresh copy of the test binary (as the standard library's tests do) and
// reads back what the capture delivered from a file.

const (
	helperScenario = "MCPRT_CAPTURE_SCENARIO"
	helperResult   = "MCPRT_CAPTURE_RESULT"
)

// helperResultRecord is one line of the result file: L (complete line), P
// (partial), D (dropped lines), E (Stop's error), X (a scenario failure).
type helperResultRecord struct {
	kind byte
	data string
}

// runScenario runs scenario in a child test binary and returns its stdout,
// its stderr and the records it wrote.
func runScenario(t *testing.T, scenario string) (stdout, stderr string, recs []helperResultRecord) {
	t.Helper()
	result := filepath.Join(t.TempDir(), "result")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCaptureHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperScenario+"="+scenario, helperResult+"="+result)
	if os.Getenv("GORACE") == "" {
		// The race runtime otherwise sleeps a second at exit.
		cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper %s: %v\nstdout:\n%s\nstderr:\n%s", scenario, err, out.String(), errOut.String())
	}
	f, err := os.Open(result)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 || line[1] != '\t' {
			t.Fatalf("bad result line %q", line)
		}
		rec := helperResultRecord{line[0], line[2:]}
		if rec.kind == 'X' {
			t.Fatalf("helper %s: %s\nstderr:\n%s", scenario, rec.data, errOut.String())
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), recs
}

// TestCaptureHelperProcess is not a test: it is the body of the child
// processes the fd 1 tests start.
func TestCaptureHelperProcess(t *testing.T) {
	scenario := os.Getenv(helperScenario)
	if scenario == "" {
		return
	}
	f, err := os.Create(os.Getenv(helperResult))
	if err != nil {
		panic(err)
	}
	w := bufio.NewWriter(f)
	var mu sync.Mutex // deliveries and the scenario's own records
	record := func(kind byte, data string) {
		mu.Lock()
		fmt.Fprintf(w, "%c\t%s\n", kind, data)
		mu.Unlock()
	}
	opts := CaptureOptions{
		// A stall this long is a hang: here no output may be dropped.
		MaxStall: 30 * time.Second,
		Dropped:  func(lines, _ int64) { record('D', strconv.FormatInt(lines, 10)) },
	}
	deliver := func(line []byte, partial bool) {
		if partial {
			record('P', string(line))
		} else {
			record('L', string(line))
		}
	}
	fail := func(format string, args ...any) {
		record('X', fmt.Sprintf(format, args...))
	}
	switch scenario {
	case "goroutines":
		c, err := CaptureStdout(deliver, opts)
		if err != nil {
			fail("%v", err)
			break
		}
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				for i := range 10000 {
					fmt.Println(fmt.Sprintf("g%02d %05d", g, i))
				}
			})
		}
		wg.Wait()
		if err := c.Stop(); err != nil {
			fail("Stop: %v", err)
		}
		fmt.Println("restored")

	case "child":
		c, err := CaptureStdout(deliver, opts)
		if err != nil {
			fail("%v", err)
			break
		}
		cmd := exec.Command("sh", "-c", `echo "child says hi"; i=0; while [ $i -lt 2000 ]; do echo "child $i"; i=$((i+1)); done; printf "child unfinished"`)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fail("child: %v", err)
		}
		if err := c.Stop(); err != nil {
			fail("Stop: %v", err)
		}
		fmt.Println("restored")

	case "claim":
		cl, err := Claim()
		if err != nil {
			fail("%v", err)
			break
		}
		c, err := CaptureStdout(deliver, opts)
		if err != nil {
			fail("%v", err)
			break
		}
		fmt.Println("captured")
		fmt.Fprintln(cl.Out, "protocol")
		if err := c.Stop(); err != nil {
			fail("Stop: %v", err)
		}
		fmt.Println("back on stderr")
		cl.Restore()
		fmt.Println("back on stdout")

	case "held":
		opts.StopWait = 100 * time.Millisecond
		c, err := CaptureStdout(deliver, opts)
		if err != nil {
			fail("%v", err)
			break
		}
		child := exec.Command("sh", "-c", `echo "child started"; exec sleep 60`)
		child.Stdout = os.Stdout
		if err := child.Start(); err != nil {
			fail("child: %v", err)
			break
		}
		fmt.Println("ours")
		// The child's line must be in before Stop; Stop cannot know
		// whether a live holder has more to say.
		for !strings.Contains(readResult(&mu, w, f), "child started") {
			time.Sleep(time.Millisecond)
		}
		err = c.Stop()
		record('E', fmt.Sprint(err))
		fmt.Println("restored")
		child.Process.Kill()
		child.Wait()

	default:
		fail("unknown scenario %q", scenario)
	}
	mu.Lock()
	w.Flush()
	f.Close()
	mu.Unlock()
	// Exit now: the testing package would print to the restored stdout.
	os.Exit(0)
}

func readResult(mu *sync.Mutex, w *bufio.Writer, f *os.File) string {
	mu.Lock()
	defer mu.Unlock()
	w.Flush()
	b, _ := os.ReadFile(f.Name())
	return string(b)
}

func TestCaptureStdoutManyGoroutines(t *testing.T) {
	stdout, _, recs := runScenario(t, "goroutines")
	next := make([]int, 16)
	for _, r := range recs {
		if r.kind != 'L' {
			t.Fatalf("unexpected record %c %q", r.kind, r.data)
		}
		var g, i int
		if _, err := fmt.Sscanf(r.data, "g%02d %05d", &g, &i); err != nil || g < 0 || g >= 16 {
			t.Fatalf("garbled line %q", r.data)
		}
		if i != next[g] {
			t.Fatalf("goroutine %d: line %d arrived when %d was due", g, i, next[g])
		}
		next[g]++
	}
	for g, n := range next {
		if n != 10000 {
			t.Errorf("goroutine %d: %d of 10000 lines arrived", g, n)
		}
	}
	if stdout != "restored\n" {
		t.Fatalf("stdout after Stop is %q, want only what was printed after it", stdout)
	}
}

func TestCaptureStdoutChildProcess(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	stdout, _, recs := runScenario(t, "child")
	var got []string
	for _, r := range recs {
		got = append(got, r.data)
	}
	want := []string{"child says hi"}
	for i := range 2000 {
		want = append(want, fmt.Sprintf("child %d", i))
	}
	// The unfinished line comes by the idle flush or by Stop, whichever
	// is first: its partial flag depends on that, its text does not.
	want = append(want, "child unfinished")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("child output: got %d lines, want %d; first got %q", len(got), len(want), got[:min(3, len(got))])
	}
	if stdout != "restored\n" {
		t.Fatalf("stdout after Stop is %q", stdout)
	}
}

func TestCaptureStdoutAfterClaim(t *testing.T) {
	stdout, stderr, recs := runScenario(t, "claim")
	if len(recs) != 1 || recs[0] != (helperResultRecord{'L', "captured"}) {
		t.Fatalf("records %+v, want the one captured line", recs)
	}
	// The protocol stream is untouched by the capture, Stop puts fd 1 back
	// on stderr as Claim left it, and Restore puts it back on stdout.
	if stdout != "protocol\nback on stdout\n" {
		t.Fatalf("stdout is %q", stdout)
	}
	if !strings.Contains(stderr, "back on stderr\n") || strings.Contains(stderr, "captured") {
		t.Fatalf("stderr is %q", stderr)
	}
}

func TestCaptureStdoutHeldByChild(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	stdout, _, recs := runScenario(t, "held")
	var lines []string
	var stopErr string
	for _, r := range recs {
		switch r.kind {
		case 'L':
			lines = append(lines, r.data)
		case 'E':
			stopErr = r.data
		}
	}
	if stopErr != errCaptureHeld.Error() {
		t.Fatalf("Stop returned %q, want %q", stopErr, errCaptureHeld)
	}
	if got := strings.Join(lines, ","); got != "child started,ours" && got != "ours,child started" {
		t.Fatalf("captured %q", lines)
	}
	if stdout != "restored\n" {
		t.Fatalf("stdout after Stop is %q", stdout)
	}
}
