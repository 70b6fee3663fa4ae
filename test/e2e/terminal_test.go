//go:build linux

package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveHint starts the line mcprt serve writes on stderr when a person
// runs it in a terminal.
const serveHint = "mcprt serve: waiting for an MCP client on stdin"

// TestServeInATerminal: mcprt serve whose stdin is a terminal (a pty that
// script(1) gives it) says once, on stderr, what it waits for and how to
// try it; nothing reaches stdout.
func TestServeInATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to give mcprt serve a terminal")
	}
	dir := t.TempDir()
	outFile, errFile := filepath.Join(dir, "out"), filepath.Join(dir, "err")
	// stdin stays the pty; stdout and stderr go to files, told apart.
	cmdline := shellQuote(binPath) + " serve >" + shellQuote(outFile) + " 2>" + shellQuote(errFile)
	stdin, done, scriptOut := inTerminal(t, cmdline)
	deadline := time.Now().Add(callTimeout)
	for {
		b, _ := os.ReadFile(errFile)
		if strings.Contains(string(b), "\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mcprt serve in a terminal said nothing on stderr in %v (script: %q)", callTimeout, scriptOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The end of script's input hangs the terminal up: serve ends.
	stdin.Close()
	select {
	case <-done:
	case <-time.After(exitTimeout):
		t.Fatalf("mcprt serve did not end when its terminal went away")
	}
	errText, _ := os.ReadFile(errFile)
	lines := strings.Split(strings.TrimSuffix(string(errText), "\n"), "\n")
	if !strings.HasPrefix(lines[0], serveHint) || !strings.Contains(lines[0], "mcprt list -- mcprt serve") {
		t.Errorf("stderr's first line is %q, want the hint", lines[0])
	}
	if strings.Count(string(errText), serveHint) != 1 {
		t.Errorf("the hint is not said exactly once:\n%s", errText)
	}
	if out, _ := os.ReadFile(outFile); len(out) != 0 {
		t.Errorf("stdout got %q", out)
	}
}

// TestServeNotInATerminal: from a pipe or /dev/null, serve says nothing
// of the kind.
func TestServeNotInATerminal(t *testing.T) {
	for name, stdin := range map[string]func() *os.File{
		"pipe":      func() *os.File { r, w, _ := os.Pipe(); w.Close(); return r },
		"/dev/null": func() *os.File { f, _ := os.Open(os.DevNull); return f },
	} {
		in := stdin()
		cmd := exec.Command(binPath, "serve")
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		var out, errb bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &out, &errb
		err := cmd.Run()
		in.Close()
		if err != nil || strings.Contains(errb.String(), serveHint) || out.Len() != 0 {
			t.Errorf("%s: %v, stdout %q, stderr %q", name, err, out.String(), errb.String())
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestReadInATerminal: mcprt read of a binary resource to a terminal
// prints a one-line summary, not the bytes; to a pipe it writes the bytes.
func TestReadInATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to give mcprt read a terminal")
	}
	read := []string{binPath, "read", "mcprt://reference/pixel.png", "--", binPath, "serve"}
	var quoted []string
	for _, a := range read {
		quoted = append(quoted, shellQuote(a))
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "script", "-qec", strings.Join(quoted, " "), "/dev/null")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.Stdin = nil // /dev/null: script passes its end on, after the read is done
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	want := "[mcprt://reference/pixel.png: image/png, 84 bytes of binary content; -o FILE writes them]\r\n"
	if string(out) != want {
		t.Errorf("on a terminal, read printed %q, want %q", out, want)
	}

	piped, err := exec.CommandContext(ctx, read[0], read[1:]...).Output()
	if err != nil || !bytes.HasPrefix(piped, []byte("\x89PNG\r\n")) || len(piped) != 84 {
		t.Errorf("to a pipe, read wrote %q (%v), want the 84 bytes of the PNG", piped, err)
	}
}

// TestGatewayInATerminal: mcprt gateway whose stdin is a terminal says
// once, on stderr, what it waits for and how to try it, as serve does.
func TestGatewayInATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to give mcprt gateway a terminal")
	}
	f := newGateway(t)
	file := f.config(map[string]any{"ref": f.serve("ref", nil)})
	errFile := filepath.Join(f.dir, "err")
	stdin, done, _ := inTerminal(t, shellQuote(binPath)+" gateway -config "+shellQuote(file)+" >/dev/null 2>"+shellQuote(errFile))
	const hint = "mcprt gateway: waiting for an MCP client on stdin"
	deadline := time.Now().Add(callTimeout)
	for {
		b, _ := os.ReadFile(errFile)
		if strings.Contains(string(b), hint) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mcprt gateway in a terminal did not say what it waits for:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stdin.Close()
	select {
	case <-done:
	case <-time.After(exitTimeout):
		t.Fatalf("mcprt gateway did not end when its terminal went away")
	}
	if b, _ := os.ReadFile(errFile); strings.Count(string(b), hint) != 1 || !strings.Contains(string(b), "mcprt list -- mcprt gateway -config FILE") {
		t.Errorf("the hint is not said exactly once, with how to try it:\n%s", b)
	}
}

// inTerminal runs the shell command line with a terminal (a pty that
// script(1) gives it) as its stdin, which the returned pipe feeds; done is
// closed when it has ended, what script printed is in out, and it is
// killed, if still running, when the test ends.
func inTerminal(t *testing.T, cmdline string) (stdin io.WriteCloser, done chan struct{}, out *syncBuffer) {
	t.Helper()
	cmd := exec.Command("script", "-qec", cmdline, "/dev/null")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return stdin, done, out
}
